// worker/mcp/ reads top to bottom: the endpoint over one layer per protocol revision over one request core,
// with no module importing one that (directly or not) imports it back. A cycle there had hidden which layer
// owned what; this keeps one from coming back.
import { readdirSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { describe, it } from "vitest";

const folder = resolve(import.meta.dirname, "../../worker/mcp");

/** Each module of the folder (tests aside) with the folder's modules it imports, types included. */
function importGraph(): Map<string, string[]> {
  const modules = readdirSync(folder).filter((name) => name.endsWith(".ts") && !name.endsWith(".test.ts"));
  const graph = new Map<string, string[]>();
  for (const name of modules) {
    const source = readFileSync(join(folder, name), "utf8");
    const imported = [...source.matchAll(/from\s+"\.\/([^"]+\.ts)"/g)].map((match) => match[1]!);
    graph.set(name, imported);
  }
  return graph;
}

/** Every cycle found by a depth-first walk, each as the path that closes it. */
function cycles(graph: Map<string, string[]>): string[][] {
  const found: string[][] = [];
  const state = new Map<string, "open" | "done">();
  const walk = (name: string, path: string[]) => {
    state.set(name, "open");
    for (const next of graph.get(name) ?? []) {
      if (state.get(next) === "open") found.push([...path.slice(path.indexOf(next)), name, next]);
      else if (!state.has(next)) walk(next, [...path, name]);
    }
    state.set(name, "done");
  };
  for (const name of graph.keys()) if (!state.has(name)) walk(name, []);
  return found;
}

describe("worker/mcp layout", () => {
  it("has no import cycles", ({ expect }) => {
    const graph = importGraph();
    expect(graph.size).toBeGreaterThan(10);
    expect(cycles(graph)).toEqual([]);
  });

  it("finds a cycle when there is one", ({ expect }) => {
    const graph = new Map([
      ["a.ts", ["b.ts"]],
      ["b.ts", ["c.ts"]],
      ["c.ts", ["a.ts"]],
    ]);
    expect(cycles(graph)).toEqual([["a.ts", "b.ts", "c.ts", "a.ts"]]);
  });
});
