// Writing a hook from scratch in the Hooks tab: a fresh draft opens on a typed
// skeleton that compiles and tests green with no edits, every template type-checks,
// the shape rules are checked as you type in the compiler's words, one status line
// says it all and drops a stale compile result; unsaved text survives a reload and
// is guarded on leaving; Ctrl+S saves; and nothing of one tool's screen shows on
// another's, whether reached by URL or by link.
import type { Browser, BrowserContext, Locator, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { request } from "../node/gateway.ts";
import { expectAccessible, launchChromium, openScreen, signIn } from "./browser.ts";
import { ADMIN_EMAIL } from "./global-setup.ts";

const fixture = inject("fixture");
const TOOL_A = "demo__lookup_customer";
const TOOL_B = "demo__export_report";
const poll = <T>(read: () => Promise<T> | T) => expect.poll(read, { timeout: 15_000, interval: 100 });

let browser: Browser;
let context: BrowserContext;
let page: Page;

beforeAll(async () => {
  browser = await launchChromium();
  context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: fixture.origin });
  context.setDefaultTimeout(15_000);
  page = await context.newPage();
  await signIn(page, fixture.origin, ADMIN_EMAIL);
});
afterAll(async () => {
  await browser?.close();
  // Leave the shared demo tools as other browser tests expect them: no hook.
  const { tools } = await request(fixture.origin, "GET", `/v1/workspaces/${fixture.ws}/tools`, fixture.adminKey);
  for (const name of [TOOL_A, TOOL_B]) {
    const tool = (tools as { uid: string; publicName: string }[]).find((t) => t.publicName === name)!;
    await request(fixture.origin, "DELETE", `/v1/workspaces/${fixture.ws}/tools/${tool.uid}/hook`, fixture.adminKey);
  }
});

const hooksUrl = (tool: string) => `${fixture.origin}/#/w/${fixture.ws}/tools/${tool}/hooks`;
const source = () => page.locator(".hook-source");
/** The source as Monaco shows it, its non-breaking spaces read as spaces. */
const editorText = async () => ((await source().locator(".view-lines").textContent()) ?? "").replace(/\u00a0/g, " ");
const status = () => page.getByTestId("draft-status");
const problems = () => page.locator(".hook-source .problems");

/** A new tab (its own sessionStorage) on a tool's Hooks tab; the last one closes without its leave prompt. */
async function openHooks(tool: string): Promise<void> {
  await page.close();
  page = await context.newPage();
  await page.goto(hooksUrl(tool));
  await page.locator(".hook-source .monaco-editor").waitFor();
}

async function replaceText(editor: Locator, text: string): Promise<void> {
  await editor.locator(".view-lines").click();
  await page.keyboard.press("Control+A");
  await page.evaluate(`navigator.clipboard.writeText(${JSON.stringify(text)})`);
  await page.keyboard.press("Control+V");
}

/** A source with a type error the checker must find: proof that it is running before "No problems found." counts. */
const BROKEN = `export default defineToolAdapter({
  apiVersion: "rayrun.hooks/v1",
  before({ arguments: args }) {
    return { action: "continue", arguments: { nope: 42 } };
  },
});
`;

/** History: the newest version's diff against its predecessor, open. */
async function openNewestDiff(): Promise<void> {
  await page.getByRole("tab", { name: "History" }).click();
  await page
    .locator("table.versions tbody tr")
    .first()
    .getByRole("button", { name: /^Diff version/ })
    .click();
  await page.getByRole("heading", { name: /^Version v\d+ against/ }).waitFor();
}

/** Puts a template in the editor; over unsaved text it asks first, and this confirms. */
async function useTemplate(label: string): Promise<void> {
  await page.getByLabel("Start from a template").selectOption({ label });
  await page.getByRole("button", { name: "Use template" }).click();
  await page.getByRole("dialog").getByRole("button", { name: "Use the template" }).click();
}

describe("writing a hook from scratch", () => {
  it("opens a fresh draft on a typed skeleton that compiles and tests green with no edits", async () => {
    await openHooks(TOOL_A);
    await poll(() => editorText()).toContain("defineToolAdapter");
    await poll(() => status().textContent()).toMatch(/^No draft saved yet: the editor holds the typed skeleton/);
    // Untouched, the skeleton is no unsaved change: leaving asks nothing.
    expect(await page.evaluate("Object.keys(sessionStorage)")).toEqual([]);
    await poll(() => problems().textContent()).toBe("No problems found.");

    await page.getByRole("button", { name: "Save draft" }).click();
    await poll(() => status().textContent()).toMatch(/^Saved version v1 · .*Compiles: stages before and after/);
    await page.getByRole("tab", { name: "Test" }).click();
    await page.getByRole("radio", { name: "before" }).check();
    await page.getByRole("button", { name: "Run before" }).click();
    await poll(() => page.locator(".test-outcome h4").textContent()).toMatch(/Result of before: passed, outcome continue/);
    await page.getByRole("radio", { name: "after" }).check();
    await page.getByRole("button", { name: "Run after" }).click();
    await poll(() => page.locator(".test-outcome h4").textContent()).toMatch(/Result of after: passed, outcome return/);
    // Green on both stages, so it becomes a revision as it stands.
    await page.getByRole("tab", { name: "Deploy" }).click();
    await page.getByRole("button", { name: "Create revision from saved version v1" }).click();
    await page.getByText(/^Revision r1 \(rev_\w+\) built from version v1/).waitFor();
  });

  it("offers templates by intent that each type-check as generated", async () => {
    await openHooks(TOOL_A);
    for (const label of [
      "Rewrite arguments",
      "Reject some calls",
      "Require approval",
      "Trim the result",
      "Pass everything through (typed skeleton)",
    ]) {
      await replaceText(source(), BROKEN);
      await poll(() => problems().textContent()).toMatch(/\(type\)/);
      await useTemplate(label);
      await poll(() => problems().textContent()).toBe("No problems found.");
      expect(await editorText()).toContain("defineToolAdapter");
    }
  });

  it("checks the shape rules as you type in the compiler's words, keeps one status line, and clears a stale compile", async () => {
    await openHooks(TOOL_A);
    await page.getByRole("button", { name: "Compile saved draft" }).click();
    await poll(() => status().textContent()).toMatch(/Compiles: stages before and after/);
    // Any edit makes the compile result stale: it is gone from the status line until the next compile.
    await source().locator(".view-lines").click();
    await page.keyboard.press("Control+End");
    await page.keyboard.type("// edited\n");
    await poll(() => status().textContent()).toMatch(/unsaved changes · no problems found as you type$/);

    await replaceText(source(), "export function before(input: unknown) {\n  return input;\n}\n");
    await poll(() => problems().textContent()).toContain(
      'export "before" is not allowed: a hook exports only `default` (its defineToolAdapter(...)) [export_forbidden]',
    );
    expect(await problems().textContent()).toContain("a hook must `export default defineToolAdapter({ ... })` [default_export_missing]");
    await poll(() => status().textContent()).toMatch(/· 2 problems, listed under the editor$/);
    expect(await status().textContent()).not.toContain("Compiles");
    // The compiler says the same, with the same codes.
    await page.getByRole("button", { name: "Save draft" }).click();
    await poll(() => problems().textContent()).toContain('(compiler): export "before" is not allowed');
    expect(await problems().textContent()).toContain("[export_forbidden]");

    await replaceText(source(), 'export default { apiVersion: "rayrun.hooks/v1" };\n');
    await poll(() => problems().textContent()).toContain(
      "the default export must be the value of defineToolAdapter({ ... }) [default_export_not_adapter]",
    );
    await useTemplate("Pass everything through (typed skeleton)");
    await poll(() => problems().textContent()).toBe("No problems found.");
    // Ctrl+S saves from the editor.
    await source().locator(".view-lines").click();
    await page.keyboard.press("Control+S");
    await poll(() => status().textContent()).toMatch(/^Saved version v\d+ · .*Compiles: stages before and after/);
  });

  it("keeps an unsaved draft through a reload, with a notice, and guards leaving it", async () => {
    await openHooks(TOOL_A);
    await source().locator(".view-lines").click();
    await page.keyboard.press("Control+End");
    await page.keyboard.type("// kept_across_a_reload\n");
    await poll(() => status().textContent()).toContain("unsaved changes");
    await poll(() => page.evaluate("Object.keys(sessionStorage).length")).toBe(1);

    // Leaving for the tool's other tab asks first; staying keeps the text.
    page.once("dialog", (dialog) => void dialog.dismiss());
    await page.getByRole("navigation", { name: "Tool tabs" }).getByRole("link", { name: "Definition and policy" }).click();
    await poll(() => page.url()).toMatch(/\/hooks$/);
    expect(await editorText()).toContain("kept_across_a_reload");

    // The Hooks tab's own panels are no leaving: switching them keeps the text and asks nothing.
    let prompts = 0;
    const countPrompt = () => void prompts++;
    page.on("dialog", countPrompt);
    for (const panel of ["Deploy", "History", "Logs", "Test"]) {
      await page.getByRole("tab", { name: panel, exact: true }).click();
      await poll(() => page.getByRole("tab", { name: panel, exact: true, selected: true }).count()).toBe(1);
      expect(await editorText()).toContain("kept_across_a_reload");
    }
    page.off("dialog", countPrompt);
    expect(prompts).toBe(0);
    // The tab's Reload asks before discarding: Cancel keeps the text.
    await page.getByRole("button", { name: "Reload", exact: true }).click();
    const discard = page.getByRole("dialog", { name: "Discard your unsaved changes?" });
    await discard.waitFor();
    await discard.getByRole("button", { name: "Cancel" }).click();
    await discard.waitFor({ state: "hidden" });
    expect(await editorText()).toContain("kept_across_a_reload");
    await poll(() => status().textContent()).toContain("unsaved changes");

    // A reload asks too (the browser's own prompt); going ahead restores the text from this tab's storage.
    page.once("dialog", (dialog) => {
      expect(dialog.type()).toBe("beforeunload");
      void dialog.accept();
    });
    await page.reload();
    await page.locator(".hook-source .monaco-editor").waitFor();
    await page.getByText(/^Restored your unsaved text from/).waitFor();
    await poll(() => editorText()).toContain("kept_across_a_reload");
    await poll(() => status().textContent()).toContain("unsaved changes");
    await expectAccessible(page, "hooks tab with a restored draft");

    // Saving stores it and forgets the copy.
    await page.keyboard.press("Control+S");
    await poll(() => status().textContent()).toMatch(/^Saved version v\d+/);
    await poll(() => page.evaluate("Object.keys(sessionStorage)")).toEqual([]);
    await page.getByRole("navigation", { name: "Tool tabs" }).getByRole("link", { name: "Definition and policy" }).click();
    await page.getByRole("heading", { name: "Policy per profile" }).waitFor();
  });

  it("shows nothing of tool A on tool B's screens, reached by URL and by link", async () => {
    // Tool A's Hooks tab with a compile failure on screen and a version diff open.
    await openHooks(TOOL_A);
    await replaceText(source(), "export const leak_marker = 1;\n");
    await page.getByRole("button", { name: "Save draft" }).click();
    // Saved (so leaving asks nothing), and the compiler's refusal is on screen.
    await poll(() => problems().textContent()).toContain('(compiler): export "leak_marker" is not allowed');
    expect(await status().textContent()).not.toContain("unsaved changes");
    await openNewestDiff();

    const clean = async (how: string) => {
      await poll(() => page.getByRole("heading", { level: 2, name: `Hook for ${TOOL_B}` }).count()).toBe(1);
      await poll(() => editorText()).toContain(`Hook for ${TOOL_B}`);
      expect(await page.content(), how).not.toContain("leak_marker");
      expect(await page.getByRole("heading", { name: /^Version v\d+ against/ }).count(), how).toBe(0);
      await poll(() => status().textContent()).toMatch(/^No draft saved yet/);
      expect(await page.getByRole("tab", { name: "Test", selected: true }).count(), how).toBe(1);
    };
    // By URL, straight from A's Hooks tab to B's.
    await page.evaluate(`location.hash = ${JSON.stringify(`#/w/${fixture.ws}/tools/${TOOL_B}/hooks`)}`);
    await clean("by URL");

    // By link: back to A (its diff again), then Tools → B → Hooks.
    await openHooks(TOOL_A);
    await openNewestDiff();
    await openScreen(page, "Tools");
    await page.getByLabel("Search").fill("export_report");
    await page.getByRole("link", { name: TOOL_B }).click();
    await page.getByRole("heading", { level: 1, name: TOOL_B }).waitFor();
    expect(await page.locator('pre[aria-label="Definition"]').textContent()).toContain('"name": "export_report"');
    await page.getByRole("navigation", { name: "Tool tabs" }).getByRole("link", { name: "Hooks" }).click();
    await page.locator(".hook-source .monaco-editor").waitFor();
    await clean("by link");

    // And a tool's definition page by URL from another's.
    await page.evaluate(`location.hash = ${JSON.stringify(`#/w/${fixture.ws}/tools/${TOOL_A}`)}`);
    await page.getByRole("heading", { level: 1, name: TOOL_A }).waitFor();
    await poll(() => page.locator('pre[aria-label="Definition"]').textContent()).toContain('"name": "lookup_customer"');
  });
});
