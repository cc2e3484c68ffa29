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

describe("framing", () => {
  // Round 6: the console could be framed by any page, and another port of the same host is same-site, so its
  // session rode along: an invisible frame of an approval's page turned a visitor's two clicks into an approval.
  it("no page can frame the console, as the gateway serves it or as Pages does", async ({ expect }) => {
    for (const origin of [fixture.origin, fixture.pagesOrigin]) {
      const res = await fetch(`${origin}/`);
      expect([origin, res.headers.get("content-security-policy"), res.headers.get("x-frame-options")]).toEqual([
        origin,
        "frame-ancestors 'none'",
        "DENY",
      ]);
      expect((await fetch(`${origin}/_headers`)).status).not.toBe(200);
    }
    const context = await browser.newContext();
    const page = await context.newPage();
    await signIn(page, fixture.origin, ADMIN_EMAIL);
    const console = `${fixture.origin}/#/w/${fixture.ws}/approvals`;
    await page.setContent(`<iframe src="${console}" style="width:1000px;height:700px"></iframe>`);
    await page.waitForTimeout(1500);
    // Chromium keeps the frame but renders an error page in it: nothing of the console, signed in or not.
    const frame = page.frames()[1]!;
    const shown = await frame.evaluate<string>('document.body?.innerText ?? ""').catch(() => "");
    expect(shown).not.toContain("Approvals");
    expect(await frame.evaluate<string>("location.origin").catch(() => null)).not.toBe(fixture.origin);
    await context.close();
  });
});
