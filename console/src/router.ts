// A hash router: the console is static files, so every screen lives behind `#`
// and a reload never asks the server for a path it does not have. A screen with
// unsaved work can guard leaving it (another hash, a reload, closing the tab).
import { useEffect, useState } from "preact/hooks";

export const SCREENS = ["overview", "services", "tools", "profiles", "keys", "members", "approvals", "logs", "runs"] as const;
export type Screen = (typeof SCREENS)[number];

export interface Route {
  /** The workspace in view; absent until one is picked. */
  ws: string | null;
  screen: Screen;
  /** Path segments after the screen, e.g. a tool's name. */
  rest: string[];
  /** What follows `?` in the hash: a screen's filters, so a link can open a filtered list. */
  query: URLSearchParams;
}

/** `#/w/<ws>/<screen>/<rest…>?<query>` */
export function parseRoute(hash: string): Route {
  const [path = "", search = ""] = hash.replace(/^#\/?/, "").split("?", 2);
  const parts = path.split("/").filter(Boolean).map(decodeURIComponent);
  const query = new URLSearchParams(search);
  if (parts[0] !== "w" || !parts[1]) return { ws: null, screen: "overview", rest: [], query };
  const screen = SCREENS.find((name) => name === parts[2]) ?? "overview";
  return { ws: parts[1], screen, rest: parts.slice(3), query };
}

export function href(ws: string, screen: Screen, ...rest: string[]): string {
  return `#/${["w", ws, screen, ...rest].map(encodeURIComponent).join("/")}`;
}

/** `href` with a query; empty values are left out, so a cleared filter leaves no trace in the URL. */
export function hrefWith(ws: string, screen: Screen, rest: string[], query: Record<string, string | undefined>): string {
  const search = new URLSearchParams(Object.entries(query).filter((entry): entry is [string, string] => Boolean(entry[1])));
  const text = search.toString();
  return `${href(ws, screen, ...rest)}${text ? `?${text}` : ""}`;
}

export function navigate(to: string): void {
  location.hash = to;
}

/** Replaces the hash without a history entry (typing into a filter should not fill Back). */
export function replaceRoute(to: string): void {
  history.replaceState(history.state, "", `${location.pathname}${location.search}${to}`);
  notify(location.hash);
}

/** What would be lost by leaving now, as a sentence; null when nothing would be. */
let leaveWarning: (() => string | null) | null = null;

/**
 * While `warning` is set, leaving the screen asks first: another hash (a link, Back, a typed URL) with a
 * confirmation that can keep the user here, a reload or a closed tab with the browser's own prompt.
 */
export function useLeaveGuard(warning: string | null): void {
  useEffect(() => {
    if (!warning) return;
    const check = () => warning;
    leaveWarning = check;
    const beforeUnload = (event: BeforeUnloadEvent) => {
      event.preventDefault();
      // Older browsers need a returnValue to show their prompt.
      event.returnValue = "";
    };
    addEventListener("beforeunload", beforeUnload);
    return () => {
      if (leaveWarning === check) leaveWarning = null;
      removeEventListener("beforeunload", beforeUnload);
    };
  }, [warning]);
}

/** Asks before an action that leaves the guarded screen without a hash change (signing out); true: go ahead. */
export function mayLeave(): boolean {
  const warning = leaveWarning?.();
  return !warning || confirm(warning);
}

let current = location.hash;
const listeners = new Set<(hash: string) => void>();
const notify = (hash: string) => {
  current = hash;
  for (const listener of listeners) listener(hash);
};

addEventListener("hashchange", () => {
  if (location.hash === current) return;
  const warning = leaveWarning?.();
  if (warning && !confirm(warning)) {
    // Stay: put the URL of the guarded screen back without another hashchange.
    history.replaceState(history.state, "", `${location.pathname}${location.search}${current}`);
    return;
  }
  notify(location.hash);
});

export function useRoute(): Route {
  const [hash, setHash] = useState(current);
  useEffect(() => {
    listeners.add(setHash);
    return () => {
      listeners.delete(setHash);
    };
  }, []);
  return parseRoute(hash);
}
