import { it } from "vitest";
import { ARGS, CONTEXT, TRIVIAL_BUNDLE, beforeBundle, bundleOf, runAfter, runBefore } from "./isolate.fixtures.ts";
import { WASM_RETAIN_BYTES } from "./isolate.limits.ts";
import { runStage } from "./isolate.run.ts";

it("runs a trivial before stage", async ({ expect }) => {
  const run = await runBefore(TRIVIAL_BUNDLE);
  expect(run).toMatchObject({ outcome: "continue", value: { action: "continue", arguments: ARGS }, logs: [] });
  expect(run.usage.polls).toBeGreaterThanOrEqual(0);
  expect(run.usage.wasmBytes).toBeGreaterThan(0);
  expect(run.usage.outputBytes).toBe(JSON.stringify({ action: "continue", arguments: ARGS }).length);
});

it("builds context from call metadata with a deep-frozen config and a fixed clock", async ({ expect }) => {
  const bundle = beforeBundle(
    `let frozen = true; try { context.config.nested.list.push(3); frozen = false } catch {}
     frozen = frozen && Object.isFrozen(context.config.nested.list) && Object.isFrozen(context.config)`,
    `{ action: "continue", arguments: {
      calledAt: context.calledAt, requestId: context.requestId, workspaceUid: context.workspaceUid,
      connectionId: context.connectionId, toolUid: context.toolUid, toolName: context.toolName,
      config: context.config, frozen, now: Date.now(), date: new Date().toISOString(),
      explicit: new Date(0).toISOString(), contextFrozen: Object.isFrozen(context),
    } }`,
  );
  const run = await runBefore(bundle);
  expect(run.value).toEqual({
    action: "continue",
    arguments: {
      calledAt: CONTEXT.calledAt,
      requestId: "req_1",
      workspaceUid: "ws_1",
      connectionId: "conn_1",
      toolUid: "tool_1",
      toolName: "search",
      config: CONTEXT.config,
      frozen: true,
      now: Date.parse(CONTEXT.calledAt),
      date: CONTEXT.calledAt,
      explicit: "1970-01-01T00:00:00.000Z",
      contextFrozen: true,
    },
  });
});

it("encodes and decodes base64 as UTF-8, throwing inside the hook on invalid input", async ({ expect }) => {
  const bundle = beforeBundle(
    `const { base64Encode, base64Decode } = context.encoding;
     const attempt = (f) => { try { return f() } catch (e) { return e.name } };`,
    `{ action: "continue", arguments: {
      plain: base64Encode("hello"), utf8: base64Encode("héllo ✓ 😀"), back: base64Decode(base64Encode("héllo ✓ 😀")),
      empty: base64Encode(""), one: base64Decode("YQ=="), two: base64Decode("YWI="),
      badChar: attempt(() => base64Decode("a*==")), badLength: attempt(() => base64Decode("abc")),
      badUtf8: attempt(() => base64Decode("/w==")), loneSurrogate: attempt(() => base64Encode("\\ud800")),
      notString: attempt(() => base64Encode(42)),
    } }`,
  );
  const run = await runBefore(bundle);
  expect(run.value).toEqual({
    action: "continue",
    arguments: {
      plain: btoa("hello"),
      utf8: btoa(String.fromCharCode(...new TextEncoder().encode("héllo ✓ 😀"))),
      back: "héllo ✓ 😀",
      empty: "",
      one: "a",
      two: "ab",
      badChar: "TypeError",
      badLength: "TypeError",
      badUtf8: "TypeError",
      loneSurrogate: "URIError",
      notString: "TypeError",
    },
  });
});

it("collects logs with JSON data, within the caps", async ({ expect }) => {
  const bundle = beforeBundle(
    `context.log.debug("d"); context.log.info("i", { n: 1 }); context.log.warn("w", [1, "x"]); context.log.error("e", null)`,
  );
  const run = await runBefore(bundle);
  expect(run.logs).toEqual([
    { level: "debug", message: "d" },
    { level: "info", message: "i", data: { n: 1 } },
    { level: "warn", message: "w", data: [1, "x"] },
    { level: "error", message: "e", data: null },
  ]);
});

it("fails with log_limit on too many entries, a long message or large data, even when the hook catches", async ({ expect }) => {
  const tooMany = beforeBundle(`for (let i = 0; i < 101; i++) { try { context.log.info("x") } catch {} }`);
  const tooLong = beforeBundle(`try { context.log.info("x".repeat(2001)) } catch {}`);
  const tooBig = beforeBundle(`try { context.log.info("x", { s: "y".repeat(9000) }) } catch {}`);
  for (const bundle of [tooMany, tooLong, tooBig]) {
    const run = await runBefore(bundle);
    expect(run.error?.code).toBe("log_limit");
  }
  const lowered = await runBefore(beforeBundle(`context.log.info("a"); context.log.info("b")`), undefined, { logCount: 1 });
  expect(lowered.error?.code).toBe("log_limit");
  expect(lowered.logs).toHaveLength(1);
});

it("measures log data by its UTF-8 bytes, not its length: 4,000 é fit 8 KiB, 4,100 do not", async ({ expect }) => {
  // Each é is one UTF-16 unit and two UTF-8 bytes: both lengths are under the cap, only the second's bytes are over it.
  const fits = await runBefore(beforeBundle(`context.log.info("fits", { s: "é".repeat(4000) })`));
  expect(fits.error).toBeUndefined();
  expect(fits.logs).toEqual([{ level: "info", message: "fits", data: { s: "é".repeat(4000) } }]);
  const over = await runBefore(beforeBundle(`try { context.log.info("over", { s: "é".repeat(4100) }) } catch {}`));
  expect(over.error).toEqual({ code: "log_limit", message: "log data larger than 8192 bytes" });
  expect(over.logs).toEqual([]);
});

it("keeps a failed run's entries up to its failure, in order, and refuses every entry after a refusal", async ({ expect }) => {
  const timedOut = await runBefore(beforeBundle(`context.log.info("a"); context.log.warn("b", [1]); for (;;) {}`));
  expect(timedOut.error?.code).toBe("timeout");
  expect(timedOut.logs).toEqual([
    { level: "info", message: "a" },
    { level: "warn", message: "b", data: [1] },
  ]);
  const afterRefusal = await runBefore(
    beforeBundle(`context.log.info("a"); try { context.log.info("x".repeat(2001)) } catch {}; try { context.log.info("c") } catch {}`),
  );
  expect(afterRefusal.error).toEqual({ code: "log_limit", message: "log message longer than 2000 characters" });
  expect(afterRefusal.logs).toEqual([{ level: "info", message: "a" }]);
});

it("keeps the log exact whatever the hook plants on prototypes or JSON", async ({ expect }) => {
  const bundle = beforeBundle(
    `Object.defineProperty(Array.prototype, "0", { get() { return "planted" }, set() {}, configurable: true });
     Object.defineProperty(Object.prototype, "level", { get() { return "error" }, configurable: true });
     String.prototype.concat = () => "planted"; JSON.stringify = () => '"planted"'; JSON.parse = () => ({});
     context.log.info("kept", { n: 1 }); context.log.debug("second")`,
  );
  const run = await runBefore(bundle);
  expect(run.error).toBeUndefined();
  expect(run.logs).toEqual([
    { level: "info", message: "kept", data: { n: 1 } },
    { level: "debug", message: "second" },
  ]);
});

it("treats log data that is not JSON as an exception in the hook", async ({ expect }) => {
  const run = await runBefore(beforeBundle(`context.log.info("x", undefined); context.log.info("y", () => 1)`));
  expect(run.error).toMatchObject({ code: "exception", message: expect.stringContaining("JSON") });
  expect(run.logs).toEqual([{ level: "info", message: "x" }]);
});

it("passes through a stage the adapter does not define", async ({ expect }) => {
  const beforeOnly = TRIVIAL_BUNDLE;
  const afterRun = await runAfter(beforeOnly, { items: [1] });
  expect(afterRun).toMatchObject({ outcome: "return", value: { action: "return", result: { items: [1] } } });
  const afterOnly = bundleOf(`after({ result }) { return { action: "return", result }; }`);
  const beforeRun = await runBefore(afterOnly);
  expect(beforeRun).toMatchObject({ outcome: "continue", value: { action: "continue", arguments: ARGS } });
});

it("returns every before and after outcome", async ({ expect }) => {
  const reject = await runBefore(beforeBundle("", `{ action: "reject", reason: "not_allowed", message: "No." }`));
  expect(reject).toMatchObject({ outcome: "reject", value: { action: "reject", reason: "not_allowed", message: "No." } });
  const approval = await runBefore(beforeBundle("", `{ action: "require_approval", arguments: { q: 1 }, reason: "big_spend" }`));
  expect(approval).toMatchObject({ outcome: "require_approval", value: { arguments: { q: 1 }, reason: "big_spend" } });
  const transform = bundleOf(`async after({ result, arguments: args, context }) {
    await null;
    return { action: "return", result: { items: result.items.filter((item) => item.keep).map((item) => context.config.prefix + item.id), asked: args.query } };
  }`);
  const returned = await runAfter(transform, {
    items: [
      { id: "a", keep: true },
      { id: "b", keep: false },
    ],
  });
  expect(returned).toMatchObject({ outcome: "return", value: { action: "return", result: { items: ["rr:a"], asked: "hello" } } });
  const failed = await runAfter(bundleOf(`after() { return { action: "fail", reason: "upstream_bad", message: "Bad result." }; }`), {});
  expect(failed).toMatchObject({ outcome: "fail", value: { action: "fail", reason: "upstream_bad" } });
});

it("rejects malformed returns as invalid_return", async ({ expect }) => {
  for (const returns of [
    `undefined`,
    `null`,
    `"continue"`,
    `{ action: "maybe" }`,
    `{ action: "continue", arguments: [1] }`,
    `{ action: "continue", arguments: {}, extra: 1 }`,
    `{ action: "reject", reason: "ok_reason" }`,
    `{ action: "reject", reason: "ok", message: "x".repeat(1001) }`,
    `{ action: "require_approval", arguments: {} }`,
    `{ action: "return", result: 1 }`,
  ]) {
    const run = await runBefore(beforeBundle("", returns));
    expect(run.error?.code, returns).toBe("invalid_return");
  }
  const afterWithoutResult = await runAfter(bundleOf(`after() { return { action: "return" }; }`), {});
  expect(afterWithoutResult.error?.code).toBe("invalid_return");
});

it("fails closed on an invalid context or a bundle without an adapter", async ({ expect }) => {
  const badClock = await runStage({
    bundle: TRIVIAL_BUNDLE,
    stage: "before",
    input: { arguments: {} },
    context: { ...CONTEXT, calledAt: "soon" },
  });
  expect(badClock.error?.code).toBe("exception");
  const noAdapter = await runBefore(`var __rayrun = { default: 42 };`);
  expect(noAdapter.error).toMatchObject({ code: "exception", message: expect.stringContaining("__rayrun.default") });
  const syntax = await runBefore(`var __rayrun = (`);
  expect(syntax.error?.code).toBe("exception");
});

it("applies lowered limits", async ({ expect }) => {
  const output = await runBefore(beforeBundle("", `{ action: "continue", arguments: { s: "x".repeat(100) } }`), undefined, {
    outputBytes: 50,
  });
  expect(output.error?.code).toBe("output_too_large");
  const loop = await runBefore(beforeBundle(`for (let i = 0; i < 1e6; i++) {}`), undefined, { workBudgetPolls: 5 });
  expect(loop.error?.code).toBe("timeout");
  expect(loop.usage.polls).toBeLessThanOrEqual(7);
  const raised = await runBefore(beforeBundle(`for (let i = 0; i < 1e6; i++) {}`), undefined, { workBudgetPolls: 1e9 });
  expect(raised.outcome).toBe("continue");
});

it("runs 10,000 normal stages without growing wasm memory past the retain cap", async ({ expect }) => {
  const bundle = bundleOf(`before({ arguments: args, context }) {
    context.log.info("run", { q: args.query });
    return { action: "continue", arguments: { q: context.config.prefix + args.query, n: [1, 2, 3].map((x) => x * 2) } };
  }`);
  let peak = 0;
  for (let i = 0; i < 10_000; i++) {
    const run = await runBefore(bundle, { arguments: { query: `q${i}` } });
    if (run.outcome !== "continue") expect.fail(`run ${i}: ${JSON.stringify(run.error)}`);
    peak = Math.max(peak, run.usage.wasmBytes);
  }
  expect(peak).toBeLessThanOrEqual(WASM_RETAIN_BYTES);
}, 120_000);
