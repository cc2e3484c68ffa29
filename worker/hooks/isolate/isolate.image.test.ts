import { inject, it } from "vitest";
import { ARGS, CONTEXT, beforeBundle, bundleOf, runBefore } from "./isolate.fixtures.ts";
import { HEAP_BASE, STATIC_END } from "./isolate.image.ts";
import { BUNDLE_IMAGES } from "./isolate.instance.ts";
import { acquireInstance } from "./isolate.module.ts";
import { runStage, type StageRun } from "./isolate.run.ts";
import type { StageContextInput } from "./isolate.types.ts";

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

/** Enough runs of one bundle for the shared instance to image it and then start every run from that image. */
const PAST_IMAGING = BUNDLE_IMAGES.afterRuns + 4;

/** Whether the shared instance now holds an image of `bundle` (the question counts as no run). */
async function imaged(bundle: string): Promise<boolean> {
  const image = await (await acquireInstance()).bundleImage(bundle);
  return typeof image === "object";
}

function argumentsOf(run: StageRun): unknown {
  if (run.value?.action !== "continue") throw new Error(`expected continue, got ${JSON.stringify(run.error ?? run.value)}`);
  return run.value.arguments;
}

it("starts every run of an imaged bundle from the evaluated bundle, whatever an earlier run changed", async ({ expect }) => {
  // Module state, globals, built-in prototypes and the adapter itself, all changed by every run.
  const bundle = bundleOf(
    `before({ arguments: args }) {
       runs++; cache.push(args.query); globalThis.seen = (globalThis.seen ?? 0) + 1;
       const extra = typeof Array.prototype.extra; Array.prototype.extra = 1; this.planted = true;
       const json = JSON.stringify({ a: 1 }); JSON.stringify = () => "{}";
       return { action: "continue", arguments: { runs, cached: cache.length, seen: globalThis.seen, extra, json, topLevel } };
     }`,
    `let runs = 0; const cache = []; const topLevel = typeof globalThis.seen`,
  );
  const fresh = { runs: 1, cached: 1, seen: 1, extra: "undefined", json: '{"a":1}', topLevel: "undefined" };
  for (let run = 0; run < PAST_IMAGING; run++) expect(argumentsOf(await runBefore(bundle))).toEqual(fresh);
  expect(await imaged(bundle)).toBe(true);
  expect(argumentsOf(await runBefore(bundle))).toEqual(fresh);
});

it("gives each call its own context and clock from a shared image, and an image nothing of the call that took it", async ({ expect }) => {
  const bundle = beforeBundle(
    "",
    `{ action: "continue", arguments: { workspace: context.workspaceUid, config: context.config, now: Date.now(), leaked: typeof globalThis.last } }`,
  );
  const call = (workspace: string, second: number): StageContextInput => ({
    ...CONTEXT,
    workspaceUid: workspace,
    config: { secret: `${workspace}-secret` },
    calledAt: new Date(Date.UTC(2026, 0, 1, 0, 0, second)).toISOString(),
  });
  for (let run = 0; run < PAST_IMAGING * 2; run++) {
    const workspace = run % 2 ? "ws_a" : "ws_b";
    const result = await runStage({ bundle, stage: "before", input: { arguments: ARGS }, context: call(workspace, run) });
    expect(argumentsOf(result)).toEqual({
      workspace,
      config: { secret: `${workspace}-secret` },
      now: Date.UTC(2026, 0, 1, 0, 0, run),
      leaked: "undefined",
    });
  }
  expect(await imaged(bundle)).toBe(true);
  // The image was taken with no call state: none of either workspace's context is anywhere in it.
  const image = await (await acquireInstance()).bundleImage(bundle);
  if (typeof image !== "object") throw new Error("expected an image");
  const text = new TextDecoder("latin1").decode(image.memory.heap);
  expect(text).not.toContain("ws_a-secret");
  expect(text).not.toContain("ws_b-secret");
});

it("evaluates a bundle whose top level reads the clock or Math.random in every run, with that run's own", async ({ expect }) => {
  const clock = bundleOf(
    `before() { return { action: "continue", arguments: { at: startedAt, now: Date.now() } }; }`,
    "const startedAt = Date.now()",
  );
  const random = bundleOf(`before() { return { action: "continue", arguments: { draw } }; }`, "const draw = Math.random()");
  const draws = new Set<unknown>();
  for (let run = 0; run < PAST_IMAGING; run++) {
    const calledAt = new Date(Date.UTC(2026, 0, 1, 0, 0, run)).toISOString();
    const context = { ...CONTEXT, calledAt };
    const timed = await runStage({ bundle: clock, stage: "before", input: { arguments: ARGS }, context });
    expect(argumentsOf(timed)).toEqual({ at: Date.parse(calledAt), now: Date.parse(calledAt) });
    draws.add((argumentsOf(await runBefore(random)) as { draw: number }).draw);
  }
  expect(draws.size).toBe(PAST_IMAGING);
  expect(await imaged(clock)).toBe(false);
  expect(await imaged(random)).toBe(false);
});

it("charges an imaged bundle's top-level work to every run, as if it had run again", async ({ expect }) => {
  // About `polls` polls of work (a poll is about 5,000 turns of this loop).
  const spin = (polls: number) => `{ let n = 0; for (let i = 0; i < ${polls * 5000}; i++) n += i; }`;
  // The top level and the stage spend 20% of the work budget each, then 60% each: the second passes it in every run.
  const heavy = bundleOf(`before({ arguments: args }) { ${spin(200)}; return { action: "continue", arguments: args }; }`, spin(200));
  const alone = await runBefore(heavy);
  expect(alone.outcome).toBe("continue");
  const overBudget = bundleOf(`before({ arguments: args }) { ${spin(600)}; return { action: "continue", arguments: args }; }`, spin(600));
  const runs: StageRun[] = [];
  for (let run = 0; run <= BUNDLE_IMAGES.afterRuns; run++) runs.push(await runBefore(heavy), await runBefore(overBudget));
  expect(await imaged(heavy)).toBe(true);
  expect(await imaged(overBudget)).toBe(true);
  const polls = runs.filter((_, i) => i % 2 === 0).map((run) => run.usage.polls);
  expect(Math.min(...polls)).toBeGreaterThanOrEqual(alone.usage.polls - 2);
  for (const [i, run] of runs.entries()) expect(i % 2 ? run.error?.code : run.outcome).toBe(i % 2 ? "timeout" : "continue");
});
