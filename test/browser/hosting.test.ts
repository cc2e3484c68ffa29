// The console where users reach it: served by the gateway locally (`npm start`),
// and as Cloudflare Pages serves it deployed, its Function forwarding /v1 to the gateway.
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, inject, it } from "vitest";
import { expectAccessible, launchChromium, signIn } from "./browser.ts";
import { ADMIN_EMAIL } from "./global-setup.ts";

const fixture = inject("fixture");
let browser: Browser;
beforeAll(async () => {
  browser = await launchChromium();
});
afterAll(async () => browser?.close());

describe("signing in", () => {
  it("refuses an email that is not a member, then signs the admin in and shows the workspace", async ({ expect }) => {
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(`${fixture.origin}/`);
    await expectAccessible(page, "sign-in");
    await page.getByLabel("Email").fill("stranger@rayrun.test");
    await page.getByRole("button", { name: "Sign in" }).click();
    await expect.poll(() => page.getByRole("alert").textContent()).toContain("(unauthorized)");
    await signIn(page, fixture.origin, ADMIN_EMAIL);
    expect(await page.getByLabel("Workspace", { exact: true }).inputValue()).toBe(fixture.ws);
    // The session is an httpOnly cookie: nothing of it, and no API key, is in the page's storage.
    expect(await page.evaluate("[document.cookie, Object.keys(localStorage), Object.keys(sessionStorage)]")).toEqual(["", [], []]);
    await context.close();
  });

  it("serves the console on Pages and reaches the gateway through the Function's service binding", async ({ expect }) => {
    const context = await browser.newContext();
    const page = await context.newPage();
    const forwarded: number[] = [];
    page.on("response", (res) => res.url().includes("/v1/whoami") && forwarded.push(res.status()));
    await signIn(page, fixture.pagesOrigin, ADMIN_EMAIL);
    expect(forwarded).toContain(200);
    expect(await page.getByLabel("Workspace", { exact: true }).inputValue()).toBe(fixture.ws);
    // A state-changing request from the console's page passes the gateway's CSRF check through the Function:
    // the browser's Origin and Sec-Fetch-Site reach the gateway unchanged.
    const created = await page.evaluate(async (ws) => {
      const res = await fetch(`/v1/workspaces/${ws}/profiles`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ name: `via-pages-${crypto.randomUUID().slice(0, 8)}` }),
      });
      return res.status;
    }, fixture.ws);
    expect(created).toBe(201);
    await context.close();
  });
});
