// worker/ has no import cycles, types included: a cycle hides which module owns what (issue 29 found two in
// worker/mcp/, and one more between http/app.ts and leases/change-window.ts). And worker/mcp/ reads top to bottom:
// the endpoint over one thin layer per protocol revision over one request core, which knows no revision's layer.
import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { describe, it } from "vitest";

const worker = resolve(import.meta.dirname, "../../worker");

/** Every module under `folder` (tests and declaration files aside), as paths relative to worker/. */
function modulesUnder(folder: string): string[] {
  const found: string[] = [];
  for (const name of readdirSync(folder)) {
    const path = join(folder, name);
    if (statSync(path).isDirectory()) found.push(...modulesUnder(path));
    else if (name.endsWith(".ts") && !name.endsWith(".test.ts") && !name.endsWith(".d.ts")) found.push(relative(worker, path));
  }
  return found;
}

/** Each module with the modules of worker/ it imports (static, dynamic and type-only imports alike). */
function importGraph(): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const module of modulesUnder(worker)) {
    const source = readFileSync(join(worker, module), "utf8");
    const imported = [...source.matchAll(/(?:\bfrom|\bimport)\s*\(?\s*"(\.{1,2}\/[^"]+\.ts)"/g)]
      .map((match) => relative(worker, resolve(dirname(join(worker, module)), match[1]!)))
      .filter((path) => !path.startsWith(".."));
    graph.set(module, imported);
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

/** Everything `from` imports, directly or not. */
function reachable(graph: Map<string, string[]>, from: string): Set<string> {
  const seen = new Set<string>();
  const stack = [...(graph.get(from) ?? [])];
  while (stack.length) {
    const next = stack.pop()!;
    if (seen.has(next)) continue;
    seen.add(next);
    stack.push(...(graph.get(next) ?? []));
  }
  return seen;
}

describe("worker/ layout", () => {
  it("has no import cycles", ({ expect }) => {
    const graph = importGraph();
    expect(graph.size).toBeGreaterThan(100);
    // The walk sees imports across folders: mcp.endpoint.ts reaches the auth domain.
    expect(graph.get("mcp/mcp.endpoint.ts")).toContain("auth/mcp-caller.ts");
    expect(cycles(graph)).toEqual([]);
  });

  it("keeps the MCP request core below both revision layers, and the layers apart", ({ expect }) => {
    const graph = importGraph();
    const layers = ["mcp/mcp.legacy.ts", "mcp/mcp.modern.ts"];
    for (const layer of layers) expect(graph.get(layer)).toContain("mcp/mcp.core.ts");
    const belowCore = reachable(graph, "mcp/mcp.core.ts");
    for (const layer of [...layers, "mcp/mcp.endpoint.ts"]) expect(belowCore.has(layer)).toBe(false);
    expect(reachable(graph, "mcp/mcp.legacy.ts").has("mcp/mcp.modern.ts")).toBe(false);
    expect(reachable(graph, "mcp/mcp.modern.ts").has("mcp/mcp.legacy.ts")).toBe(false);
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
