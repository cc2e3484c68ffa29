// The admin's flow through the console, outside the Hooks tab: every screen
// passes axe, an approval decided in the console lets the agent's repeated
// call through, the agent's calls show in Logs, and a key revoked in the
// console is refused at /mcp.
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, inject, it } from "vitest";
import { request } from "../node/gateway.ts";
import { expectAccessible, launchChromium, openScreen, screenshot, signIn } from "./browser.ts";
import { ADMIN_EMAIL } from "./global-setup.ts";
import { connectAgent, refusal } from "./mcp-agent.ts";

const fixture = inject("fixture");
const TOOL = "demo__search_release_notes";
let browser: Browser;
let context: BrowserContext;
let page: Page;
let agentKey: string;

beforeAll(async () => {
  browser = await launchChromium();
  context = await browser.newContext({ viewport: { width: 1280, height: 860 } });
  await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: fixture.origin });
  page = await context.newPage();
  await signIn(page, fixture.origin, ADMIN_EMAIL);
  const created = await request(fixture.origin, "POST", `/v1/workspaces/${fixture.ws}/keys`, fixture.adminKey, {
    name: "agent",
    scopes: ["tools:call"],
    profileId: fixture.defaultProfileId,
  });
  agentKey = created.secret;
});
afterAll(async () => browser?.close());

describe("the console", () => {
  it("shows every screen without serious or critical axe violations, and without sideways overflow at 1280 and 800 px", async ({
    expect,
  }) => {
    for (const width of [1280, 800]) {
      await page.setViewportSize({ width, height: 860 });
      for (const screen of ["Overview", "Services", "Tools", "Keys", "Approvals", "Logs"]) {
        await openScreen(page, screen);
        await page.getByRole("status").filter({ hasText: "Loading" }).waitFor({ state: "detached" });
        // axe once per screen; at 800 px what changes is the layout, checked below.
        if (width === 1280) await expectAccessible(page, screen);
        // Nothing overflows the window sideways.
        expect(await page.evaluate("document.documentElement.scrollWidth"), `${screen} at ${width} px`).toBeLessThanOrEqual(width);
      }
    }
    await openScreen(page, "Tools");
    await page.getByRole("link", { name: TOOL }).click();
    await page.getByRole("heading", { name: "Policy per profile" }).waitFor();
    await expectAccessible(page, "tool detail");
    await page.setViewportSize({ width: 1280, height: 860 });
  });

  it("approves a pending call in the queue, and the agent's repeated call succeeds", async ({ expect }) => {
    await openScreen(page, "Tools");
    await page.getByRole("link", { name: TOOL }).click();
    const mode = page.getByLabel(/Mode for profile/).first();
    await mode.selectOption("approval");
    await expect.poll(() => mode.inputValue()).toBe("approval");

    const agent = await connectAgent(fixture.origin, agentKey);
    const call = () => agent.callTool({ name: TOOL, arguments: { query: "approve me" } });
    const held = refusal(await call());
    expect(held).toMatchObject({ code: "approval_required", details: { reason: "policy_approval" } });

    await openScreen(page, "Approvals");
    const card = page.getByRole("article", { name: `Approval for ${TOOL}` });
    await card.waitFor();
    expect(await card.getByLabel("Transformed arguments").textContent()).toContain('"query": "approve me"');
    expect(await card.textContent()).toContain("policy_approval");
    await expectAccessible(page, "Approvals with a pending call");
    await screenshot(page, "approvals-queue");
    await card.getByRole("button", { name: "Approve" }).click();
    await page.getByText("No pending approvals.").waitFor();

    const repeated = await call();
    expect(refusal(repeated)).toBeUndefined();
    expect(repeated.isError).toBeFalsy();
    // The approval was for one call: the next identical call is held again.
    expect(refusal(await call())?.code).toBe("approval_required");
    await agent.close();
  });

  it("lists the agent's held calls in Logs, filters them, and charts them", async ({ expect }) => {
    // A call without a hook writes a row only when the gateway refuses it before dispatch, as the two
    // approval_required calls above were; a hooked call's stage runs are covered with the Hooks tab.
    await openScreen(page, "Logs");
    await page.getByLabel("Tool", { exact: true }).selectOption({ label: TOOL });
    // The Hooks tab's spec may run first and leave hooked calls' before/after rows on the same tool.
    await page.getByLabel("Stage", { exact: true }).selectOption("pre_dispatch");
    const table = page.getByRole("table", { name: "Stage runs" });
    const rows = table.locator("tbody tr");
    // Rows are written after the response; the view polls.
    await expect.poll(() => rows.count(), { timeout: 15_000 }).toBe(2);
    expect(await rows.first().textContent()).toMatch(/pre_dispatch.*approval_required/);
    await page
      .getByRole("img", { name: /Chart of outcomes/ })
      .locator("canvas")
      .waitFor();
    await expectAccessible(page, "Logs with rows");
    await screenshot(page, "logs-chart");

    await page.getByLabel("Stage", { exact: true }).selectOption("upstream");
    await page.getByText("No stage runs match.").waitFor();
    await page.getByLabel("Stage", { exact: true }).selectOption("pre_dispatch");
    await expect.poll(() => rows.count()).toBe(2);
    const requestId = (await rows.first().locator("td").nth(1).textContent())!;
    await page.getByLabel("Request id", { exact: true }).fill(requestId);
    await page.getByLabel("Request id", { exact: true }).press("Enter");
    await expect.poll(() => rows.count()).toBe(1);
    expect(await rows.first().textContent()).toContain(requestId);
  });

  it("creates a key shown once with a copy button, then revokes it, and /mcp refuses it", async ({ expect }) => {
    await openScreen(page, "Keys");
    await page.getByLabel("Name", { exact: true }).fill("browser-made");
    await page.getByLabel("Profile").selectOption({ index: 1 });
    await page.getByRole("button", { name: "Create key" }).click();
    const secretBox = page.getByLabel("Secret", { exact: true });
    await secretBox.waitFor();
    const secret = await secretBox.inputValue();
    expect(secret).toMatch(/^rr_/);
    await page.getByRole("button", { name: "Copy secret" }).click();
    expect(await page.evaluate("navigator.clipboard.readText()")).toBe(secret);
    await page.getByRole("button", { name: "I have stored it" }).click();
    expect(await page.getByLabel("Secret", { exact: true }).count()).toBe(0);
    expect(await page.content()).not.toContain(secret);

    const agent = await connectAgent(fixture.origin, secret);
    expect((await agent.listTools()).tools.map((t) => t.name)).toContain(TOOL);
    await agent.close();

    page.once("dialog", (dialog) => void dialog.accept());
    await page.getByRole("button", { name: "Revoke browser-made" }).click();
    await page
      .getByRole("row", { name: /browser-made/ })
      .getByText(/^Revoked/)
      .waitFor();
    await expect(connectAgent(fixture.origin, secret)).rejects.toMatchObject({ code: 401 });
  });
});
