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
      for (const screen of ["Overview", "Services", "Tools", "Keys", "Approvals", "Logs", "Code Mode runs"]) {
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

  it("lists the agent's ordinary calls in Logs with its key, filters by key, opens a row, and charts the rollups", async ({ expect }) => {
    // Ordinary calls without any hook: each is a row now, whatever its outcome. A second key's call must not show
    // under the agent's key.
    const other = await request(fixture.origin, "POST", `/v1/workspaces/${fixture.ws}/keys`, fixture.adminKey, {
      name: "someone else",
      scopes: ["tools:call"],
      profileId: fixture.defaultProfileId,
    });
    const elsewhere = await connectAgent(fixture.origin, other.secret);
    await elsewhere.callTool({ name: "demo__lookup_customer", arguments: { email: "ada@example.com" } });
    await elsewhere.close();
    const agent = await connectAgent(fixture.origin, agentKey);
    for (const email of ["ada@example.com", "grace@example.com", "nobody@example.com"]) {
      await agent.callTool({ name: "demo__lookup_customer", arguments: { email } });
    }
    await agent.close();

    await openScreen(page, "Logs");
    await page.getByLabel("Tool", { exact: true }).selectOption({ label: "demo__lookup_customer" });
    const table = page.getByRole("table", { name: "Calls" });
    const rows = table.locator("tbody tr");
    // Rows arrive through the queue after the response; the view polls.
    await expect.poll(() => rows.count(), { timeout: 20_000 }).toBe(4);
    expect(await table.textContent()).toContain("someone else");
    await page.getByLabel("Key", { exact: true }).selectOption({ label: "agent" });
    await expect.poll(() => rows.count(), { timeout: 15_000 }).toBe(3);
    const texts = await rows.allTextContents();
    expect(texts.every((text) => text.includes("agent") && !text.includes("someone else"))).toBe(true);
    expect(texts.filter((text) => /tools\/call.*demo__lookup_customer.*ok/.test(text))).toHaveLength(2);
    expect(texts.filter((text) => text.includes("upstream_error"))).toHaveLength(1);
    await page.getByLabel("Outcome", { exact: true }).selectOption("upstream_error");
    await expect.poll(() => rows.count()).toBe(1);

    // Open the row: the call's facts, and its one stage row, the upstream's error (no hook ran).
    await rows
      .first()
      .getByRole("button", { name: /^Open req_/ })
      .click();
    const detail = page.getByRole("region", { name: /^Call req_/ });
    await detail.waitFor();
    await expect.poll(() => detail.textContent()).toMatch(/tools\/call demo__lookup_customer.*upstream_error.*agent/s);
    const stages = detail.getByRole("table", { name: "Stage runs of this call" }).locator("tbody tr");
    expect(await stages.allTextContents()).toEqual([expect.stringMatching(/upstream\s*active\s*upstream_error/)]);

    await page
      .getByRole("img", { name: /Chart of calls per minute/ })
      .locator("canvas")
      .waitFor();
    await expect.poll(() => page.getByLabel("Calls in the last hour").textContent()).toMatch(/\d+ calls/);
    await expectAccessible(page, "Logs with rows");
    await screenshot(page, "logs-chart");
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
