// A hash router: the console is static files, so every screen lives behind `#`
// and a reload never asks the server for a path it does not have.
import { useEffect, useState } from "preact/hooks";

export const SCREENS = ["overview", "services", "tools", "keys", "approvals", "logs", "runs"] as const;
export type Screen = (typeof SCREENS)[number];

export interface Route {
  /** The workspace in view; absent until one is picked. */
  ws: string | null;
  screen: Screen;
  /** Path segments after the screen, e.g. a tool's uid. */
  rest: string[];
}

/** `#/w/<ws>/<screen>/<rest…>` */
export function parseRoute(hash: string): Route {
  const parts = hash.replace(/^#\/?/, "").split("/").filter(Boolean).map(decodeURIComponent);
  if (parts[0] !== "w" || !parts[1]) return { ws: null, screen: "overview", rest: [] };
  const screen = SCREENS.find((name) => name === parts[2]) ?? "overview";
  return { ws: parts[1], screen, rest: parts.slice(3) };
}

export function href(ws: string, screen: Screen, ...rest: string[]): string {
  return `#/${["w", ws, screen, ...rest].map(encodeURIComponent).join("/")}`;
}

export function navigate(to: string): void {
  location.hash = to;
}

export function useRoute(): Route {
  const [hash, setHash] = useState(location.hash);
  useEffect(() => {
    const changed = () => setHash(location.hash);
    addEventListener("hashchange", changed);
    return () => removeEventListener("hashchange", changed);
  }, []);
  return parseRoute(hash);
}
