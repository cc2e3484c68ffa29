// Tools in the console: a definition the upstream changed waits for review, shown
// beside the approved one; approving lets it through. API refusals read as sentences with their code.
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

const setVariant = (variant: number) =>
  fetch(`${fixture.upstreamOrigin}/fixtures/mutable/browser-review/state`, { method: "POST", body: JSON.stringify({ variant }) }).then(
    (r) => r.arrayBuffer(),
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

    await openScreen(page, "Tools");
    expect(await page.getByRole("row", { name: /mut__echo/ }).textContent()).toContain("review required");
    await page.getByRole("link", { name: "mut__echo" }).click();
    const approved = page.getByLabel("Approved definition");
    const proposed = page.getByLabel("New definition");
    await proposed.waitFor();
    expect(await approved.textContent()).not.toContain("loud");
    expect(await proposed.textContent()).toContain('"loud"');
    await expectAccessible(page, "tool review");
    await page.getByRole("button", { name: "Approve new definition" }).click();
    await page.getByText("Review state: active").waitFor();
    expect(await page.getByLabel("New definition").count()).toBe(0);

    // echo has no outputSchema, so the API refuses a projection; the console says why, with the code.
    await page.getByLabel("Fields (comma-separated)").fill("message");
    await page.getByRole("button", { name: "Save projection" }).click();
    expect(await page.getByRole("alert").textContent()).toContain("(projection_requires_output_schema)");
  });
});
