// Access profiles in the console: a new profile starts blocking everything unless
// the admin chooses otherwise, the tools × profiles matrix changes one tool's
// mode under a second profile and /mcp then refuses it there (directly and
// through run_code), loosening asks first, every change can be undone, risk
// rules show as locked cells, and profiles are renamed and deleted.
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, inject, it } from "vitest";
import { request } from "../node/gateway.ts";
import { expectAccessible, launchChromium, openScreen, screenshot, signIn } from "./browser.ts";
import { ADMIN_EMAIL } from "./global-setup.ts";
import { connectAgent } from "./mcp-agent.ts";

const fixture = inject("fixture");
const TOOL = "demo__lookup_customer";
let browser: Browser;
let page: Page;

beforeAll(async () => {
  browser = await launchChromium();
  page = await (await browser.newContext({ viewport: { width: 1440, height: 900 } })).newPage();
  await signIn(page, fixture.origin, ADMIN_EMAIL);
});
afterAll(async () => browser?.close());

/** The agent's call, directly and through Code Mode: true when the upstream answered. */
async function reaches(key: string): Promise<{ direct: boolean; viaCode: boolean }> {
  const agent = await connectAgent(fixture.origin, key);
  try {
    const direct = await agent
      .callTool({ name: TOOL, arguments: { email: "ada@example.com" } })
      .then((result) => !result.isError)
      .catch(() => false);
    const code = await agent.callTool({
      name: "run_code",
      arguments: { code: "const r = await tools.demo__lookup_customer({ email: 'ada@example.com' }); return r.name;" },
    });
    return { direct, viaCode: !code.isError && JSON.stringify(code.content).includes("Ada Lovelace") };
  } finally {
    await agent.close();
  }
}

const cell = (tool: string, profile: string) => page.getByLabel(`Mode of ${tool} for profile ${profile}`);

describe("profiles", () => {
  it("creates a profile with block preselected; the matrix changes a tool's mode there and /mcp enforces it", async ({ expect }) => {
    await openScreen(page, "Profiles");
    const form = page.getByRole("form", { name: "Create a profile" });
    expect(await form.getByRole("radio", { name: /^block/ }).isChecked()).toBe(true);

    // A profile made with the defaults reaches nothing.
    await form.getByLabel("Name").fill("locked down");
    await form.getByRole("button", { name: "Create profile" }).click();
    await page.getByText("Created profile locked down (default mode block).").waitFor();

    // The second profile: allow by default, with Code Mode beside direct tools.
    await form.getByLabel("Name").fill("partners");
    await form.getByRole("radio", { name: "allow", exact: true }).check();
    await form.getByLabel("Discovery on /mcp").selectOption("both");
    await form.getByRole("button", { name: "Create profile" }).click();
    await page.getByText("Created profile partners (default mode allow).").waitFor();
    const { profiles } = await request(fixture.origin, "GET", `/v1/workspaces/${fixture.ws}/profiles`, fixture.adminKey);
    const partners = (profiles as { id: string; name: string; discovery: string }[]).find((p) => p.name === "partners")!;
    expect(partners.discovery).toBe("both");
    const lockedDown = (profiles as { id: string; name: string; defaultMode: string }[]).find((p) => p.name === "locked down")!;
    expect(lockedDown.defaultMode).toBe("block");
    const key = (
      await request(fixture.origin, "POST", `/v1/workspaces/${fixture.ws}/keys`, fixture.adminKey, {
        name: "partner agent",
        scopes: ["tools:call"],
        profileId: partners.id,
      })
    ).secret as string;
    expect(await reaches(key)).toEqual({ direct: true, viaCode: true });

    // Block the tool under partners only: tightening needs no confirmation, and offers undo.
    await page.getByLabel("Search tools").fill("lookup_customer");
    await cell(TOOL, "partners").selectOption("block");
    await page
      .getByRole("status")
      .filter({ hasText: `${TOOL} under partners: the profile default (allow) → block.` })
      .waitFor();
    await expect.poll(() => cell(TOOL, "partners").locator("xpath=ancestor::td").textContent()).toContain("block");
    // The default profile is untouched.
    expect(await cell(TOOL, "default").locator("xpath=ancestor::td").textContent()).not.toContain("locked");
    await expect.poll(() => reaches(key), { timeout: 10_000 }).toEqual({ direct: false, viaCode: false });

    // Undo puts the profile default back.
    await page.getByRole("button", { name: "Undo" }).click();
    await expect.poll(() => cell(TOOL, "partners").inputValue()).toBe("");
    await expect.poll(() => reaches(key), { timeout: 10_000 }).toEqual({ direct: true, viaCode: true });

    // Under locked down, allowing the tool loosens access: it asks first, and Cancel changes nothing.
    await cell(TOOL, "locked down").selectOption("allow");
    const dialog = page.getByRole("dialog");
    await expect.poll(() => dialog.textContent()).toMatch(/from block to allow/);
    await dialog.getByRole("button", { name: "Cancel" }).click();
    // The cell is set back once the dialog has closed; choosing again before that would be undone by it.
    await dialog.waitFor({ state: "hidden" });
    await expect.poll(() => cell(TOOL, "locked down").inputValue()).toBe("");
    await cell(TOOL, "locked down").selectOption("allow");
    await expect.poll(() => dialog.textContent()).toMatch(/from block to allow/);
    await dialog.getByRole("button", { name: "Change to allow" }).click();
    await page
      .getByRole("status")
      .filter({ hasText: `${TOOL} under locked down: the profile default (block) → allow.` })
      .waitFor();

    // A risk rule is a locked cell: delete_record stays blocked under partners whatever its override.
    await request(fixture.origin, "PATCH", `/v1/workspaces/${fixture.ws}/profiles/${partners.id}`, fixture.adminKey, {
      riskRules: { destructiveHint: { mode: "block", whenMissing: "ignore" } },
    });
    await page.reload();
    await page.getByLabel("Search tools").fill("delete_record");
    const locked = cell("demo__delete_record", "partners").locator("xpath=ancestor::td");
    await expect.poll(() => locked.textContent()).toContain("locked at block by its destructiveHint rule");
    expect(
      await cell("demo__delete_record", "partners")
        .locator("option", { hasText: /^allow/ })
        .isDisabled(),
    ).toBe(true);
    await page.getByLabel("Search tools").fill("");
    await page.getByRole("table", { name: "Effective mode of each tool under each profile" }).waitFor();
    await expectAccessible(page, "profiles and the matrix");
    // The matrix at the top of the window, with the locked delete_record row in it.
    await page.evaluate("document.getElementById('matrix-title').scrollIntoView()");
    await screenshot(page, "profile-matrix");

    // The Tools screen shows the tool's effective mode per profile.
    await openScreen(page, "Tools");
    await page.getByLabel("Search").fill("lookup_customer");
    const row = page.getByRole("row", { name: new RegExp(TOOL) });
    await expect.poll(() => row.textContent()).toMatch(/default: allow.*locked down: allow.*partners: allow/s);

    // The run_code calls above are listed under Code Mode runs by the key's name, not its id.
    await openScreen(page, "Code Mode runs");
    const runs = page.getByRole("table", { name: "Code Mode runs" });
    await expect.poll(() => runs.textContent(), { timeout: 20_000 }).toContain("partner agent");
    expect(await runs.textContent()).not.toContain("key:key_");
  });

  it("renames a profile, refuses to delete one a key belongs to, naming the key, then deletes it", async ({ expect }) => {
    await openScreen(page, "Profiles");
    await page.getByRole("button", { name: "Rename partners" }).click();
    await page.getByLabel("New name for partners").fill("partner agents");
    await page.getByRole("button", { name: "Save name" }).click();
    await page.getByText("Renamed partners to partner agents.").waitFor();

    await page.getByRole("button", { name: "Delete partner agents" }).click();
    const dialog = page.getByRole("dialog");
    await dialog.getByLabel("Type partner agents to confirm").fill("partner agents");
    await dialog.getByRole("button", { name: "Delete profile" }).click();
    const refusal = page.getByRole("alert").filter({ hasText: "profile_in_use" });
    await expect.poll(() => refusal.textContent()).toContain("Keys in it: partner agent");

    const { keys } = await request(fixture.origin, "GET", `/v1/workspaces/${fixture.ws}/keys`, fixture.adminKey);
    const partnerKey = (keys as { id: string; name: string }[]).find((k) => k.name === "partner agent")!;
    await request(fixture.origin, "DELETE", `/v1/workspaces/${fixture.ws}/keys/${partnerKey.id}`, fixture.adminKey);
    await page.getByRole("button", { name: "Delete partner agents" }).click();
    await dialog.getByLabel("Type partner agents to confirm").fill("partner agents");
    await dialog.getByRole("button", { name: "Delete profile" }).click();
    await page.getByText("Deleted profile partner agents.").waitFor();
    await expect.poll(() => page.getByRole("button", { name: "Delete partner agents" }).count()).toBe(0);
  });
});
