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

/** Opens a screen through the navigation, as a user does. */
export async function openScreen(page: Page, name: string): Promise<void> {
  await page.getByRole("navigation", { name: "Workspace screens" }).getByRole("link", { name }).click();
  await page.getByRole("heading", { level: 1, name }).waitFor();
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
