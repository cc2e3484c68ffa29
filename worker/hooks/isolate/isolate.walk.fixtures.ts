import wasmModule from "@jitl/quickjs-wasmfile-release-sync/wasm";
import releaseVariant from "@jitl/quickjs-wasmfile-release-sync";
import { newQuickJSWASMModuleFromVariant, newVariant } from "quickjs-emscripten-core";
import { BASE64_SOURCE, PRELUDE_SOURCE } from "./isolate.prelude.ts";

/** A built-in function of the engine, by where it is first found, and whether the prelude put something else there. */
export interface WalkedNative {
  path: string;
  replaced: boolean;
}

/**
 * Run before the prelude: finds every function reachable from the global object and the intrinsic prototypes that
 * are not properties of anything (iterators, generators), by own properties (values and accessors, string and symbol
 * keys), and returns a function that, run after the prelude, says for each whether its property now holds another.
 */
const WALK_SOURCE = String.raw`(function () {
  const ownKeys = Reflect.ownKeys, describe = Object.getOwnPropertyDescriptor, protoOf = Object.getPrototypeOf;
  const roots = [
    [globalThis, ""],
    [protoOf([][Symbol.iterator]()), "%ArrayIteratorPrototype%"],
    [protoOf(protoOf([][Symbol.iterator]())), "%IteratorPrototype%"],
    [protoOf(""[Symbol.iterator]()), "%StringIteratorPrototype%"],
    [protoOf(new Map()[Symbol.iterator]()), "%MapIteratorPrototype%"],
    [protoOf(new Set()[Symbol.iterator]()), "%SetIteratorPrototype%"],
    [protoOf(/a/[Symbol.matchAll]("")), "%RegExpStringIteratorPrototype%"],
    [protoOf(Uint8Array), "%TypedArray%"],
    [protoOf(function* () {}), "%GeneratorFunction.prototype%"],
    [protoOf(function* () {}).prototype, "%GeneratorPrototype%"],
    [protoOf(async function () {}), "%AsyncFunction.prototype%"],
    [protoOf(async function* () {}), "%AsyncGeneratorFunction.prototype%"],
    [protoOf(async function* () {}).prototype, "%AsyncGeneratorPrototype%"],
    [protoOf(protoOf(async function* () {}).prototype), "%AsyncIteratorPrototype%"],
    [protoOf(Iterator.from({ next() {} })), "%WrapForValidIteratorPrototype%"],
    [protoOf([].values().map((x) => x)), "%IteratorHelperPrototype%"],
  ];
  const found = [];
  const seen = new Set();
  const queue = roots.slice();
  while (queue.length > 0) {
    const [object, path] = queue.shift();
    if (seen.has(object)) continue;
    seen.add(object);
    for (const key of ownKeys(object)) {
      const descriptor = describe(object, key);
      const name = (path === "" ? "" : path + ".") + (typeof key === "symbol" ? "[" + key.description + "]" : String(key));
      for (const kind of ["value", "get", "set"]) {
        const value = descriptor[kind];
        if (typeof value === "function" && !seen.has(value)) found.push({ path: kind === "value" ? name : name + " " + kind, object, key, kind, value });
        if (value !== null && (typeof value === "function" || typeof value === "object")) queue.push([value, name]);
      }
    }
  }
  return function compare() {
    const reported = new Set();
    const out = [];
    for (const entry of found) {
      if (reported.has(entry.value)) continue;
      reported.add(entry.value);
      const now = describe(entry.object, entry.key);
      out.push({ path: entry.path, replaced: now === undefined || now[entry.kind] !== entry.value });
    }
    return JSON.stringify(out);
  };
})()`;

/** Every native the engine has, before the prelude ran, and whether the prelude replaced it. */
export async function walkNatives(): Promise<WalkedNative[]> {
  const module = await newQuickJSWASMModuleFromVariant(newVariant(releaseVariant, { wasmModule }));
  const runtime = module.newRuntime();
  const vm = runtime.newContext();
  try {
    const compare = vm.unwrapResult(vm.evalCode(WALK_SOURCE, "walk.js", { type: "global", strict: true }));
    const charge = vm.newFunction("charge", () => vm.false);
    const logRefused = vm.newFunction("logRefused", () => vm.undefined);
    const utf8Bytes = vm.newFunction("utf8Bytes", () => vm.newNumber(0));
    const base64 = vm.newString(BASE64_SOURCE);
    const prelude = vm.unwrapResult(vm.evalCode(PRELUDE_SOURCE, "rayrun-prelude.js", { type: "global", strict: true }));
    vm.unwrapResult(vm.callFunction(prelude, vm.undefined, charge, logRefused, utf8Bytes, base64)).dispose();
    const report = vm.unwrapResult(vm.callFunction(compare, vm.undefined));
    const json = vm.getString(report);
    for (const handle of [report, prelude, base64, logRefused, utf8Bytes, charge, compare]) handle.dispose();
    return JSON.parse(json) as WalkedNative[];
  } finally {
    vm.dispose();
    runtime.dispose();
  }
}
