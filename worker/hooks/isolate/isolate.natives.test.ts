import { it } from "vitest";
import { ARGS, beforeBundle, expectFailsClosed, runBefore } from "./isolate.fixtures.ts";

/**
 * Built-ins whose native work grows with a value made once and then reused: each call was one interpreter tick, so
 * a loop of them ran for seconds to minutes with no poll, holding the Worker isolate every workspace shares (security
 * round 4: 2,600 JSON.parse calls of one 512 KiB text ran 103 s on 132 of 1,000 polls). Each now fails `timeout`,
 * charged by the work it does.
 */
const hostile: [name: string, body: string, budget?: number][] = [
  [
    "JSON.parse of one 512 KiB text, 2,600 times",
    `const s = "[" + "1,".repeat(1 << 18) + "1]"; for (let i = 0; i < 2600; i++) JSON.parse(s)`,
  ],
  ["new RegExp of one 112 KiB pattern, 2,000 times", `const p = "a".repeat(112 * 1024); for (let i = 0; i < 2000; i++) new RegExp(p)`],
  [
    "RegExp.prototype.compile of one 112 KiB pattern",
    `const p = "a".repeat(112 * 1024); const r = /a/; for (let i = 0; i < 2000; i++) r.compile(p)`,
  ],
  ["Object.assign from a 64 Ki-element array", `const a = new Array(1 << 16).fill(1); for (let i = 0; i < 2000; i++) Object.assign({}, a)`],
  [
    "Object.assign between typed arrays",
    `const a = new Uint8Array(1 << 18), b = new Uint8Array(1 << 18); for (let i = 0; i < 1000; i++) Object.assign(a, b)`,
  ],
  [
    "Object.assign from a Proxy whose ownKeys lists nothing every other time",
    `const keys = Array.from({ length: 1 << 16 }, (_, i) => "k" + i); let n = 0;
    const p = new Proxy({}, { ownKeys: () => (n++ % 2 ? keys : []) });
    for (let i = 0; i < 2000; i++) Object.assign({}, p)`,
    // Each listing is copied in JavaScript (a Proxy's traps are the hook's code): a small budget keeps that short.
    20,
  ],
  ["Object.keys of a 64 Ki-element array", `const a = new Array(1 << 16).fill(1); for (let i = 0; i < 2000; i++) Object.keys(a)`],
  [
    "Object.getOwnPropertyNames of an object with 32 Ki keys",
    `const o = {}; for (let i = 0; i < 1 << 15; i++) o["k" + i] = i; for (let i = 0; i < 2000; i++) Object.getOwnPropertyNames(o)`,
  ],
  ["spreading a 64 Ki-element array", `const a = new Array(1 << 16).fill(1); for (let i = 0; i < 2000; i++) [...a]`],
  ["Math.max(...a) of 32 Ki elements", `const a = new Array(1 << 15).fill(1); for (let i = 0; i < 2000; i++) Math.max(...a)`],
  [
    "a rest element of a 64 Ki-element array",
    `const a = new Array(1 << 16).fill(1); for (let i = 0; i < 2000; i++) { const [x, ...rest] = a }`,
  ],
  ["spreading a 64 Ki-character string", `const s = "x".repeat(1 << 16); for (let i = 0; i < 2000; i++) [...s]`],
  [
    "spreading a Map and a Set of 64 Ki entries",
    `const a = Array.from({ length: 1 << 16 }, (_, i) => [i, i]); const m = new Map(a), s = new Set(m.keys()); for (let i = 0; i < 2000; i++) { [...m]; [...s] }`,
  ],
  ["Math.max.apply of 32 Ki elements", `const a = new Array(1 << 15).fill(1); for (let i = 0; i < 20000; i++) Math.max.apply(null, a)`],
  [
    "Reflect.apply of 32 Ki arguments",
    `const a = new Array(1 << 15).fill(1); for (let i = 0; i < 20000; i++) Reflect.apply(Math.max, null, a)`,
  ],
  [
    "Reflect.construct with 32 Ki arguments",
    `const a = new Array(1 << 15).fill(1); for (let i = 0; i < 20000; i++) Reflect.construct(Array, a)`,
  ],
  [
    "a function bound to 1,000 arguments, called 100,000 times",
    `const f = function () { return 0 }.bind(null, ...new Array(1000).fill(0)); for (let i = 0; i < 100000; i++) f()`,
  ],
  ["new Uint8Array(8e6), 2,000 times", `for (let i = 0; i < 2000; i++) new Uint8Array(8e6)`],
  ["new ArrayBuffer(8e6), 2,000 times", `for (let i = 0; i < 2000; i++) new ArrayBuffer(8e6)`],
  ["slicing an 8 MB ArrayBuffer", `const b = new ArrayBuffer(8e6); for (let i = 0; i < 2000; i++) b.slice(0)`],
  [
    "the union of two 64 Ki-element sets",
    `const a = new Set(Array.from({ length: 1 << 16 }, (_, i) => i)); for (let i = 0; i < 2000; i++) a.union(a)`,
  ],
  ["parseFloat of a 1 MiB numeral", `const s = "1".repeat(1 << 20); for (let i = 0; i < 2000; i++) parseFloat(s)`],
  ["decodeURIComponent of 1 MiB", `const s = "%41".repeat(1 << 18); for (let i = 0; i < 2000; i++) decodeURIComponent(s)`],
  ["eval of a 256 KiB source", `const s = "0;".repeat(1 << 17); for (let i = 0; i < 2000; i++) eval(s)`],
  ["Number() of a 1 MiB numeral", `const s = "1".repeat(1 << 20); for (let i = 0; i < 2000; i++) Number(s)`],
  ["isNaN of a 1 MiB numeral", `const s = "1".repeat(1 << 20); for (let i = 0; i < 2000; i++) isNaN(s)`],
  ["RegExp.escape of 1 MiB", `const s = "a".repeat(1 << 20); for (let i = 0; i < 2000; i++) RegExp.escape(s)`],
  [
    "Object.isFrozen and Object.freeze of an object with 32 Ki keys",
    `const o = {}; for (let i = 0; i < 1 << 15; i++) o["k" + i] = i; for (let i = 0; i < 2000; i++) { Object.isFrozen(o); Object.freeze(o) }`,
  ],
  [
    "Object.defineProperties from an object with 32 Ki keys",
    `const p = {}; for (let i = 0; i < 1 << 15; i++) p["k" + i] = { value: i }; for (let i = 0; i < 2000; i++) Object.defineProperties({}, p)`,
  ],
  ["String.raw of a template whose raw length is 1e9", `String.raw({ raw: { length: 1e9 } })`],
  ["new Float16Array({ length: 1e7 })", `new Float16Array({ length: 1e7 })`],
  [
    "toString of a function with 256 KiB of source",
    `const f = new Function("return 1;" + " ".repeat(1 << 18)); for (let i = 0; i < 20000; i++) f.toString()`,
  ],
];

// A fifth of the default budget (or less), so each stops on the budget, the bound that holds where the clock stands
// still while code runs (as on deployed Workers), well before the 1 s deadline could.
for (const [name, body, budget = 200] of hostile) {
  it(`charges the native work: ${name} → timeout`, async ({ expect }) => {
    const run = await expectFailsClosed(runBefore(beforeBundle(body), { arguments: ARGS }, { workBudgetPolls: budget }), "timeout", expect);
    expect(run.error?.message).toBe(`work budget of ${budget} polls exhausted`);
  });
}

it("keeps what the charged built-ins return, and the errors they throw", async ({ expect }) => {
  const bundle = beforeBundle(
    `const out = {};
    out.parsed = JSON.parse('{"a":[1,2]}', (key, value) => (key === "a" ? value.length : value));
    out.regExp = [new RegExp("a+", "g").flags, RegExp("b").source, /c/.constructor === RegExp, new RegExp(/d/i).flags,
      RegExp("e") instanceof RegExp, "x-y".split(/-/).length];
    const compiled = /a/; compiled.compile("z", "g"); out.compiled = compiled.source + compiled.flags;
    out.assigned = Object.assign({}, { a: 1 }, "xy", null, undefined, new Proxy({ p: 2 }, {}));
    out.keys = [Object.keys([4, 5]), Object.getOwnPropertySymbols({ [Symbol.iterator]: 1 }).length,
      Object.keys(Object.getOwnPropertyDescriptors({ q: 1 }))];
    out.spread = [[...[1, 2]], [..."ab"], [...new Set([3])], [...new Map([[4, 5]])], Math.max(...[1, 9, 2])];
    let sum = 0; for (const v of [1, 2, 3]) sum += v; out.sum = sum;
    out.applied = [Math.max.apply(null, [1, 3, 2]), Reflect.apply(Math.min, null, [4, 2]), Reflect.construct(Array, [7]).length];
    function Pair(...parts) { this.parts = parts }
    const Bound = Pair.bind(null, ...new Array(20).fill(0).map((_, i) => i));
    const pair = new Bound(20);
    out.bound = [Bound(20) === undefined, pair.parts.length, pair instanceof Pair];
    const resizable = new ArrayBuffer(8, { maxByteLength: 16 }); resizable.resize(12);
    out.buffers = [new ArrayBuffer(8).byteLength, resizable.byteLength, new Uint8Array(4).length, new Uint8Array([1, 2]).length,
      new Float64Array(new ArrayBuffer(16)).length, new ArrayBuffer(8).slice(2).byteLength, new ArrayBuffer(4) instanceof ArrayBuffer];
    out.errors = [];
    for (const bad of [() => new ArrayBuffer(-1), () => new Uint8Array(-1), () => JSON.parse("{"), () => new RegExp("("), () => ArrayBuffer(1)]) {
      try { bad(); out.errors.push("none") } catch (error) { out.errors.push(error.name) }
    }
    out.sets = [[...new Set([1, 2]).union(new Set([3]))], new Set([1]).isSubsetOf(new Set([1, 2]))];
    out.text = [parseInt("12px"), Number.parseFloat("1.5e1"), encodeURIComponent("a b"), decodeURI("%41"), unescape("%42"),
      Number("12"), new Number(5) instanceof Number, (5).constructor === Number, isNaN("x"), isFinite("1"), RegExp.escape("a.b"),
      String.raw({ raw: ["a", "b"] }, 1), String.raw\`x\\ny\`, (function named() {}).toString()];
    const frozen = Object.freeze({ f: 1 }), sealed = Object.seal({ s: 1 });
    const target = { t: 1 }, proxied = new Proxy(target, {});
    Object.freeze(proxied);
    out.integrity = [Object.isFrozen(frozen), Object.isSealed(sealed), Object.isFrozen(sealed), Object.isFrozen(target),
      Object.isFrozen(proxied), Object.isFrozen({}), Object.isFrozen(1), Object.isSealed(Object.preventExtensions({}))];
    try { Object.freeze(new Proxy({}, { preventExtensions: () => false })); out.integrity.push("none") } catch (error) { out.integrity.push(error.name) }
    out.defined = [Object.keys(Object.defineProperties({}, { a: { value: 1, enumerable: true }, b: { value: 2 } })),
      Object.create(null, new Proxy({ c: { value: 3, enumerable: true } }, {})).c, Object.getPrototypeOf(Object.create(null)) === null]`,
    `{ action: "continue", arguments: out }`,
  );
  const run = await runBefore(bundle);
  expect(run.outcome, JSON.stringify(run.error)).toBe("continue");
  expect(run.value).toEqual({
    action: "continue",
    arguments: {
      parsed: { a: 2 },
      regExp: ["g", "b", true, "i", true, 2],
      compiled: "zg",
      assigned: { 0: "x", 1: "y", a: 1, p: 2 },
      keys: [["0", "1"], 1, ["q"]],
      spread: [[1, 2], ["a", "b"], [3], [[4, 5]], 9],
      sum: 6,
      applied: [3, 2, 7],
      bound: [true, 21, true],
      buffers: [8, 12, 4, 2, 2, 6, true],
      errors: ["RangeError", "RangeError", "SyntaxError", "SyntaxError", "TypeError"],
      sets: [[1, 2, 3], true],
      text: [12, 15, "a%20b", "A", "B", 12, true, true, true, true, "\\x61\\.b", "a1b", "x\\ny", "function named() {}"],
      integrity: [true, true, false, true, true, false, true, true, "TypeError"],
      defined: [["a"], 3, true],
    },
  });
});
