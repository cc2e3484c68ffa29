import { it } from "vitest";
import type { IsolateErrorCode } from "./isolate.types.ts";
import { ARGS, TRIVIAL_BUNDLE, beforeBundle, bundleOf, expectFailsClosed, runBefore } from "./isolate.fixtures.ts";

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
  [
    "1 MiB strings forever",
    beforeBundle(`const base = "x".repeat(1 << 20); const keep = []; for (let i = 0; ; i++) keep.push(base + i)`),
    "memory_exceeded",
  ],
  ["512 KiB Uint8Arrays forever", beforeBundle(`const keep = []; for (;;) keep.push(new Uint8Array(512 * 1024))`), "memory_exceeded"],
  ["unbounded recursion", beforeBundle(`const f = () => f(); f()`), "stack_overflow"],
  ["JSON.parse of 100,000 nested arrays", beforeBundle(`JSON.parse("[".repeat(100000) + "]".repeat(100000))`), "stack_overflow"],
  [
    "returning a 100 MiB string",
    beforeBundle('let s = "x".repeat(1 << 20); while (s.length < 100 * 1024 * 1024) s += s', `{ action: "continue", arguments: { s } }`),
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
  [
    "one 50 MiB log message",
    beforeBundle(`let m = "x".repeat(1 << 20); while (m.length < 50 * 1024 * 1024) m += m; context.log.info(m)`),
    "memory_exceeded",
  ],
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
  // Work a native finds through its arguments or elements (issue 12): each ran for seconds without a poll.
  ["[a].flat() of a sparse array of length 1e8", beforeBundle(`[new Array(1e8)].flat()`), "timeout"],
  ["[a].flat(Infinity) of nested sparse arrays", beforeBundle(`[[[new Array(1e7)]]].flat(Infinity)`), "timeout"],
  ["flatMap returning a sparse array", beforeBundle(`[1].flatMap(() => new Array(1e7))`), "timeout"],
  ["[].concat(a) of a sparse array of length 1e7", beforeBundle(`[].concat(new Array(1e7))`), "timeout"],
  ["concat of a spreadable array-like", beforeBundle(`[].concat({ length: 1e7, [Symbol.isConcatSpreadable]: true })`), "timeout"],
  [
    "Array.prototype.includes.call({ length: Infinity })",
    beforeBundle(`Array.prototype.includes.call({ length: Infinity }, 1)`),
    "timeout",
  ],
  [
    "a length whose valueOf is Infinity",
    beforeBundle(`Array.prototype.indexOf.call({ length: { valueOf: () => Infinity } }, 1)`),
    "timeout",
  ],
  [
    "a typed array with an own length of 0",
    beforeBundle(
      `const t = new Uint8Array(1 << 22); Object.defineProperty(t, "length", { value: 0 }); for (let i = 0; i < 300; i++) t.indexOf(1)`,
    ),
    "timeout",
  ],
  ["new Uint8Array({ length: 1e7 })", beforeBundle(`new Uint8Array({ length: 1e7 })`), "timeout"],
  ["Array.from({ length: 1e7 })", beforeBundle(`Array.from({ length: 1e7 })`), "timeout"],
  ["Object.keys of a 4 Mi-element typed array", beforeBundle(`Object.keys(new Uint8Array(1 << 22))`), "timeout"],
  ['"x".repeat(4 Mi) 2,000 times', beforeBundle(`for (let i = 0; i < 2000; i++) "x".repeat(1 << 22)`), "timeout"],
  ['"".padStart(4 Mi) 2,000 times', beforeBundle(`for (let i = 0; i < 2000; i++) "".padStart(1 << 22)`), "timeout"],
  [
    "indexOf with a needle object whose toString is long",
    beforeBundle(`const needle = { toString: () => "a".repeat(1 << 15) + "b" }; "a".repeat(1 << 16).indexOf(needle)`),
    "timeout",
  ],
  ["replaceAll with a long replacement", beforeBundle(`"a".repeat(1 << 16).replaceAll("a", "b".repeat(1 << 10))`), "timeout"],
  [
    "JSON.stringify of 200,000 undefined fields, 100 times",
    beforeBundle(`const o = {}; for (let i = 0; i < 2e5; i++) o["k" + i] = undefined; for (let j = 0; j < 100; j++) JSON.stringify(o)`),
    "timeout",
  ],
  // BigInt arithmetic cannot be charged: a BigInt literal does not compile (String(1n << 1000000n) took 27 s).
  ["String(1n << 1000000n)", beforeBundle(`String(1n << 1000000n)`), "exception"],
];

for (const [name, bundle, code] of cases) {
  it(`fails closed: ${name} → ${code}`, async ({ expect }) => {
    await expectFailsClosed(runBefore(bundle), code, expect);
  });
}

// With the default budget, the 1e7 holes' output reaches the heap cap at about the point the budget runs out, so
// which of the two stops it varies (both fail closed); a tenth of the budget shows each visited hole is charged.
it("fails closed: JSON.stringify of a sparse array of length 1e7 → timeout, charged per hole", async ({ expect }) => {
  await expectFailsClosed(
    runBefore(beforeBundle(`JSON.stringify(new Array(1e7))`), { arguments: ARGS }, { workBudgetPolls: 100 }),
    "timeout",
    expect,
  );
});

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

it("reads each length, count and needle a native works from once, and gives the native that value", async ({ expect }) => {
  const bundle = beforeBundle(
    `let lengthReads = 0;
    const lying = { 0: "a", 1: "b", 2: "c", get length() { return lengthReads++ === 0 ? 0 : 3; } };
    const joined = Array.prototype.join.call(lying);
    let needleReads = 0;
    const needle = { toString() { return needleReads++ === 0 ? "" : "zzz"; } };
    const found = "abc".indexOf(needle);
    let countReads = 0;
    const repeated = "ab".repeat({ valueOf() { return countReads++ === 0 ? 1 : 1e6; } });
    const proxied = Array.prototype.lastIndexOf.call(new Proxy([1, 2], { get: (t, k) => (k === "length" ? 2 : t[k]) }), 2)`,
    `{ action: "continue", arguments: { joined, lengthReads, found, needleReads, repeated, countReads, proxied } }`,
  );
  const run = await runBefore(bundle);
  expect(run.outcome, JSON.stringify(run.error)).toBe("continue");
  expect(run.value).toEqual({
    action: "continue",
    arguments: { joined: "", lengthReads: 1, found: 0, needleReads: 1, repeated: "ab", countReads: 1, proxied: 1 },
  });
});

it("keeps concat, flat and flatMap results as the built-ins give them", async ({ expect }) => {
  const bundle = beforeBundle(
    `const sparse = [1, , 3];
    const results = {
      concat: [0].concat([1, 2], 3, [[4]], { length: 1, 0: "x", [Symbol.isConcatSpreadable]: true }, { plain: true }),
      concatHoles: [].concat(sparse).length + ":" + (1 in [].concat(sparse)),
      flat: [1, [2, [3, [4]]], , 5].flat(),
      flatDeep: [1, [2, [3, [4]]]].flat(Infinity),
      flatZero: [1, [2]].flat(0),
      flatMap: [1, 2].flatMap((x, i) => [x, i]),
      arrayLike: Array.prototype.flat.call({ length: 2, 0: [1], 1: 2 }),
    };`,
    `{ action: "continue", arguments: results }`,
  );
  const run = await runBefore(bundle);
  expect(run.outcome, JSON.stringify(run.error)).toBe("continue");
  expect(run.value).toEqual({
    action: "continue",
    arguments: {
      concat: [0, 1, 2, 3, [4], "x", { plain: true }],
      concatHoles: "3:false",
      flat: [1, 2, [3, [4]], 5],
      flatDeep: [1, 2, 3, 4],
      flatZero: [1, [2]],
      flatMap: [1, 0, 2, 1],
      arrayLike: [1, 2],
    },
  });
});

it("gives hooks no BigInt: no constructor, no BigInt typed arrays, no literal through eval or Function", async ({ expect }) => {
  const bundle = beforeBundle(
    `const attempt = (f) => { try { f(); return "ran"; } catch (error) { return error.name; } };
    const one = "1" + "n";
    const seen = {
      BigInt: typeof globalThis.BigInt,
      BigInt64Array: typeof globalThis.BigInt64Array,
      BigUint64Array: typeof globalThis.BigUint64Array,
      getBigInt64: typeof DataView.prototype.getBigInt64,
      eval: attempt(() => eval(one)),
      Function: attempt(() => Function("return " + one)),
      asyncFunction: attempt(() => (async function () {}).constructor("return " + one)),
      generatorFunction: attempt(() => (function* () {}).constructor("return " + one)),
      plainEval: eval("1 + 1"),
      plainFunction: Function("a", "return a * 2")(21),
    };`,
    `{ action: "continue", arguments: seen }`,
  );
  const run = await runBefore(bundle);
  expect(run.outcome, JSON.stringify(run.error)).toBe("continue");
  expect(run.value).toEqual({
    action: "continue",
    arguments: {
      BigInt: "undefined",
      BigInt64Array: "undefined",
      BigUint64Array: "undefined",
      getBigInt64: "undefined",
      eval: "SyntaxError",
      Function: "SyntaxError",
      asyncFunction: "SyntaxError",
      generatorFunction: "SyntaxError",
      plainEval: 2,
      plainFunction: 42,
    },
  });
});

it("still answers normally after the hostile runs, with arguments intact", async ({ expect }) => {
  const run = await runBefore(TRIVIAL_BUNDLE);
  expect(run.value).toEqual({ action: "continue", arguments: ARGS });
});
