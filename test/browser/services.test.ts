// Services and tools in the console: secret headers entered once, refresh, payload
// capture, the refusal to delete a service whose tools have hook history, and the
// cleanup view (export, typed-confirmation reset) that lets the delete through.
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, inject, it } from "vitest";
import { request } from "../node/gateway.ts";
import { expectAccessible, launchChromium, openScreen, signIn } from "./browser.ts";
import { ADMIN_EMAIL } from "./global-setup.ts";

const fixture = inject("fixture");
const SECRET_VALUE = "Bearer upstream-secret-do-not-show";
let browser: Browser;
let context: BrowserContext;
let page: Page;

beforeAll(async () => {
  browser = await launchChromium();
  context = await browser.newContext({ viewport: { width: 1280, height: 860 }, acceptDownloads: true });
  page = await context.newPage();
  await signIn(page, fixture.origin, ADMIN_EMAIL);
});
afterAll(async () => browser?.close());

/** Saves a hook draft through the API, so the tool has hook history. */
async function saveDraft(toolUid: string): Promise<void> {
  const url = `${fixture.origin}/v1/workspaces/${fixture.ws}/tools/${toolUid}/hook/draft`;
  const auth = { authorization: `Bearer ${fixture.adminKey}` };
  const current = await fetch(url, { headers: auth });
  await current.arrayBuffer();
  const saved = await fetch(url, {
    method: "PUT",
    headers: { ...auth, "content-type": "application/json", "if-match": current.headers.get("etag") ?? "*" },
    body: JSON.stringify({ source: "export default {};\n" }),
  });
  if (saved.status !== 200) throw new Error(`draft save: ${saved.status} ${await saved.text()}`);
}

describe("services", () => {
  it("adds a service whose secret header value never comes back, refreshes it and turns payload capture on", async ({ expect }) => {
    await openScreen(page, "Services");
    await page.getByLabel("Slug").fill("docs");
    await page.getByLabel("MCP URL").fill(`${fixture.upstreamOrigin}/mcp`);
    await page.getByRole("button", { name: "Add a secret header" }).click();
    await page.getByLabel("Header name 1").fill("Authorization");
    await page.getByLabel("Header value 1").fill(SECRET_VALUE);
    await page.getByRole("button", { name: "Add service" }).click();
    await page
      .getByRole("status")
      .filter({ hasText: /^Added docs: \d+ tools indexed\.$/ })
      .waitFor();
    const row = page.getByRole("row", { name: /docs/ });
    expect(await row.textContent()).toContain("Authorization");
    expect(await page.content()).not.toContain("upstream-secret");
    const listed = await request(fixture.origin, "GET", `/v1/workspaces/${fixture.ws}/services`, fixture.adminKey);
    expect(JSON.stringify(listed)).not.toContain("upstream-secret");

    await page.getByRole("button", { name: "Refresh index of docs" }).click();
    await page
      .getByRole("status")
      .filter({ hasText: /^Indexed docs: 0 added, 0 changed, 0 removed, \d+ unchanged\.$/ })
      .waitFor();
    await row.getByRole("checkbox", { name: "Payload capture for docs" }).click();
    await page.getByRole("status").filter({ hasText: "Payload capture for docs is on." }).waitFor();
    const docs = (await request(fixture.origin, "GET", `/v1/workspaces/${fixture.ws}/services`, fixture.adminKey)).services.find(
      (s: { slug: string }) => s.slug === "docs",
    );
    expect(docs.payloadCapture).toBe(true);
    await expectAccessible(page, "Services after adding one");
  });

  it("refuses to delete a service whose tool has hook history, then deletes it once the hook is exported and reset", async ({ expect }) => {
    const tools = await request(fixture.origin, "GET", `/v1/workspaces/${fixture.ws}/tools`, fixture.adminKey);
    const tool = tools.tools.find((t: { publicName: string }) => t.publicName === "docs__search_release_notes");
    await saveDraft(tool.uid);

    await openScreen(page, "Services");
    page.once("dialog", (dialog) => void dialog.accept());
    await page.getByRole("button", { name: "Delete docs" }).click();
    const refusal = page.getByRole("alert");
    await refusal.waitFor();
    expect(await refusal.textContent()).toContain("(hook_history_exists)");
    // The tool by the name agents call it, not its id.
    expect(await refusal.textContent()).toContain("Tools with hook history: docs__search_release_notes");
    expect(await refusal.textContent()).not.toContain(tool.uid);

    await page.getByRole("button", { name: "Hook history of docs" }).click();
    const history = page.getByRole("region", { name: /Hook history of docs/ });
    await history.getByRole("row", { name: /search_release_notes/ }).waitFor();
    await expectAccessible(page, "hook history view");
    const download = page.waitForEvent("download");
    await history.getByRole("button", { name: "Export hook history of search_release_notes" }).click();
    expect((await download).suggestedFilename()).toBe("search_release_notes-hook-history.json");

    // The reset asks for the tool's name; a wrong answer changes nothing.
    page.once("dialog", (dialog) => void dialog.accept("wrong"));
    await history.getByRole("button", { name: "Reset hook of search_release_notes" }).click();
    expect(await history.getByRole("row", { name: /search_release_notes/ }).count()).toBe(1);
    page.once("dialog", (dialog) => void dialog.accept("search_release_notes"));
    await history.getByRole("button", { name: "Reset hook of search_release_notes" }).click();
    await history.getByText("No hook history.").waitFor();

    page.once("dialog", (dialog) => void dialog.accept());
    await page.getByRole("button", { name: "Delete docs" }).click();
    await page.getByRole("status").filter({ hasText: "Deleted docs." }).waitFor();
    await page.getByRole("button", { name: "View hook history of docs" }).waitFor();
  });
});
