import { it } from "vitest";
import { bundleOf } from "./isolate.fixtures.ts";
import { evaluateAdapter } from "./isolate.inspect.ts";
import { DEFAULT_LIMITS, resolveLimits } from "./isolate.limits.ts";

it("describes an adapter: stages, apiVersion, brand and publicContract as JSON", async ({ expect }) => {
  const bundle = bundleOf(`publicContract: { description: "d", inputSchema: { type: "object" } }, before() {}`);
  expect(await evaluateAdapter({ bundle })).toEqual({
    ok: true,
    adapter: {
      apiVersion: "rayrun.hooks/v1",
      stages: ["before"],
      publicContract: { description: "d", inputSchema: { type: "object" } },
      builtByDefineToolAdapter: true,
    },
  });
  const lookAlike = await evaluateAdapter({ bundle: `var __rayrun = { default: { apiVersion: 2, after() {} } };` });
  expect(lookAlike).toEqual({
    ok: true,
    adapter: { apiVersion: 2, stages: ["after"], publicContract: undefined, builtByDefineToolAdapter: false },
  });
  for (const bundle of [`var __rayrun = {};`, `var __rayrun = { default: 42 };`, `1;`]) {
    expect(await evaluateAdapter({ bundle }), bundle).toEqual({
      ok: true,
      adapter: { apiVersion: undefined, stages: [], publicContract: undefined, builtByDefineToolAdapter: false },
    });
  }
});

it("reports top-level failures with the runStage codes", async ({ expect }) => {
  const cases: [string, string][] = [
    [bundleOf("", "while (true) {}"), "timeout"],
    [bundleOf("", `throw new Error("top")`), "exception"],
    [bundleOf("", `const keep = []; for (;;) keep.push(new Uint8Array(1 << 20))`), "memory_exceeded"],
    // BigInt literals do not compile in hooks (docs/isolate.md, Native work).
    [bundleOf(`publicContract: { n: 1n }`), "exception"],
    [bundleOf(`publicContract: { toJSON() { throw new Error("no"); } }`), "invalid_return"],
    [bundleOf(`publicContract: { s: "x".repeat(2 << 20) }`), "output_too_large"],
  ];
  for (const [bundle, code] of cases) {
    const result = await evaluateAdapter({ bundle });
    expect(result.ok ? "ok" : result.error.code, bundle).toBe(code);
  }
});

it("resolves limit overrides only downward", ({ expect }) => {
  expect(resolveLimits()).toEqual(DEFAULT_LIMITS);
  const lowered = resolveLimits({ workBudgetPolls: 10, outputBytes: 1e12, logCount: "5", wasmMemoryBytes: 1, deadlineMs: Number.NaN });
  expect(lowered).toMatchObject({
    workBudgetPolls: 10,
    outputBytes: DEFAULT_LIMITS.outputBytes,
    logCount: DEFAULT_LIMITS.logCount,
    wasmMemoryBytes: 32 * 1024 * 1024,
    deadlineMs: DEFAULT_LIMITS.deadlineMs,
  });
});
