// Services → Authorize: a service whose server asks for OAuth is added pending,
// the admin authorizes it at a real authorization server (the OAuth lab) in
// the browser, comes back to Services, and sees it authorized and indexed; a
// disconnect puts it back to pending.
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, inject, it } from "vitest";
import { request } from "../node/gateway.ts";
import { expectAccessible, launchChromium, openScreen, signIn } from "./browser.ts";
import { ADMIN_EMAIL } from "./global-setup.ts";

const fixture = inject("fixture");
let browser: Browser;
let page: Page;

beforeAll(async () => {
  browser = await launchChromium();
  page = await (await browser.newContext({ viewport: { width: 1280, height: 860 } })).newPage();
  await signIn(page, fixture.origin, ADMIN_EMAIL);
});
afterAll(async () => browser?.close());

describe("Services → Authorize", () => {
  it("adds an OAuth service pending, authorizes it at its authorization server, and shows it authorized", async ({ expect }) => {
    const lab = (await (await fetch(`${fixture.oauthLabOrigin}/labs`, { method: "POST", body: "{}" })).json()) as {
      origin: string;
      mcpUrl: string;
    };
    await openScreen(page, "Services");
    await page.getByLabel("Slug").fill("linearish");
    await page.getByLabel("MCP URL").fill(lab.mcpUrl);
    await page.getByRole("button", { name: "Add service" }).click();
    await page.getByRole("status").filter({ hasText: "Added linearish: its server asks for OAuth, so nothing is indexed yet." }).waitFor();
    const row = page.getByRole("row", { name: /linearish/ });
    await row.getByText("OAuth (shared): pending authorization").waitFor();
    await expectAccessible(page, "Services with a service pending OAuth");

    await row.getByRole("button", { name: "Authorize linearish" }).click();
    // The lab's consent page, on the authorization server's own origin.
    await page.getByRole("heading", { name: /^Authorize / }).waitFor();
    expect(new URL(page.url()).origin).toBe(lab.origin);
    await page.getByLabel("Upstream user").fill("console-admin");
    await page.getByRole("button", { name: "Approve" }).click();

    // Back on Services through the gateway's callback.
    await page.getByRole("heading", { level: 1, name: "Services" }).waitFor();
    expect(new URL(page.url()).origin).toBe(fixture.origin);
    await page
      .getByRole("row", { name: /linearish/ })
      .getByText("OAuth (shared): authorized")
      .waitFor();
    const tools = await request(fixture.origin, "GET", `/v1/workspaces/${fixture.ws}/tools`, fixture.adminKey);
    expect(tools.tools.map((tool: { publicName: string }) => tool.publicName)).toContain("linearish__whoami");
    expect(await page.content()).not.toMatch(/at_[0-9a-f]{8}|rt_[0-9a-f]{8}/);

    page.once("dialog", (dialog) => void dialog.accept());
    await page.getByRole("button", { name: "Disconnect linearish" }).click();
    await page
      .getByRole("status")
      .filter({ hasText: "Disconnected linearish: 1 grants deleted, 1 revoked at the authorization server." })
      .waitFor();
    await page
      .getByRole("row", { name: /linearish/ })
      .getByText(/OAuth \(shared\): pending authorization \(disconnected: /)
      .waitFor();
  });
});
