import * as esbuild from "esbuild-wasm";
import { describe, expect, it } from "vitest";
import { chainedTernariesSource, nestedBracketsSource } from "./compiler.attacks.fixtures.ts";
import { compileHook, type CompileFailure, type CompileResult } from "./compiler.compile.ts";
import { PASS_THROUGH_BEFORE, RELEASE_NOTES_HOOK, SEARCH_TOOL, hookWith } from "./compiler.fixtures.ts";

function compile(source: string, config: unknown = {}) {
  return compileHook({ source, config, upstreamDefinition: SEARCH_TOOL });
}

function failed(result: CompileResult): CompileFailure {
  if (result.ok) throw new Error("expected the compile to fail");
  return result;
}

const KIB = 1024;

describe("compileHook accepts", () => {
  it("the seed's release-notes adapter, extracting its contract", async ({ expect }) => {
    const result = await compile(RELEASE_NOTES_HOOK, { prefix: "notes:" });
    if (!result.ok) throw new Error(JSON.stringify(result.diagnostics));
    expect(result.stages).toEqual(["before", "after"]);
    expect(result.contract).toEqual({
      description: "Search public release notes",
      inputSchema: {
        type: "object",
        properties: { query: { type: "string" } },
        required: ["query"],
        additionalProperties: false,
      },
    });
    expect(result.replaces).toEqual({ description: true, inputSchema: true, outputSchema: false });
    expect(result.bundle.startsWith("// rayrun bundle v1")).toBe(true);
    expect(result.bundle).toContain("var __rayrun =");
    expect(result.compiledBytes).toBe(new TextEncoder().encode(result.bundle).byteLength);
    expect(result.sourceHash).toMatch(/^[0-9a-f]{64}$/);
  });

  it("a hook without publicContract: contract null, nothing replaced", async ({ expect }) => {
    const result = await compile(hookWith(PASS_THROUGH_BEFORE));
    expect(result).toMatchObject({ ok: true, stages: ["before"], contract: null });
    expect(result.ok && result.replaces).toEqual({ description: false, inputSchema: false, outputSchema: false });
  });

  it("a contract equal to the upstream definition replaces nothing", async ({ expect }) => {
    const contract = JSON.stringify({ description: SEARCH_TOOL.description, outputSchema: SEARCH_TOOL.outputSchema });
    const result = await compile(hookWith(`publicContract: ${contract},\n  after({ result }) { return { action: "return", result }; },`));
    expect(result.ok && result.replaces).toEqual({ description: false, inputSchema: false, outputSchema: false });
  });

  it("`export { adapter as default }` of a defineToolAdapter value", async ({ expect }) => {
    const source = `const adapter = defineToolAdapter({ apiVersion: "rayrun.hooks/v1", ${PASS_THROUGH_BEFORE} });\nexport { adapter as default };`;
    expect(await compile(source)).toMatchObject({ ok: true, stages: ["before"] });
  });

  it("source of exactly 100 KiB and config of exactly 16 KiB", async ({ expect }) => {
    const base = hookWith(PASS_THROUGH_BEFORE);
    const source = base + "/".repeat(2) + "x".repeat(100 * KIB - base.length - 2);
    const config = { pad: "" };
    config.pad = "x".repeat(16 * KIB - JSON.stringify(config).length);
    expect(await compile(source, config)).toMatchObject({ ok: true });
  });
});

describe("compileHook rejects, before esbuild runs,", () => {
  it("source of 100 KiB + 1 byte (UTF-8)", async ({ expect }) => {
    const base = hookWith(PASS_THROUGH_BEFORE);
    // "é" is two UTF-8 bytes: the limit counts bytes, not characters.
    const source = base + "//" + "é".repeat((100 * KIB - base.length - 2 + 1) / 2);
    expect(new TextEncoder().encode(source).byteLength).toBe(100 * KIB + 1);
    expect(failed(await compile(source))).toEqual({
      ok: false,
      status: 413,
      diagnostics: [{ code: "source_too_large", message: expect.any(String) }],
    });
  });

  it("source of 10 MiB, without parsing it", async ({ expect }) => {
    const source = "x".repeat(10 * KIB * KIB);
    const started = performance.now();
    const result = failed(await compile(source));
    expect(performance.now() - started).toBeLessThan(50);
    expect(result.status).toBe(413);
    expect(result.diagnostics.map((d) => d.code)).toEqual(["source_too_large"]);
  });

  it("config that is an array", async ({ expect }) => {
    const result = failed(await compile(hookWith(PASS_THROUGH_BEFORE), [1, 2]));
    expect(result.status).toBe(422);
    expect(result.diagnostics.map((d) => d.code)).toEqual(["config_not_object"]);
  });

  it("config of 16 KiB + 1 byte", async ({ expect }) => {
    const config = { pad: "" };
    config.pad = "x".repeat(16 * KIB + 1 - JSON.stringify(config).length);
    expect(JSON.stringify(config).length).toBe(16 * KIB + 1);
    const result = failed(await compile(hookWith(PASS_THROUGH_BEFORE), config));
    expect(result.status).toBe(413);
    expect(result.diagnostics.map((d) => d.code)).toEqual(["config_too_large"]);
  });
});

describe("compileHook rejects, with esbuild's position,", () => {
  const cases: [string, string, string, { line: number; column: number }][] = [
    ["a static import", `import x from "y";\n${hookWith(PASS_THROUGH_BEFORE)}`, "import_forbidden", { line: 1, column: 15 }],
    ["export … from", `${hookWith(PASS_THROUGH_BEFORE)}export { a } from "y";`, "import_forbidden", { line: 7, column: 19 }],
    ['require("fs")', `const fs = require("fs");\n${hookWith(PASS_THROUGH_BEFORE)}`, "require_forbidden", { line: 1, column: 20 }],
    [
      "require of a computed name",
      `const m = "fs";\nrequire(m);\n${hookWith(PASS_THROUGH_BEFORE)}`,
      "require_forbidden",
      { line: 2, column: 1 },
    ],
    ['await import("x")', `await import("x");\n${hookWith(PASS_THROUGH_BEFORE)}`, "dynamic_import_forbidden", { line: 1, column: 14 }],
    ["import() inside a stage", hookWith(`before() { return import("x"); },`), "dynamic_import_forbidden", { line: 3, column: 28 }],
    ["export const x = 1", `export const x = 1;\n${hookWith(PASS_THROUGH_BEFORE)}`, "export_forbidden", { line: 1, column: 14 }],
    ["a syntax error", hookWith(`before( { return 1 },`), "syntax_error", { line: 3, column: 20 }],
    ["top-level await", `await Promise.resolve();\n${hookWith(PASS_THROUGH_BEFORE)}`, "top_level_await_forbidden", { line: 1, column: 1 }],
  ];
  for (const [name, source, code, position] of cases) {
    it(name, async ({ expect }) => {
      const result = failed(await compile(source));
      expect(result.status).toBe(422);
      expect(result.diagnostics, JSON.stringify(result.diagnostics)).toContainEqual({ code, message: expect.any(String), ...position });
    });
  }

  it("columns count UTF-16 code units, not UTF-8 bytes", async ({ expect }) => {
    const result = failed(await compile(`const s = "ééé"; import x from "y";\n${hookWith(PASS_THROUGH_BEFORE)}`));
    expect(result.diagnostics[0]).toMatchObject({ code: "import_forbidden", line: 1, column: 32 });
  });
});

describe("compileHook rejects the module shape:", () => {
  it("`export default 42`", async ({ expect }) => {
    const result = failed(await compile(`export default 42;`));
    expect(result.diagnostics).toEqual([{ code: "default_export_not_adapter", message: expect.any(String), line: 1, column: 8 }]);
  });

  it("`export { a as default }` of a non-adapter", async ({ expect }) => {
    const source = `const a = { apiVersion: "rayrun.hooks/v1", before() { return { action: "continue", arguments: {} }; } };\nexport { a as default };`;
    const result = failed(await compile(source));
    expect(result.diagnostics).toEqual([{ code: "default_export_not_adapter", message: expect.any(String), line: 2, column: 15 }]);
  });

  it("no default export", async ({ expect }) => {
    const result = failed(await compile(`defineToolAdapter({ apiVersion: "rayrun.hooks/v1" });`));
    expect(result.diagnostics.map((d) => d.code)).toEqual(["default_export_missing"]);
  });

  it("CommonJS", async ({ expect }) => {
    const result = failed(await compile(`module.exports = defineToolAdapter({ apiVersion: "rayrun.hooks/v1" });`));
    expect(result.diagnostics.map((d) => d.code)).toEqual(["commonjs_forbidden"]);
  });

  it('apiVersion "rayrun.hooks/v2"', async ({ expect }) => {
    const source = hookWith(PASS_THROUGH_BEFORE).replace("rayrun.hooks/v1", "rayrun.hooks/v2");
    const result = failed(await compile(source));
    expect(result.diagnostics.map((d) => d.code)).toEqual(["api_version_unsupported"]);
  });

  it("an adapter with neither before nor after", async ({ expect }) => {
    const result = failed(await compile(hookWith("")));
    expect(result.diagnostics.map((d) => d.code)).toEqual(["no_stages"]);
  });
});

describe("compileHook rejects the public contract:", () => {
  it("`pattern` three levels deep in $defs, with its JSON pointer", async ({ expect }) => {
    const inputSchema = {
      type: "object",
      properties: { filter: { $ref: "#/$defs/filter" } },
      $defs: { filter: { type: "object", properties: { tags: { type: "array", items: { type: "string", pattern: "^(a+)+$" } } } } },
    };
    const result = failed(
      await compile(hookWith(`publicContract: { inputSchema: ${JSON.stringify(inputSchema)} },\n  ${PASS_THROUGH_BEFORE}`)),
    );
    expect(result.status).toBe(422);
    expect(result.diagnostics).toEqual([
      { code: "schema_pattern_forbidden", message: expect.any(String), pointer: "/inputSchema/$defs/filter/properties/tags/items/pattern" },
    ]);
  });

  it("`patternProperties` at the root", async ({ expect }) => {
    const inputSchema = { type: "object", patternProperties: { "^x-": { type: "string" } } };
    const result = failed(
      await compile(hookWith(`publicContract: { inputSchema: ${JSON.stringify(inputSchema)} },\n  ${PASS_THROUGH_BEFORE}`)),
    );
    expect(result.diagnostics).toEqual([
      { code: "schema_pattern_forbidden", message: expect.any(String), pointer: "/inputSchema/patternProperties" },
    ]);
  });

  it('an inputSchema of { type: "string" }', async ({ expect }) => {
    const result = failed(await compile(hookWith(`publicContract: { inputSchema: { type: "string" } },\n  ${PASS_THROUGH_BEFORE}`)));
    expect(result.diagnostics).toEqual([{ code: "invalid_public_contract", message: expect.any(String), pointer: "/inputSchema" }]);
  });
});

describe("compileHook bounds the top-level evaluation:", () => {
  it("`while (true) {}`", async ({ expect }) => {
    const result = failed(await compile(`while (true) {}\n${hookWith(PASS_THROUGH_BEFORE)}`));
    expect(result.diagnostics.map((d) => d.code)).toEqual(["top_level_timeout"]);
  });

  it("`throw new Error()`", async ({ expect }) => {
    const result = failed(await compile(`throw new Error();\n${hookWith(PASS_THROUGH_BEFORE)}`));
    expect(result.diagnostics.map((d) => d.code)).toEqual(["top_level_exception"]);
  });

  it("module semantics: the bundle is strict, so assigning an undeclared name throws", async ({ expect }) => {
    const result = failed(await compile(`// @ts-expect-error -- undeclared on purpose\nundeclared = 1;\n${hookWith(PASS_THROUGH_BEFORE)}`));
    expect(result.diagnostics.map((d) => d.code)).toEqual(["top_level_exception"]);
  });

  it("unbounded allocation", async ({ expect }) => {
    const result = failed(
      await compile(`const a = []; while (true) a.push("x".repeat(1e6) + a.length);\n${hookWith(PASS_THROUGH_BEFORE)}`),
    );
    expect(["top_level_memory", "top_level_timeout"]).toContain(result.diagnostics[0]?.code);
  });

  it("unbounded recursion", async ({ expect }) => {
    const result = failed(await compile(`function f(): number { return f() + 1; }\nf();\n${hookWith(PASS_THROUGH_BEFORE)}`));
    expect(result.diagnostics.map((d) => d.code)).toEqual(["top_level_stack_overflow"]);
  });
});

describe("compileHook bounds nesting before esbuild sees the source", () => {
  it("answers nesting_too_deep at the first bracket past 64 levels; 64 compile", async ({ expect }) => {
    const nestedBy = (depth: number) => `const x = ${"[".repeat(depth)}${"]".repeat(depth)};\n${hookWith(PASS_THROUGH_BEFORE)}`;
    expect(await compile(nestedBy(64))).toMatchObject({ ok: true });
    const result = failed(await compile(nestedBy(65)));
    expect(result.status).toBe(422);
    expect(result.diagnostics).toEqual([
      { code: "nesting_too_deep", message: expect.stringContaining("64 levels"), line: 1, column: 11 + 64 },
    ]);
  });

  const attacks: [string, string, Record<string, unknown>][] = [
    ["40,000 nested brackets", nestedBracketsSource(), { line: 1, column: 16 + 64 }],
    ["20,000 chained conditionals", chainedTernariesSource(), { line: 1 }],
    ["100,000 unary operators", `const x = ${"!".repeat(100_000)}0;\n`, { message: expect.stringContaining("2000 tokens") }],
    ["3,000 nested arrow functions", `const x = ${"a=>".repeat(3000)}1;\n`, { line: 1 }],
  ];
  for (const [name, source, position] of attacks) {
    it(`${name}: nesting_too_deep with its position, and the next compile works`, async ({ expect }) => {
      const result = failed(await compile(source));
      expect(result.diagnostics).toEqual([
        { code: "nesting_too_deep", message: expect.any(String), line: 1, column: expect.any(Number), ...position },
      ]);
      expect(await compile(hookWith(PASS_THROUGH_BEFORE))).toMatchObject({ ok: true });
    });
  }
});

describe("a dead esbuild service is replaced", () => {
  /** Kills the service for real: the attack input, straight to esbuild, overflows its Go runtime's stack. */
  const killEsbuild = async () => {
    await compile(hookWith(PASS_THROUGH_BEFORE)); // the compiler's service is running
    const crash = await esbuild.build({ stdin: { contents: nestedBracketsSource(), loader: "ts" }, write: false, logLevel: "silent" }).then(
      () => "survived",
      (error: unknown) => String(error),
    );
    expect(crash).toMatch(/call stack/);
    // Dead: every later call on it fails the same way.
    await expect(esbuild.transform("1", { loader: "ts" })).rejects.toThrow(/call stack/);
  };

  it("the next compile after the service died succeeds", async ({ expect }) => {
    await killEsbuild();
    expect(await compile(hookWith(PASS_THROUGH_BEFORE))).toMatchObject({ ok: true });
    expect(await compile(RELEASE_NOTES_HOOK)).toMatchObject({ ok: true });
  });

  it("compiles that shared the service with the input that killed it still succeed", async ({ expect }) => {
    await compile(hookWith(PASS_THROUGH_BEFORE));
    const [crash, ...compiles] = await Promise.all([
      esbuild.build({ stdin: { contents: nestedBracketsSource(), loader: "ts" }, write: false, logLevel: "silent" }).catch(String),
      compile(hookWith(PASS_THROUGH_BEFORE)),
      compile(RELEASE_NOTES_HOOK),
    ]);
    expect(crash).toMatch(/call stack/);
    expect(compiles).toMatchObject([{ ok: true }, { ok: true }]);
  });
});

describe("compileHook bounds the output", () => {
  it("compiled output over 150 KiB", async ({ expect }) => {
    // esbuild escapes non-ASCII in strings: 40,000 "é" (80 KB of source) become 160 KB of "\\xE9".
    const source = `const s = "${"é".repeat(40_000)}";\n${hookWith(`before() { return { action: "continue", arguments: { s } }; },`)}`;
    const result = failed(await compile(source));
    expect(result.status).toBe(413);
    expect(result.diagnostics.map((d) => d.code)).toEqual(["compiled_too_large"]);
  });
});

describe("the bundle", () => {
  it("is a strict classic script leaving the adapter at globalThis.__rayrun.default", async ({ expect }) => {
    const result = await compile(hookWith(PASS_THROUGH_BEFORE));
    if (!result.ok) throw new Error(JSON.stringify(result.diagnostics));
    expect(result.bundle.split("\n").slice(0, 3)).toEqual(["// rayrun bundle v1", '"use strict";', "var __rayrun = (() => {"]);
  });

  it("also when esbuild must build the script (a non-ASCII default export name)", async ({ expect }) => {
    const source = `const adaptér = defineToolAdapter({ apiVersion: "rayrun.hooks/v1", ${PASS_THROUGH_BEFORE} });\nexport { adaptér as default };`;
    const result = await compile(source);
    if (!result.ok) throw new Error(JSON.stringify(result.diagnostics));
    expect(result.stages).toEqual(["before"]);
    expect(result.bundle).toContain("__toCommonJS");
  });
});
