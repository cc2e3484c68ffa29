// Debian's Chromium under playwright-core, and the steps every browser test shares.
import { AxeBuilder } from "@axe-core/playwright";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { chromium, type Browser, type Page } from "playwright-core";
import { expect } from "vitest";

export const screenshotsDir = join(import.meta.dirname, "../../docs/screenshots");

export async function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? "/usr/bin/chromium",
    headless: true,
    args: [
      "--no-sandbox",
      "--disable-gpu",
      "--disable-background-networking",
      "--disable-component-update",
      "--no-first-run",
      "--disable-sync",
    ],
  });
}

/** Signs in through the console's own form (the dev login) and waits for the Overview. */
export async function signIn(page: Page, origin: string, email: string): Promise<void> {
  await page.goto(`${origin}/`);
  await page.getByLabel("Email").fill(email);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.getByRole("heading", { level: 1, name: "Overview" }).waitFor();
}

/** Opens a screen through the navigation, as a user does (on a phone, through the Menu button first). */
export async function openScreen(page: Page, name: string): Promise<void> {
  const menu = page.getByRole("button", { name: "Menu" });
  if (await menu.isVisible()) {
    if ((await menu.getAttribute("aria-expanded")) !== "true") await menu.click();
  }
  // The Approvals link carries the pending count after its name.
  await page
    .getByRole("navigation", { name: "Workspace screens" })
    .getByRole("link", { name: new RegExp(`^${name}\\b`) })
    .click();
  await page.getByRole("heading", { level: 1, name }).waitFor();
}

/** What sticks out past the window's right edge, outermost first, for a failure's message. */
const WIDE_ELEMENTS = `[...document.querySelectorAll("body *")]
  .filter((el) => el.getBoundingClientRect().right > innerWidth + 0.5)
  .slice(0, 5)
  .map((el) => el.tagName.toLowerCase() + (el.className && typeof el.className === "string" ? "." + el.className.trim().replace(/\\s+/g, ".") : "") + " " + Math.round(el.getBoundingClientRect().width) + "px")`;

/** Nothing sticks out of the window sideways: the page cannot be scrolled horizontally. */
export async function expectNoSidewaysOverflow(page: Page, what: string): Promise<void> {
  const { scrollWidth, innerWidth } = (await page.evaluate("({ scrollWidth: document.documentElement.scrollWidth, innerWidth })")) as {
    scrollWidth: number;
    innerWidth: number;
  };
  const culprits = scrollWidth > innerWidth ? ((await page.evaluate(WIDE_ELEMENTS)) as string[]).join(", ") : "";
  expect(scrollWidth, `${what} at ${innerWidth} px (${culprits})`).toBeLessThanOrEqual(innerWidth);
}

/** axe-core on the page as it stands: no serious or critical violation. */
export async function expectAccessible(page: Page, screen: string): Promise<void> {
  const results = await new AxeBuilder({ page }).analyze();
  const bad = results.violations
    .filter((violation) => violation.impact === "serious" || violation.impact === "critical")
    .map((violation) => `${violation.id}: ${violation.help} (${violation.nodes.map((node) => node.target.join(" ")).join(", ")})`);
  expect(bad, `axe on ${screen}`).toEqual([]);
}

export async function screenshot(page: Page, name: string): Promise<void> {
  mkdirSync(screenshotsDir, { recursive: true });
  await page.screenshot({ path: join(screenshotsDir, `${name}.png`), fullPage: false });
}
