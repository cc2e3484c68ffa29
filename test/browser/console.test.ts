// The admin's flow through the console, outside the Hooks tab: every screen
// passes axe in light and dark, fits 1280, 800 and 390 px without sideways
// overflow; the approveAt link an agent gets opens that approval's page after
// sign-in, where it is approved with a note and the agent's repeated call goes
// through; the agent's calls show in Logs; and a key revoked in the console is
// refused at /mcp.
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, inject, it, onTestFinished } from "vitest";
import { request } from "../node/gateway.ts";
import { expectAccessible, expectNoSidewaysOverflow, launchChromium, openScreen, screenshot, signIn } from "./browser.ts";
import { ADMIN_EMAIL } from "./global-setup.ts";
import { connectAgent, refusal } from "./mcp-agent.ts";

const fixture = inject("fixture");
const TOOL = "demo__search_release_notes";
const SCREENS = ["Overview", "Services", "Tools", "Profiles", "Keys", "Members", "Approvals", "Logs", "Code Mode runs"];
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

/** The background Monaco paints its editor with, in the theme it was given. */
const editorBackground = (on: Page) =>
  on.evaluate("getComputedStyle(document.querySelector('.hook-source .monaco-editor')).backgroundColor");
/** The colour uPlot drew a series of the calls chart in, as its legend marker shows it. */
const seriesColour = (on: Page, series: string) =>
  on.evaluate(`(() => {
    const row = [...document.querySelectorAll(".metrics .u-legend .u-series")].find(
      (candidate) => candidate.querySelector(".u-label")?.textContent === ${JSON.stringify(series)},
    );
    return row ? getComputedStyle(row.querySelector(".u-marker")).borderTopColor : null;
  })()`);
const settled = (on: Page) => on.getByRole("status").filter({ hasText: "Loading" }).waitFor({ state: "detached" });

describe("the console", () => {
  it("shows every screen without serious or critical axe violations, and without sideways overflow at 1280, 800 and 390 px", async ({
    expect,
  }) => {
    // The next tests run at 1280 px, whatever happens here.
    onTestFinished(() => page.setViewportSize({ width: 1280, height: 860 }));
    for (const width of [1280, 800, 390]) {
      await page.setViewportSize({ width, height: 860 });
      for (const screen of SCREENS) {
        await openScreen(page, screen);
        await settled(page);
        // axe once per screen; at 800 and 390 px what changes is the layout, checked below.
        if (width === 1280) await expectAccessible(page, screen);
        await expectNoSidewaysOverflow(page, screen);
      }
      await openScreen(page, "Tools");
      await page.getByRole("link", { name: TOOL }).click();
      await page.getByRole("heading", { name: "Policy per profile" }).waitFor();
      await settled(page);
      await expectNoSidewaysOverflow(page, "tool detail");
      if (width === 1280) await expectAccessible(page, "tool detail");
      await page.getByRole("navigation", { name: "Tool tabs" }).getByRole("link", { name: "Hooks" }).click();
      await page.locator(".hook-source .monaco-editor").waitFor();
      await expectNoSidewaysOverflow(page, "hooks tab");
    }
    // On a phone the nav is behind the Menu button, and every screen is reachable from it.
    const menu = page.getByRole("button", { name: "Menu" });
    expect(await page.getByRole("navigation", { name: "Workspace screens" }).isVisible()).toBe(false);
    await menu.click();
    expect(await menu.getAttribute("aria-expanded")).toBe("true");
    for (const screen of SCREENS) {
      expect(
        await page
          .getByRole("navigation", { name: "Workspace screens" })
          .getByRole("link", { name: new RegExp(`^${screen}`) })
          .isVisible(),
      ).toBe(true);
    }
    await screenshot(page, "phone-layout");
    await page.getByRole("navigation", { name: "Workspace screens" }).getByRole("link", { name: "Overview" }).click();
    await page.getByRole("heading", { level: 1, name: "Overview" }).waitFor();
    // The menu closes in an effect after the new route renders, so it may trail the heading by a frame.
    await expect.poll(() => menu.getAttribute("aria-expanded")).toBe("false");
    await page.setViewportSize({ width: 1280, height: 860 });
  }, 180_000); // 8 screens at three widths, axe on each at 1280: about a minute alone, more on two shared cores

  it("follows a dark system, Monaco and the calls chart included, passes axe in dark on every screen, and the toggle overrides it", async ({
    expect,
  }) => {
    const dark = await browser.newContext({ viewport: { width: 1280, height: 860 }, colorScheme: "dark" });
    const on = await dark.newPage();
    await signIn(on, fixture.origin, ADMIN_EMAIL);
    expect(await on.evaluate("document.documentElement.dataset.theme")).toBe("dark");
    const background = () => on.evaluate("getComputedStyle(document.documentElement).backgroundColor");
    expect(await background()).toBe("rgb(13, 17, 23)");
    for (const screen of SCREENS) {
      await openScreen(on, screen);
      await settled(on);
      await expectAccessible(on, `${screen} in dark`);
    }
    await openScreen(on, "Tools");
    await on.getByRole("link", { name: TOOL }).click();
    await on.getByRole("heading", { name: "Policy per profile" }).waitFor();
    await settled(on);
    await expectAccessible(on, "tool detail in dark");
    await on.getByRole("navigation", { name: "Tool tabs" }).getByRole("link", { name: "Hooks" }).click();
    await on.locator(".hook-source .monaco-editor").waitFor();
    // Monaco draws its dark theme: the editor's background follows the console's.
    await expect.poll(() => editorBackground(on), { timeout: 15_000 }).toBe("rgb(13, 17, 23)");
    await expectAccessible(on, "hooks tab in dark");
    await screenshot(on, "dark-mode");

    // The toggle wins over the system, and is remembered; System follows it again.
    await on.getByLabel("Theme").selectOption("light");
    expect(await on.evaluate("document.documentElement.dataset.theme")).toBe("light");
    await expect.poll(() => editorBackground(on)).toBe("rgb(255, 255, 254)");
    await on.reload();
    await on.getByRole("heading", { level: 1 }).first().waitFor();
    expect(await on.evaluate("document.documentElement.dataset.theme")).toBe("light");
    await on.getByLabel("Theme").selectOption("system");
    expect(await on.evaluate("[document.documentElement.dataset.theme, localStorage.getItem('rayrun.theme')]")).toEqual(["dark", null]);

    // The calls chart is a canvas, drawn in the theme's colours and drawn again when the theme changes.
    await openScreen(on, "Overview");
    await expect.poll(() => seriesColour(on, "ok"), { timeout: 15_000 }).toBe("rgb(86, 211, 100)");
    expect(await seriesColour(on, "refused or failed")).toBe("rgb(255, 138, 128)");
    await on.getByLabel("Theme").selectOption("light");
    await expect.poll(() => seriesColour(on, "ok")).toBe("rgb(26, 127, 55)");
    expect(await seriesColour(on, "refused or failed")).toBe("rgb(180, 35, 24)");
    await on.getByLabel("Theme").selectOption("system");
    await dark.close();
  }, 120_000);

  it("opens the approveAt link on its approval page after sign-in, approves it with a note, and the agent's repeated call succeeds", async ({
    expect,
  }) => {
    await openScreen(page, "Tools");
    await page.getByRole("link", { name: TOOL }).click();
    const mode = page.getByLabel(`Mode of ${TOOL} for profile default`);
    await mode.selectOption("approval");
    await expect.poll(() => mode.inputValue()).toBe("approval");

    const agent = await connectAgent(fixture.origin, agentKey);
    const call = () => agent.callTool({ name: TOOL, arguments: { query: "approve me" } });
    const held = refusal(await call());
    expect(held).toMatchObject({ code: "approval_required", details: { reason: "policy_approval" } });
    const approveAt = held!.details.approveAt as string;
    expect(approveAt).toBe(`${fixture.origin}/#/w/${fixture.ws}/approvals/${held!.details.approvalId}`);

    // The nav counts it.
    await openScreen(page, "Approvals");
    await expect.poll(() => page.getByTestId("pending-count").textContent(), { timeout: 15_000 }).toMatch(/1\s*pending/);
    const card = page.getByRole("article", { name: `Approval for ${TOOL}` });
    await card.waitFor();
    expect(await card.getByLabel("Transformed arguments").textContent()).toContain('"query": "approve me"');
    await expectAccessible(page, "Approvals with a pending call");
    await screenshot(page, "approvals-queue");

    // An approver who is not signed in follows the link: sign-in first, then that approval's page.
    const approver = await browser.newContext({ viewport: { width: 1280, height: 860 } });
    const link = await approver.newPage();
    await link.goto(approveAt);
    await link.getByLabel("Email").fill(ADMIN_EMAIL);
    await link.getByRole("button", { name: "Sign in" }).click();
    await link.getByRole("heading", { level: 1, name: `Approval for ${TOOL}` }).waitFor();
    expect(await link.getByTestId("approval-status").textContent()).toBe("pending");
    expect(await link.getByLabel("Transformed arguments").textContent()).toContain('"query": "approve me"');
    expect(await link.locator("dl.facts").textContent()).toMatch(/Keyagent.*Hook revisionnone: the tool has no active hook/s);
    await expectAccessible(link, "approval page");
    await screenshot(link, "approval-page");
    // The page an approver most likely opens on a phone: it fits 390 px, and passes axe in dark too.
    await link.setViewportSize({ width: 390, height: 844 });
    await expectNoSidewaysOverflow(link, "approval page");
    await link.emulateMedia({ colorScheme: "dark" });
    await expect.poll(() => link.evaluate("document.documentElement.dataset.theme")).toBe("dark");
    await expectAccessible(link, "approval page in dark at 390 px");
    await link.emulateMedia({ colorScheme: "light" });
    await link.setViewportSize({ width: 1280, height: 860 });

    // Approve asks first, repeating the call, and takes a note; Cancel changes nothing.
    await link.getByRole("button", { name: "Approve…" }).click();
    const dialog = link.getByRole("dialog");
    expect(await dialog.getByLabel("The call being decided").textContent()).toContain('"query": "approve me"');
    await dialog.getByRole("button", { name: "Cancel" }).click();
    await dialog.waitFor({ state: "hidden" });
    expect(refusal(await call())?.code).toBe("approval_required");
    await link.getByRole("button", { name: "Approve…" }).click();
    await dialog.getByLabel("Note (optional, kept with the decision)").fill("Checked with the requester.");
    await dialog.getByRole("button", { name: "Approve the call" }).click();
    await expect.poll(() => link.getByTestId("approval-status").textContent()).toBe("approved");
    expect(await link.locator("dl.facts").textContent()).toMatch(
      new RegExp(`Approved by ${ADMIN_EMAIL}.*NoteChecked with the requester\\.`, "s"),
    );
    await approver.close();

    const repeated = await call();
    expect(refusal(repeated)).toBeUndefined();
    expect(repeated.isError).toBeFalsy();
    // The approval was for one call: the next identical call is held again.
    const again = refusal(await call());
    expect(again?.code).toBe("approval_required");

    // Decided approvals are listed with who decided and the note; the second request is denied from the list.
    await page.getByLabel("Status").selectOption("used");
    await page.getByRole("article", { name: `Approval for ${TOOL}` }).waitFor();
    expect(await page.getByRole("article").first().textContent()).toMatch(
      new RegExp(`Approved by ${ADMIN_EMAIL}.*Checked with the requester`, "s"),
    );
    await page.getByLabel("Status").selectOption("pending");
    await page
      .getByRole("article", { name: `Approval for ${TOOL}` })
      .getByRole("button", { name: "Deny…" })
      .click();
    await page.getByRole("dialog").getByRole("button", { name: "Deny the call" }).click();
    await page.getByText("No pending approvals.").waitFor();
    await expect.poll(() => page.getByTestId("pending-count").count(), { timeout: 15_000 }).toBe(0);
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
    // Read the kind, tool and outcome cells themselves: the row's text also holds a random request id, which may
    // contain any two letters.
    const summaries = await rows.evaluateAll((trs) =>
      trs.map((tr) => [1, 2, 4].map((column) => tr.children[column]?.textContent?.trim()).join(" | ")),
    );
    expect(summaries.filter((text) => text === "tools/call | demo__lookup_customer | ok")).toHaveLength(2);
    expect(summaries.filter((text) => text === "tools/call | demo__lookup_customer | upstream_error")).toHaveLength(1);
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
    // Rollups land with the queue's batch; the chart re-reads every 10 s, so wait for a count above zero.
    await expect.poll(() => page.getByLabel("Calls in the last hour").textContent(), { timeout: 30_000 }).toMatch(/[1-9]\d* calls/);
    await expectAccessible(page, "Logs with rows");
    await screenshot(page, "logs-chart");
  });

  it("creates a key with the default profile preselected, shows it once with a copy button, rotates it, then revokes it, and /mcp refuses it", async ({
    expect,
  }) => {
    await openScreen(page, "Keys");
    await page.getByLabel("Name", { exact: true }).fill("browser-made");
    // The form's defaults work on the first submit: tools:call with the default profile.
    await expect.poll(() => page.getByLabel("Profile").locator("option:checked").textContent()).toBe("default");
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
    expect(await page.getByRole("row", { name: /browser-made/ }).textContent()).toContain(`by ${ADMIN_EMAIL}`);

    const agent = await connectAgent(fixture.origin, secret);
    expect((await agent.listTools()).tools.map((t) => t.name)).toContain(TOOL);
    await agent.close();

    // A new secret, shown once the same way; the old one is refused from then on.
    page.once("dialog", (dialog) => void dialog.accept());
    await page.getByRole("button", { name: "Rotate browser-made" }).click();
    await expect.poll(() => secretBox.count()).toBe(1);
    const rotated = await secretBox.inputValue();
    expect(rotated).toMatch(/^rr_/);
    expect(rotated).not.toBe(secret);
    await page.getByRole("button", { name: "I have stored it" }).click();
    await expect(connectAgent(fixture.origin, secret)).rejects.toMatchObject({ code: 401 });
    const rotatedAgent = await connectAgent(fixture.origin, rotated);
    await rotatedAgent.close();

    page.once("dialog", (dialog) => void dialog.accept());
    await page.getByRole("button", { name: "Revoke browser-made" }).click();
    await page
      .getByRole("row", { name: /browser-made/ })
      .getByText(/^Revoked/)
      .waitFor();
    await expect(connectAgent(fixture.origin, rotated)).rejects.toMatchObject({ code: 401 });
  });

  it("adds a member with a role, changes the role, and removes them, saying what the removal revoked", async ({ expect }) => {
    await openScreen(page, "Members");
    const email = `member-${Date.now()}@rayrun.test`;
    const add = page.getByRole("form", { name: "Add a member" });
    await add.getByLabel("Email").fill(email);
    await add.getByLabel("Role").selectOption("editor");
    await add.getByRole("button", { name: "Add member" }).click();
    const role = page.getByLabel(`Role of ${email}`);
    await role.waitFor();
    expect(await role.inputValue()).toBe("editor");
    expect(await add.getByLabel("Email").inputValue()).toBe("");
    const roleOf = async () =>
      (
        (await request(fixture.origin, "GET", `/v1/workspaces/${fixture.ws}/members`, fixture.adminKey)).members as {
          email: string;
          role: string;
        }[]
      ).find((member) => member.email === email)?.role;
    await role.selectOption("viewer");
    await expect.poll(roleOf).toBe("viewer");
    await expectAccessible(page, "Members");

    page.once("dialog", (dialog) => void dialog.accept());
    await page.getByRole("button", { name: `Remove ${email}` }).click();
    const note = page.getByRole("status").filter({ hasText: "Removed" });
    await note.waitFor();
    expect(await note.textContent()).toBe(`Removed ${email}. Revoked 0 keys, 0 app grants and 0 upstream authorizations.`);
    await expect.poll(() => role.count()).toBe(0);
    expect(await roleOf()).toBeUndefined();
  });

  it("shows the /mcp URL with copyable client snippets and the last calls, and signs out", async ({ expect }) => {
    await openScreen(page, "Overview");
    // The newest five calls of every kind, by key name: the Logs test's calls are among them.
    const last = page.getByRole("region", { name: "Last calls" }).locator("tbody tr");
    await expect.poll(() => last.count(), { timeout: 20_000 }).toBe(5);
    const rows = await last.allTextContents();
    expect(rows.some((row) => /demo__lookup_customer.*agent/.test(row))).toBe(true);
    expect(rows.join("\n")).not.toContain("key:");
    const url = `${fixture.origin}/mcp`;
    expect(await page.getByTestId("mcp-url").textContent()).toBe(url);
    for (const [client, expected] of [
      ["Claude Code", `claude mcp add --transport http rayrun ${url}`],
      ["Claude Desktop", '"mcp-remote"'],
      ["Cursor", `"url": "${url}"`],
      ["MCP SDK", `new StreamableHTTPClientTransport(new URL("${url}")`],
    ]) {
      await page.getByRole("tab", { name: client }).click();
      const snippet = page.getByRole("tabpanel", { name: `${client} snippet` });
      expect(await snippet.locator("pre").textContent()).toContain(expected);
      await snippet.getByRole("button", { name: `Copy ${client} snippet` }).click();
      expect(await page.evaluate("navigator.clipboard.readText()")).toContain(expected);
    }
    await page.getByRole("button", { name: "Sign out" }).click();
    await page.getByLabel("Email").waitFor();
    // Signed out for real: the API refuses the old session.
    expect(await page.evaluate("fetch('/v1/whoami').then((r) => r.status)")).toBe(401);
    await signIn(page, fixture.origin, ADMIN_EMAIL);
  });
});
