// The Hooks tab, driven as an admin does: write a hook in Monaco (a type error
// underlined as typed), save, test both stages, build revisions, deploy to
// shadow, promote, see a real MCP call run the hook, roll back, diff and restore
// from history, and survive a save conflict from a second browser.
import type { Browser, BrowserContext, Locator, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { request } from "../node/gateway.ts";
import { expectAccessible, launchChromium, openScreen, screenshot, signIn } from "./browser.ts";
import { ADMIN_EMAIL } from "./global-setup.ts";
import { connectAgent } from "./mcp-agent.ts";

const fixture = inject("fixture");
/** Waits for what the page shows, as long as a locator would (two shared cores make some steps slow). */
const poll = <T>(read: () => Promise<T> | T) => expect.poll(read, { timeout: 15_000, interval: 100 });
const TOOL = "demo__search_release_notes";

// `before` returns a number where the upstream takes a string: the editor must underline it.
const HOOK_WITH_TYPE_ERROR = `export default defineToolAdapter({
  apiVersion: "rayrun.hooks/v1",
  before({ arguments: args, context }) {
    const query = args.query.trim().toLowerCase();
    context.log.info("normalised", { query });
    return { action: "continue", arguments: { query: 42 } };
  },
  after({ result, context }) {
    const limit = Number(context.config.limit ?? 3);
    return { action: "return", result: { items: result.items.slice(0, limit) } };
  },
});
`;

const NOTES = [
  { version: "2.4.0", date: "2026-10-02", title: "Faster search", summary: "Search results now stream in under 50 ms." },
  { version: "2.3.0", date: "2026-07-30", title: "Audit export", summary: "Admins can export audit logs as CSV." },
];

let browser: Browser;
beforeAll(async () => {
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
  // Leave the shared demo tool as other browser tests expect it: no hook.
  const hook = await toolHookPath();
  await request(fixture.origin, "DELETE", hook, fixture.adminKey);
});

async function toolHookPath(): Promise<string> {
  const { tools } = await request(fixture.origin, "GET", `/v1/workspaces/${fixture.ws}/tools`, fixture.adminKey);
  const tool = (tools as { uid: string; publicName: string }[]).find((t) => t.publicName === TOOL)!;
  return `/v1/workspaces/${fixture.ws}/tools/${tool.uid}/hook`;
}

async function adminPage(): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  // Text goes into Monaco by pasting, as a user would paste a hook (typing would trigger auto-indent and bracket closing).
  await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: fixture.origin });
  // A step that cannot happen fails with its locator, well before the test's own timeout.
  context.setDefaultTimeout(15_000);
  const page = await context.newPage();
  await signIn(page, fixture.origin, ADMIN_EMAIL);
  await openScreen(page, "Tools");
  await page.getByRole("link", { name: TOOL }).click();
  await page.getByRole("navigation", { name: "Tool tabs" }).getByRole("link", { name: "Hooks" }).click();
  await page.locator(".hook-source .monaco-editor").waitFor();
  return { context, page };
}

async function replaceText(page: Page, editor: Locator, text: string): Promise<void> {
  await editor.locator(".view-lines").click();
  await page.keyboard.press("Control+A");
  await page.evaluate(`navigator.clipboard.writeText(${JSON.stringify(text)})`);
  await page.keyboard.press("Control+V");
}

async function saveDraft(page: Page): Promise<void> {
  await page.getByRole("button", { name: "Save draft" }).click();
  // Every save is followed by a server compile of the saved draft.
  await page.getByText(/^Compiles: stages before and after/).waitFor();
}

async function runBefore(page: Page): Promise<void> {
  await page.getByRole("tab", { name: "Test" }).click();
  await page.getByRole("radio", { name: "before" }).check();
  await page.getByRole("button", { name: "Run before" }).click();
  await poll(() => page.locator(".test-outcome h4").textContent()).toMatch(/Result of before: passed, outcome continue/);
}

async function runAfter(page: Page, mockResult?: unknown): Promise<void> {
  await page.getByRole("tab", { name: "Test" }).click();
  await page.getByRole("radio", { name: "after" }).check();
  if (mockResult !== undefined) await page.getByLabel(/^Mock upstream result/).fill(JSON.stringify(mockResult));
  await page.getByRole("button", { name: "Run after" }).click();
  await poll(() => page.locator(".test-outcome h4").textContent()).toMatch(/Result of after: passed, outcome return/);
}

/** Builds a revision from the saved draft; its id and its per-tool number (`r2`). */
async function createRevision(page: Page): Promise<{ id: string; label: string }> {
  await page.getByRole("tab", { name: "Deploy" }).click();
  await page.getByRole("button", { name: /^Create revision from saved version v\d+/ }).click();
  const notice = page.getByText(/^Revision r\d+ \(rev_\w+\) built from version v\d+/);
  await notice.waitFor();
  const [, label, id] = /Revision (r\d+) \((rev_\w+)\)/.exec((await notice.textContent())!)!;
  return { id: id!, label: label! };
}

async function confirm(page: Page, action: string, expectChange: RegExp): Promise<void> {
  const dialog = page.getByRole("dialog");
  await poll(() => dialog.textContent()).toMatch(expectChange);
  await dialog.getByRole("button", { name: action }).click();
  await dialog.waitFor({ state: "hidden" });
}

async function searchThroughMcp(query: string): Promise<unknown[]> {
  const client = await connectAgent(fixture.origin, clientKey);
  try {
    const result = await client.callTool({ name: TOOL, arguments: { query } });
    expect(result.isError).toBeFalsy();
    return (result.structuredContent as { items: unknown[] }).items;
  } finally {
    await client.close();
  }
}

let clientKey: string;

describe("the Hooks tab", () => {
  it("takes a hook from a typed draft to active, runs it on a real call, rolls back and restores", async () => {
    // An agent in its own access profile, so policy other browser tests set on the default profile does not hold its calls.
    const profile = await request(fixture.origin, "POST", `/v1/workspaces/${fixture.ws}/profiles`, fixture.adminKey, {
      name: "hooks tab agents",
      defaultMode: "allow",
    });
    const created = await request(fixture.origin, "POST", `/v1/workspaces/${fixture.ws}/keys`, fixture.adminKey, {
      name: "hooks tab agent",
      scopes: ["tools:call"],
      profileId: profile.id,
    });
    clientKey = created.secret;
    // Two of the demo notes match; without a hook (or with limit 3) both come back.
    expect(await searchThroughMcp("search export")).toHaveLength(2);

    const { context, page } = await adminPage();
    const source = page.locator(".hook-source");
    const config = page.locator(".hook-config");

    // A wrong result type is underlined as typed, and listed in words.
    await replaceText(page, source, HOOK_WITH_TYPE_ERROR);
    await source.locator(".squiggly-error").first().waitFor();
    await poll(() => page.locator(".type-problems").textContent()).toMatch(/Type 'number' is not assignable to type 'string'/);
    await screenshot(page, "hooks-tab-editor");

    // Fix it in place: the 42 becomes `query`, and the underline goes.
    await source.locator(".view-line span span", { hasText: /^42$/ }).dblclick();
    await page.keyboard.type("query");
    await page.getByText("No problems found.").waitFor();
    await poll(() => source.locator(".squiggly-error").count()).toBe(0);

    // A config that is not an object is refused before any request.
    await replaceText(page, config, "[1, 2]");
    await page.getByRole("button", { name: "Save draft" }).click();
    await page.getByText("The config must be a JSON object ({ … }), not an array").waitFor();
    await replaceText(page, config, "{}");
    await saveDraft(page);

    // Version 1 (default limit 3): test both stages, build the earlier revision.
    await page.getByLabel("Arguments (the client's, JSON object)").fill('{ "query": "  SSO " }');
    await runBefore(page);
    await poll(() => page.getByLabel("Transformed value").textContent()).toContain('"query": "sso"');
    await poll(() => page.locator(".checks").textContent()).toContain("Arguments sent upstream");
    await poll(() => page.locator(".hook-logs").textContent()).toContain("normalised");
    await poll(() => page.locator(".usage").textContent()).toMatch(/Duration\d+ ms/);
    await runAfter(page, { items: NOTES });
    await poll(() => page.locator(".checks").textContent()).toContain("Mock upstream result");
    const { id: first, label: firstLabel } = await createRevision(page);

    // Version 2 (limit 1): test, revision, shadow, promote.
    await replaceText(page, config, '{ "limit": 1 }');
    await saveDraft(page);
    await runBefore(page);
    await runAfter(page);
    await poll(() => page.getByLabel("Transformed value").textContent()).toMatch(/"items": \[\s*\{\s*"version": "2.4.0"[^\]]*\}\s*\]/);
    await screenshot(page, "hooks-tab-test-console");
    const { id: second, label: secondLabel } = await createRevision(page);
    await page.locator(`tr[data-revision="${second}"]`).getByRole("button", { name: "Deploy to shadow" }).click();
    await confirm(page, "Deploy to shadow", /Now\s*nothing.*After\s*revision/s);
    await poll(() => page.getByTestId("shadow-revision").textContent()).toContain(second);
    await page.getByRole("button", { name: "Promote shadow to active" }).click();
    await confirm(page, "Promote shadow to active", /active slot.*Now\s*nothing \(no hook runs\).*After\s*revision/s);
    await poll(() => page.getByTestId("active-revision").textContent()).toContain(second);

    // A real agent call runs the active hook: one note instead of two, and a log row for that revision.
    expect(await searchThroughMcp("search export")).toHaveLength(1);
    const hook = await toolHookPath();
    const beforeRows = () =>
      request(fixture.origin, "GET", `${hook}/logs?stage=before&channel=active`, fixture.adminKey).then(
        (body) => body.logs as { requestId: string; revisionId: string; outcome: string }[],
      );
    await poll(beforeRows).toContainEqual(expect.objectContaining({ outcome: "continue", revisionId: second }));
    const { requestId } = (await beforeRows()).find((row) => row.revisionId === second)!;

    // The same call in the console's Logs: opened from the list, its before and after runs on the active revision.
    const logs = await context.newPage();
    await logs.goto(`${fixture.origin}/#/w/${fixture.ws}/logs`);
    await logs.getByLabel("Tool", { exact: true }).selectOption({ label: TOOL });
    await logs.getByLabel("Request id", { exact: true }).fill(requestId);
    await logs.getByLabel("Request id", { exact: true }).press("Enter");
    await logs.getByRole("button", { name: `Open ${requestId}` }).click();
    const callRows = logs.getByRole("table", { name: "Stage runs of this call" }).locator("tbody tr");
    await poll(() => callRows.allTextContents()).toEqual(
      expect.arrayContaining([
        expect.stringMatching(new RegExp(`before\\s*active\\s*continue.*${secondLabel} \\(${second}\\)`)),
        expect.stringMatching(new RegExp(`after\\s*active\\s*return.*${secondLabel} \\(${second}\\)`)),
      ]),
    );
    await logs.close();

    // Roll back active to the earlier revision; the next call gets both notes again.
    await page.locator(`tr[data-revision="${first}"]`).getByRole("button", { name: "Roll back to this" }).click();
    await confirm(
      page,
      "Roll back active",
      new RegExp(`Now\\s*revision ${secondLabel} \\(from version v2.*After\\s*revision ${firstLabel} \\(from version v1`, "s"),
    );
    await poll(() => page.getByTestId("active-revision").textContent()).toContain(first);
    await poll(() => page.locator(".deploy-events tbody tr").first().textContent()).toContain("rollback");
    expect(await searchThroughMcp("search export")).toHaveLength(2);

    // History: each version with who, channel and when; the config diff of version 2; restore version 1.
    await page.getByRole("tab", { name: "History" }).click();
    const rows = page.locator("table.versions tbody tr");
    await poll(() => rows.count()).toBe(2);
    await poll(() => rows.first().textContent()).toContain("browser");
    await poll(() => rows.first().textContent()).toContain("(draft)");
    // Each version names the revisions built from it, with the live one marked (active is back on the first).
    await poll(() => rows.nth(1).textContent()).toMatch(new RegExp(`v1.*${firstLabel} live`));
    await poll(() => rows.first().textContent()).toMatch(new RegExp(`v2.*${secondLabel}(?! live)`));
    await rows
      .first()
      .getByRole("button", { name: /^Diff version/ })
      .click();
    await poll(() => page.getByLabel("Config diff").textContent()).toContain('+  "limit": 1');
    await screenshot(page, "hooks-tab-history-diff");
    await rows
      .nth(1)
      .getByRole("button", { name: /^Restore version/ })
      .click();
    await confirm(page, "Restore", /Its source and config become the draft/);
    await poll(() => rows.count()).toBe(3);
    await poll(() => rows.first().textContent()).toContain("restored from");
    await poll(() => page.locator(".hook-draft [role=status]").first().textContent()).toContain("Saved version");

    // Keyboard users leave the editor with Tab after Ctrl+M.
    await source.locator(".view-lines").click();
    await page.keyboard.press("Control+M");
    await page.keyboard.press("Tab");
    expect(await page.evaluate("document.activeElement?.closest('.hook-source') === null")).toBe(true);
    await expectAccessible(page, "hooks tab");
    // At 800 px the editors stack and nothing overflows sideways.
    await page.setViewportSize({ width: 800, height: 900 });
    await page.getByRole("tab", { name: "Deploy" }).click();
    expect(await page.evaluate("document.documentElement.scrollWidth")).toBeLessThanOrEqual(800);
    await expectAccessible(page, "hooks tab at 800 px");
    await context.close();
  }, 90_000); // about 35 s alone; two cores shared with other work can slow it

  it("shows, with payload capture on, a shadow run that differed from active and the JSON diff of the two", async () => {
    // Active is the first revision (limit 3) since the rollback above; the second (limit 1) goes to shadow.
    const hook = await toolHookPath();
    const { revisions } = (await request(fixture.origin, "GET", `${hook}/revisions`, fixture.adminKey)) as {
      revisions: { revisionId: string; number: number; createdAt: string }[];
    };
    const deployments = (await request(fixture.origin, "GET", `${hook}/deployments`, fixture.adminKey)) as {
      active: { revisionId: string } | null;
    };
    const shadow = revisions.find((revision) => revision.revisionId !== deployments.active?.revisionId)!;
    await request(fixture.origin, "PUT", `${hook}/deployments/shadow`, fixture.adminKey, { revisionId: shadow.revisionId });
    const services = (await request(fixture.origin, "GET", `/v1/workspaces/${fixture.ws}/services`, fixture.adminKey)).services as {
      id: string;
      slug: string;
    }[];
    const demo = services.find((service) => service.slug === "demo")!;
    await request(fixture.origin, "PATCH", `/v1/workspaces/${fixture.ws}`, fixture.adminKey, { detailPolicy: "payloads" });
    await request(fixture.origin, "PATCH", `/v1/workspaces/${fixture.ws}/services/${demo.id}`, fixture.adminKey, { payloadCapture: true });
    try {
      expect(await searchThroughMcp("search export")).toHaveLength(2);
      const { context, page } = await adminPage();
      await page.getByRole("tab", { name: "Logs" }).click();
      await page.getByLabel("Channel", { exact: true }).selectOption("shadow");
      const rows = page.getByRole("table", { name: "Hook stage runs" }).locator("tbody tr");
      const differed = rows.filter({ hasText: "differed" }).first();
      await poll(() => differed.count()).toBe(1);
      expect(await differed.textContent()).toMatch(/after\s*shadow\s*return/);
      // The revision by its per-tool number, its id beside it.
      await poll(() => differed.textContent()).toContain(`r${shadow.number} (${shadow.revisionId})`);
      // Active kept two notes, shadow one: the second note's lines are active's only.
      const diff = differed.getByLabel("Diff of active and shadow for after");
      await poll(() => diff.locator(".removed").count()).toBeGreaterThan(0);
      expect(await diff.locator(".removed").allTextContents()).toEqual(expect.arrayContaining([expect.stringContaining('"2.3.0"')]));
      expect(await diff.locator(".added").count()).toBe(0);
      await expectAccessible(page, "hooks tab logs panel");
      await screenshot(page, "hooks-tab-shadow-diff");
      await context.close();
    } finally {
      await request(fixture.origin, "DELETE", `${hook}/deployments/shadow`, fixture.adminKey);
      await request(fixture.origin, "PATCH", `/v1/workspaces/${fixture.ws}/services/${demo.id}`, fixture.adminKey, {
        payloadCapture: false,
      });
      await request(fixture.origin, "PATCH", `/v1/workspaces/${fixture.ws}`, fixture.adminKey, { detailPolicy: "metadata" });
    }
  }, 90_000);

  it("keeps both texts when a second browser saved first, and overwrites only when asked", async () => {
    const mine = await adminPage();
    const theirs = await adminPage();
    await poll(() => mine.page.locator(".hook-source .view-lines").textContent()).toContain("defineToolAdapter");

    // The second browser saves first.
    await replaceText(theirs.page, theirs.page.locator(".hook-source"), `${HOOK_WITH_TYPE_ERROR.replace("42", "query")}// theirs_marker\n`);
    await saveDraft(theirs.page);

    // This one, still on the older draft, saves its own text: 412, shown side by side, nothing replaced.
    await replaceText(mine.page, mine.page.locator(".hook-source"), `${HOOK_WITH_TYPE_ERROR.replace("42", "query")}// mine_marker\n`);
    await mine.page.getByRole("button", { name: "Save draft" }).click();
    const conflict = mine.page.locator(".conflict");
    await conflict.waitFor();
    await poll(() => conflict.textContent()).toContain("Someone saved a newer draft");
    await poll(() => conflict.locator(".editor.original").textContent()).toContain("theirs_marker");
    await poll(() => conflict.locator(".editor.modified").textContent()).toContain("mine_marker");
    await poll(() => mine.page.locator(".hook-source .view-lines").textContent()).toContain("mine_marker");

    // Overwriting is a deliberate choice; the newer draft stays in history as its own version.
    await conflict.getByRole("button", { name: "Overwrite with my text" }).click();
    await mine.page.getByText(/^Compiles: stages before and after/).waitFor();
    await poll(() => conflict.count()).toBe(0);
    const hook = await toolHookPath();
    const { versions } = await request(fixture.origin, "GET", `${hook}/versions?limit=2`, fixture.adminKey);
    const texts = await Promise.all(
      (versions as { versionId: string }[]).map(
        async (v) => (await request(fixture.origin, "GET", `${hook}/versions/${v.versionId}`, fixture.adminKey)).source as string,
      ),
    );
    expect(texts[0]).toContain("mine_marker");
    expect(texts[1]).toContain("theirs_marker");
    await theirs.context.close();

    // Reset needs the tool's name typed; the reset event stays.
    await mine.page.getByRole("tab", { name: "History" }).click();
    await mine.page.getByRole("button", { name: "Reset hook…" }).click();
    const dialog = mine.page.getByRole("dialog");
    const resetButton = dialog.getByRole("button", { name: "Reset hook" });
    expect(await resetButton.isDisabled()).toBe(true);
    await dialog.getByLabel(`Type ${TOOL} to confirm`).fill(TOOL);
    await resetButton.click();
    await dialog.waitFor({ state: "hidden" });
    await poll(() => mine.page.locator("ul.resets").textContent()).toMatch(
      new RegExp(`reset by ${ADMIN_EMAIL.replaceAll(".", "\\.")} \\(browser\\); \\d+ versions, \\d+ revisions and \\d+ bundles removed`),
    );
    await mine.page.getByText("No draft saved yet").waitFor();
    await mine.context.close();
  });
});
