import { it, type ExpectStatic } from "vitest";
import type { IsolateErrorCode } from "./isolate.types.ts";
import { ARGS, TRIVIAL_BUNDLE, beforeBundle, bundleOf, runBefore } from "./isolate.fixtures.ts";
import type { StageRun } from "./isolate.run.ts";

/**
 * Each hostile hook must fail closed with its exact code, and the very next
 * normal run must still succeed (the Worker keeps serving).
 */
async function expectFailsClosed(run: Promise<StageRun>, code: IsolateErrorCode, expect: ExpectStatic) {
  const result = await run;
  expect(result.outcome, JSON.stringify(result.error)).toBe("error");
  expect(result.error?.code, result.error?.message).toBe(code);
  expect(result.value).toBeUndefined();
  const next = await runBefore(TRIVIAL_BUNDLE);
  expect(next.outcome, JSON.stringify(next.error)).toBe("continue");
  return result;
}

const cases: [name: string, bundle: string, code: IsolateErrorCode][] = [
  ["while (true) {}", beforeBundle("while (true) {}"), "timeout"],
  [
    "an infinite loop after await, inside .catch",
    bundleOf(
      `async before({ arguments: args }) { await null; await (async () => { while (true) {} })().catch(() => {}); return { action: "continue", arguments: args }; }`,
    ),
    "timeout",
  ],
  ["catastrophic regex", beforeBundle(`/^(a+)+$/.test("a".repeat(30) + "!")`), "timeout"],
  ["new Array(1e9).join", beforeBundle(`new Array(1e9).join("x")`), "timeout"],
  // Charged by the string it builds before it runs (it used to build 16 MiB first and fail on memory).
  ['"x".repeat(2 ** 28)', beforeBundle(`"x".repeat(2 ** 28)`), "timeout"],
  ["1 MiB strings forever", beforeBundle(`const keep = []; for (;;) keep.push("x".repeat(1 << 20))`), "memory_exceeded"],
  ["512 KiB Uint8Arrays forever", beforeBundle(`const keep = []; for (;;) keep.push(new Uint8Array(512 * 1024))`), "memory_exceeded"],
  ["unbounded recursion", beforeBundle(`const f = () => f(); f()`), "stack_overflow"],
  ["JSON.parse of 100,000 nested arrays", beforeBundle(`JSON.parse("[".repeat(100000) + "]".repeat(100000))`), "stack_overflow"],
  [
    "returning a 100 MiB string",
    beforeBundle("", `{ action: "continue", arguments: { s: "x".repeat(100 * 1024 * 1024) } }`),
    "memory_exceeded",
  ],
  ["returning a cyclic object", beforeBundle("const a = {}; a.self = a", `{ action: "continue", arguments: a }`), "invalid_return"],
  ["returning a BigInt", beforeBundle("", `{ action: "continue", arguments: { n: 10n } }`), "exception"],
  [
    "returning an object whose toJSON throws",
    beforeBundle("", `{ action: "continue", arguments: { toJSON() { throw new Error("no") } } }`),
    "invalid_return",
  ],
  [
    "returning a Proxy with throwing traps",
    beforeBundle(
      `const trap = () => { throw new Error("trap") }; const p = new Proxy({}, { get: trap, ownKeys: trap, getOwnPropertyDescriptor: trap, has: trap })`,
      `{ action: "continue", arguments: p }`,
    ),
    "invalid_return",
  ],
  // Returned at top level, the Proxy throws while the stage's promise resolves it (the \`then\` lookup): the stage threw.
  [
    "returning a throwing Proxy as the stage result itself",
    beforeBundle(`const p = new Proxy({}, { get() { throw new Error("trap") } })`, `p`),
    "exception",
  ],
  ["1,000,000 log.info calls", beforeBundle(`for (let i = 0; i < 1e6; i++) { try { context.log.info("m" + i) } catch {} }`), "log_limit"],
  ["one 50 MiB log message", beforeBundle(`context.log.info("x".repeat(50 * 1024 * 1024))`), "memory_exceeded"],
  ["{ action: 'continue' } without arguments", beforeBundle("", `{ action: "continue" }`), "invalid_return"],
  ['reason: "Has Spaces"', beforeBundle("", `{ action: "reject", reason: "Has Spaces", message: "no" }`), "invalid_return"],
  ["a lone surrogate in returned arguments", beforeBundle("", `{ action: "continue", arguments: { s: "a\\ud800b" } }`), "invalid_return"],
  [
    "200,000 objects created in a promise job, then returned",
    bundleOf(
      `async before() { const items = await Promise.resolve().then(() => { const out = []; for (let i = 0; i < 200000; i++) out.push({ i }); return out; }); return { action: "continue", arguments: { items } }; }`,
    ),
    "output_too_large",
  ],
  ["a promise that never settles", bundleOf(`before() { return new Promise(() => {}); }`), "unresolved_promise"],
  ["a thrown error", beforeBundle(`throw new Error("boom")`), "exception"],
  [
    "a top-level throw",
    bundleOf(`before({ arguments: a }) { return { action: "continue", arguments: a }; }`, `throw new Error("top")`),
    "exception",
  ],
  ["a top-level infinite loop", bundleOf(``, `while (true) {}`), "timeout"],
];

for (const [name, bundle, code] of cases) {
  it(`fails closed: ${name} → ${code}`, async ({ expect }) => {
    await expectFailsClosed(runBefore(bundle), code, expect);
  });
}

it("reports a 2 MiB return as output_too_large", async ({ expect }) => {
  const bundle = beforeBundle("", `{ action: "continue", arguments: { s: "x".repeat(2 * 1024 * 1024) } }`);
  await expectFailsClosed(runBefore(bundle), "output_too_large", expect);
});

it("keeps logs with lone surrogates, replacing them with U+FFFD", async ({ expect }) => {
  const run = await runBefore(beforeBundle(`context.log.warn("bad \\udc00 text", { k: "\\ud800" })`));
  expect(run.outcome).toBe("continue");
  expect(run.logs).toEqual([{ level: "warn", message: "bad \uFFFD text", data: { k: "\uFFFD" } }]);
});

it("gives no host capability to probes", async ({ expect }) => {
  const probe = `
    const g = Function("return this")();
    const seen = {
      fetch: typeof fetch, setTimeout: typeof setTimeout, setInterval: typeof setInterval, WebAssembly: typeof WebAssembly,
      require: typeof require, process: typeof process, globalIsSandbox: g === globalThis,
      hostNames: Object.getOwnPropertyNames(g).filter((n) => /fetch|timeout|interval|wasm|require|process|std|os|console|navigator|caches|crypto|__/i.test(n)),
    };
    let imported = "not attempted";
    await import("x").then(() => { imported = "loaded" }, (e) => { imported = "rejected: " + e.name; });
    seen.imported = imported;`;
  const run = await runBefore(bundleOf(`async before() { ${probe}; return { action: "continue", arguments: seen }; }`));
  expect(run.outcome, JSON.stringify(run.error)).toBe("continue");
  expect(run.value).toEqual({
    action: "continue",
    arguments: {
      fetch: "undefined",
      setTimeout: "undefined",
      setInterval: "undefined",
      WebAssembly: "undefined",
      require: "undefined",
      process: "undefined",
      globalIsSandbox: true,
      hostNames: ["__rayrun"],
      imported: expect.stringMatching(/^rejected: /),
    },
  });
});

it("does not let prototype pollution reach the next call", async ({ expect }) => {
  const polluter = beforeBundle(`Object.prototype.polluted = "yes"; Array.prototype.push = () => 0; globalThis.leak = 1`);
  expect((await runBefore(polluter)).outcome).toBe("continue");
  const observer = beforeBundle(
    "",
    `{ action: "continue", arguments: { polluted: typeof ({}).polluted, leak: typeof leak, push: [1].push(2) } }`,
  );
  const run = await runBefore(observer);
  expect(run.value).toEqual({ action: "continue", arguments: { polluted: "undefined", leak: "undefined", push: 2 } });
});

it("cannot smuggle a value through a polluted prototype into the input", async ({ expect }) => {
  const bundle = bundleOf(`before(input) {
    let seen = "no";
    Object.defineProperty(Object.prototype, "context", { set() { seen = "yes" }, configurable: true });
    return { action: "continue", arguments: { seen, hasContext: typeof input.context.log.info } };
  }`);
  const run = await runBefore(bundle);
  expect(run.value).toEqual({ action: "continue", arguments: { seen: "no", hasContext: "function" } });
});

it("bounds the work of natively looping built-ins", async ({ expect }) => {
  for (const body of [
    `Array.prototype.lastIndexOf.call({ length: 2 ** 53 - 1 }, 1)`,
    `new Array(2 ** 32 - 1).fill(0)`,
    `const s = "a".repeat(1 << 21); for (;;) s.indexOf("a".repeat(1 << 20) + "b")`,
    `const a = new Array(60000); for (;;) a.join("")`,
  ]) {
    await expectFailsClosed(runBefore(beforeBundle(body)), "timeout", expect);
  }
});

it("still answers normally after the hostile runs, with arguments intact", async ({ expect }) => {
  const run = await runBefore(TRIVIAL_BUNDLE);
  expect(run.value).toEqual({ action: "continue", arguments: ARGS });
});
