// Tools in the console: a definition the upstream changed waits for review, shown
// beside the approved one line against line; the Overview's review link opens the
// list filtered to it; approving lets it through. 200 tools are searched, filtered
// and paged. API refusals read as sentences with their code.
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, inject, it } from "vitest";
import { request } from "../node/gateway.ts";
import { expectAccessible, expectNoSidewaysOverflow, launchChromium, openScreen, signIn } from "./browser.ts";
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

const setVariant = (variant: number, key = "browser-review") =>
  fetch(`${fixture.upstreamOrigin}/fixtures/mutable/${key}/state`, { method: "POST", body: JSON.stringify({ variant }) }).then((r) =>
    r.arrayBuffer(),
  );

describe("tools", () => {
  it("shows a changed definition beside the approved one, and approving makes it active", async ({ expect }) => {
    await setVariant(0);
    await request(fixture.origin, "POST", `/v1/workspaces/${fixture.ws}/services`, fixture.adminKey, {
      slug: "mut",
      url: `${fixture.upstreamOrigin}/fixtures/mutable/browser-review/mcp`,
    });
    await setVariant(1);

    await openScreen(page, "Services");
    await page.getByRole("button", { name: "Refresh index of mut" }).click();
    await page
      .getByRole("status")
      .filter({ hasText: /^Indexed mut: 0 added, 1 changed/ })
      .waitFor();

    // The Overview's "awaiting review" opens the list filtered to the tools in review.
    await openScreen(page, "Overview");
    await page.getByRole("link", { name: /\d+ awaiting review/ }).click();
    await page.getByRole("heading", { level: 1, name: "Tools" }).waitFor();
    expect(page.url()).toContain("?status=review_required");
    expect(await page.getByLabel("Review").inputValue()).toBe("review_required");
    const rows = page.getByRole("table", { name: "Tools" }).locator("tbody tr");
    await expect.poll(() => rows.allTextContents()).toEqual([expect.stringMatching(/mut__echo.*review required/)]);
    await page.getByRole("link", { name: "mut__echo" }).click();
    const approved = page.getByLabel("Approved definition");
    const proposed = page.getByLabel("New definition");
    await proposed.waitFor();
    expect(await approved.textContent()).not.toContain("loud");
    expect(await proposed.textContent()).toContain('"loud"');
    // Side by side, line against line: the new lines are marked on the right, wrapped inside the window at 1440 px.
    expect(await proposed.locator(".diff-added", { hasText: "loud" }).first().textContent()).toMatch(/^\+ .*"loud"/);
    expect(await approved.locator(".diff-added").count()).toBe(0);
    await page.setViewportSize({ width: 1440, height: 900 });
    await expectNoSidewaysOverflow(page, "tool review");
    await page.setViewportSize({ width: 1280, height: 860 });
    await expectAccessible(page, "tool review");
    await page.getByRole("button", { name: "Approve new definition" }).click();
    await page.getByText("Review state: active").waitFor();
    expect(await page.getByLabel("New definition").count()).toBe(0);

    // echo has no outputSchema, so the API refuses a projection; the console says why, with the code.
    await page.getByLabel("Fields (comma-separated)").fill("message");
    await page.getByRole("button", { name: "Save projection" }).click();
    expect(await page.getByRole("alert").textContent()).toContain("(projection_requires_output_schema)");
  });

  it("shows the invisible characters of a changed description, and says they are there, before it is approved", async ({ expect }) => {
    // Round 6: an upstream hid an instruction in Unicode tag characters; the review showed `"Echo a message back."`
    // on both sides but the changed line, and approving sent the hidden sentence to every agent.
    await setVariant(0, "browser-hidden");
    await request(fixture.origin, "POST", `/v1/workspaces/${fixture.ws}/services`, fixture.adminKey, {
      slug: "hid",
      url: `${fixture.upstreamOrigin}/fixtures/mutable/browser-hidden/mcp`,
    });
    await setVariant(4, "browser-hidden");
    await openScreen(page, "Services");
    await page.getByRole("button", { name: "Refresh index of hid" }).click();
    await page
      .getByRole("status")
      .filter({ hasText: /^Indexed hid: 0 added, 1 changed/ })
      .waitFor();
    await page.goto(`${fixture.origin}/#/w/${fixture.ws}/tools/hid__echo`);
    const proposed = page.getByLabel("New definition");
    await proposed.waitFor();
    const shown = (await proposed.textContent())!;
    // Each hidden character reads as its escape ("P" is U+E0050, a surrogate pair), and none is left unseen.
    expect(shown).toContain("Echo a message back.\\uDB40\\uDC50\\uDB40\\uDC75");
    expect(shown).toContain("\\u200B");
    expect([...shown].filter((character) => character.codePointAt(0)! >= 0xe0000)).toEqual([]);
    expect(await page.getByRole("note").textContent()).toContain("This definition holds 30 invisible characters");
    await expectAccessible(page, "tool review with hidden characters");
  });

  it("searches, filters and pages 200 tools", async ({ expect }) => {
    const created = await request(fixture.origin, "POST", `/v1/workspaces/${fixture.ws}/services`, fixture.adminKey, {
      slug: "many",
      url: `${fixture.upstreamOrigin}/fixtures/tools/200/mcp`,
    });
    expect(created.index.added).toHaveLength(200);
    await openScreen(page, "Tools");
    await page.getByLabel("Service").selectOption({ label: "many" });
    const rows = page.getByRole("table", { name: "Tools" }).locator("tbody tr");
    const pages = page.getByRole("navigation", { name: "Pages" });
    await expect.poll(() => pages.getByRole("status").textContent()).toBe("1–50 of 200");
    expect(await rows.count()).toBe(50);
    await pages.getByRole("button", { name: "Next page" }).click();
    await expect.poll(() => pages.getByRole("status").textContent()).toBe("51–100 of 200");
    expect(await rows.first().textContent()).toContain("many__tool_00050");

    // Search narrows it on the server, and starts again at the first page.
    await page.getByLabel("Search").fill("tool_0019");
    await expect.poll(() => pages.getByRole("status").textContent()).toBe("1–10 of 10");
    expect(await rows.first().textContent()).toContain("many__tool_00190");
    await page.getByLabel("Search").fill("tool_00123");
    await expect.poll(() => rows.allTextContents()).toEqual([expect.stringMatching(/many__tool_00123.*many.*active.*default: allow/)]);
    // Filtered by mode under a profile: none of these is blocked under the default profile.
    await page.getByLabel("Search").fill("");
    await page.getByLabel("Mode").selectOption("block");
    await page.getByLabel("Under profile").selectOption({ label: "default" });
    await page.getByText("No tools match.").waitFor();
    await page.getByLabel("Mode").selectOption("allow");
    await expect.poll(() => pages.getByRole("status").textContent()).toBe("1–50 of 200");
    // The filters are in the URL: a reload keeps them.
    await page.reload();
    await expect.poll(() => pages.getByRole("status").textContent()).toBe("1–50 of 200");
    expect(await page.getByLabel("Service").locator("option:checked").textContent()).toBe("many");
    await expectAccessible(page, "200 tools");
    await expectNoSidewaysOverflow(page, "200 tools");
    const removed = await fetch(`${fixture.origin}/v1/workspaces/${fixture.ws}/services/${created.service.id}`, {
      method: "DELETE",
      headers: { authorization: `Bearer ${fixture.adminKey}` },
    });
    expect(removed.status).toBe(204);
  });

  it("holds back a tool a refresh adds as a new tool in review, and approving it makes it active", async ({ expect }) => {
    await setVariant(0, "browser-new-tool");
    await request(fixture.origin, "POST", `/v1/workspaces/${fixture.ws}/services`, fixture.adminKey, {
      slug: "grow",
      url: `${fixture.upstreamOrigin}/fixtures/mutable/browser-new-tool/mcp`,
    });
    await setVariant(3, "browser-new-tool");

    await openScreen(page, "Services");
    expect(await page.getByRole("row", { name: /grow/ }).textContent()).toContain("reviewed when a refresh adds them");
    await page.getByRole("button", { name: "Refresh index of grow" }).click();
    await page
      .getByRole("status")
      .filter({
        hasText:
          /^Indexed grow: 1 added, 0 changed, 0 removed, 3 unchanged\. 1 tool awaits review on the Tools screen: delete_everything\.$/,
      })
      .waitFor();

    await openScreen(page, "Tools");
    expect(await page.getByRole("row", { name: /grow__delete_everything/ }).textContent()).toContain("review required: new tool");
    expect(await page.getByRole("row", { name: /grow__echo/ }).textContent()).not.toContain("review");
    await page.getByRole("link", { name: "grow__delete_everything" }).click();
    await page.getByText("This tool is new: agents cannot see or call it until its definition is approved.").waitFor();
    expect(await page.getByLabel("New definition").textContent()).toContain("Deletes every record.");
    await expectAccessible(page, "new tool review");
    await page.getByRole("button", { name: "Approve new tool" }).click();
    await page.getByText("Review state: active").waitFor();
  });

  it("connects a service whose first tools wait for review when the admin asks for it", async ({ expect }) => {
    await setVariant(0, "browser-held");
    await openScreen(page, "Services");
    await page.getByLabel("Slug").fill("held");
    await page.getByLabel("MCP URL").fill(`${fixture.upstreamOrigin}/fixtures/mutable/browser-held/mcp`);
    await page.getByLabel("Review its tools before agents can call them").check();
    await page.getByRole("button", { name: "Add service" }).click();
    await page
      .getByRole("status")
      .filter({ hasText: "Added held: 3 tools indexed. 3 tools await review on the Tools screen: echo, retired, stable." })
      .waitFor();
    expect(await page.getByRole("row", { name: /held/ }).textContent()).toContain("reviewed, from the first indexing");
    const held = (await request(fixture.origin, "GET", `/v1/workspaces/${fixture.ws}/services`, fixture.adminKey)).services.find(
      (service: { slug: string }) => service.slug === "held",
    );
    expect(held.reviewInitialTools).toBe(true);

    await openScreen(page, "Tools");
    for (const name of ["held__echo", "held__retired", "held__stable"]) {
      expect(await page.getByRole("row", { name: new RegExp(name) }).textContent()).toContain("review required: new tool");
    }
  });
});
