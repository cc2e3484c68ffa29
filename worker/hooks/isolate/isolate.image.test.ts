import { inject, it } from "vitest";
import { ARGS, CONTEXT, beforeBundle, bundleOf, runBefore } from "./isolate.fixtures.ts";
import { HEAP_BASE, STATIC_END } from "./isolate.image.ts";
import { runStage } from "./isolate.run.ts";

it("matches the pinned QuickJS build's memory layout", ({ expect }) => {
  const layout = inject("quickjsLayout");
  // __stack_pointer is the only state outside linear memory, and it is back at its start between runs.
  expect(layout.mutableGlobals).toBe(1);
  expect(layout.stackPointer).toBe(HEAP_BASE);
  // Static data plus bss (a few KiB in this build) must lie inside the restored prefix.
  expect(layout.dataEnd + 64 * 1024).toBeLessThanOrEqual(STATIC_END);
  expect(STATIC_END).toBeLessThan(HEAP_BASE);
});

it("starts every run from the same pristine state, whatever the previous run changed", async ({ expect }) => {
  const vandal = beforeBundle(
    `globalThis.leaked = 1; Array.prototype.extra = 2; JSON.stringify = () => "{}"; Math.max = () => 0;
     Object.defineProperty(Object.prototype, "arguments", { get() { return { stolen: true } }, configurable: true });
     globalThis.keep = []; for (let i = 0; i < 20000; i++) globalThis.keep.push({ i });`,
  );
  const probe = beforeBundle(
    "",
    `{ action: "continue", arguments: { leaked: typeof globalThis.leaked, extra: typeof [].extra,
       json: JSON.stringify({ a: 1 }), max: Math.max(1, 2), keep: typeof globalThis.keep,
       inherited: Object.prototype.hasOwnProperty("arguments") } }`,
  );
  const clean = { leaked: "undefined", extra: "undefined", json: '{"a":1}', max: 2, keep: "undefined", inherited: false };
  expect((await runBefore(probe)).value).toEqual({ action: "continue", arguments: clean });
  await runBefore(vandal);
  expect((await runBefore(probe)).value).toEqual({ action: "continue", arguments: clean });
  // A run that died mid-allocation leaves nothing behind either.
  const exhausted = await runBefore(
    beforeBundle(`const base = "x".repeat(1 << 20); const a = []; for (let i = 0; ; i++) a.push(base + i)`),
  );
  expect(exhausted.error?.code).toBe("memory_exceeded");
  expect((await runBefore(probe)).value).toEqual({ action: "continue", arguments: clean });
});

it("draws different Math.random numbers in every run, within [0, 1)", async ({ expect }) => {
  const bundle = beforeBundle("", `{ action: "continue", arguments: { draws: [Math.random(), Math.random(), Math.random()] } }`);
  const draws: number[] = [];
  for (let run = 0; run < 5; run++) {
    const value = (await runBefore(bundle)).value;
    if (value?.action !== "continue") throw new Error("expected continue");
    draws.push(...(value.arguments.draws as number[]));
  }
  expect(new Set(draws).size).toBe(draws.length);
  for (const draw of draws) {
    expect(draw).toBeGreaterThanOrEqual(0);
    expect(draw).toBeLessThan(1);
  }
});

it("gives concurrent runs their own context and results", async ({ expect }) => {
  const bundle = bundleOf(
    `async before({ arguments: args, context }) { await null; return { action: "continue", arguments: { ...args, requestId: context.requestId, now: Date.now() } }; }`,
  );
  const runs = await Promise.all(
    Array.from({ length: 20 }, (_, i) =>
      runStage({
        bundle,
        stage: "before",
        input: { arguments: ARGS },
        context: { ...CONTEXT, requestId: `req_${i}`, calledAt: new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString() },
      }),
    ),
  );
  runs.forEach((run, i) => {
    expect(run.value).toEqual({
      action: "continue",
      arguments: { ...ARGS, requestId: `req_${i}`, now: Date.UTC(2026, 0, 1, 0, 0, i) },
    });
  });
});
