// The console where users reach it: served by the gateway locally (`npm start`),
// and as Cloudflare Pages serves it deployed, its Function forwarding /v1 to the gateway.
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, inject, it } from "vitest";
import { expectAccessible, launchChromium, openScreen, signIn } from "./browser.ts";
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
      expect([origin, res.headers.get("content-security-policy")?.split("; ").at(-1), res.headers.get("x-frame-options")]).toEqual([
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

describe("the content security policy", () => {
  // Defence in depth behind escaping everything an upstream or a hook author controls: only the console's own
  // scripts, workers and requests may run, so markup that slipped through could not run script or send data away.
  it("allows only the console's own scripts and requests, and every screen and the hook editor run under it", async ({ expect }) => {
    const policy = (await fetch(`${fixture.origin}/`)).headers.get("content-security-policy") ?? "";
    for (const directive of ["default-src 'self'", "script-src 'self'", "connect-src 'self'", "object-src 'none'", "base-uri 'none'"]) {
      expect(policy.split("; ")).toContain(directive);
    }
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    // Recorded in the page from its first script on, so a violation on any screen is kept.
    await page.addInitScript({
      content: `window.cspViolations = [];
        document.addEventListener("securitypolicyviolation", (event) => cspViolations.push(event.violatedDirective + " " + event.blockedURI));`,
    });
    await signIn(page, fixture.origin, ADMIN_EMAIL);
    for (const screen of ["Services", "Tools", "Profiles", "Keys", "Approvals", "Logs", "Code Mode runs", "Overview"]) {
      await openScreen(page, screen);
    }
    // The Hooks tab: Monaco, its TypeScript worker and the server's diagnostics.
    await openScreen(page, "Tools");
    await page.getByRole("link", { name: "demo__search_release_notes" }).click();
    await page.getByRole("navigation", { name: "Tool tabs" }).getByRole("link", { name: "Hooks" }).click();
    await page.locator(".hook-source .monaco-editor").waitFor();
    await page.locator(".hook-source .view-lines").click();
    await page.keyboard.type("const x: number = 'no';");
    await page.locator(".hook-source .squiggly-error").first().waitFor();
    // Script injected into the page is refused, as markup that slipped through would be.
    await page.evaluate(
      `{ const script = document.createElement("script"); script.textContent = "window.injected = true"; document.body.append(script); }`,
    );
    expect(await page.evaluate(`({ injected: "injected" in window, violations: window.cspViolations })`)).toEqual({
      injected: false,
      violations: ["script-src-elem inline"],
    });
    await context.close();
  });
});
