// Light or dark: the system's choice unless the user picked one with the toggle,
// which is remembered in localStorage (nothing is stored while it follows the
// system). The resolved theme is `data-theme` on <html>, which the stylesheet,
// Monaco and charts read.
import { useEffect, useState } from "preact/hooks";

export type ThemeChoice = "system" | "light" | "dark";
export type Theme = "light" | "dark";

const STORAGE_KEY = "rayrun.theme";
const darkQuery = matchMedia("(prefers-color-scheme: dark)");
const listeners = new Set<(theme: Theme) => void>();

export function themeChoice(): ThemeChoice {
  const stored = localStorage.getItem(STORAGE_KEY);
  return stored === "light" || stored === "dark" ? stored : "system";
}

export function currentTheme(): Theme {
  const choice = themeChoice();
  return choice === "system" ? (darkQuery.matches ? "dark" : "light") : choice;
}

function apply(): void {
  const theme = currentTheme();
  document.documentElement.dataset.theme = theme;
  for (const listener of listeners) listener(theme);
}

export function setThemeChoice(choice: ThemeChoice): void {
  if (choice === "system") localStorage.removeItem(STORAGE_KEY);
  else localStorage.setItem(STORAGE_KEY, choice);
  apply();
}

/** Calls `listener` whenever the resolved theme may have changed; returns the unsubscribe. */
export function onThemeChange(listener: (theme: Theme) => void): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

darkQuery.addEventListener("change", apply);
apply();

export function useTheme(): { choice: ThemeChoice; theme: Theme; choose: (choice: ThemeChoice) => void } {
  const [state, setState] = useState(() => ({ choice: themeChoice(), theme: currentTheme() }));
  useEffect(() => onThemeChange((theme) => setState({ choice: themeChoice(), theme })), []);
  return { ...state, choose: setThemeChoice };
}

/** Colours for canvas drawing (charts), from the stylesheet's variables for the current theme. */
export function chartColors(): { text: string; grid: string; ok: string; bad: string; accent: string; other: string } {
  const style = getComputedStyle(document.documentElement);
  const read = (name: string) => style.getPropertyValue(name).trim();
  return {
    text: read("--fg"),
    grid: read("--line"),
    ok: read("--ok"),
    bad: read("--danger"),
    accent: read("--accent"),
    other: read("--chart-other"),
  };
}
