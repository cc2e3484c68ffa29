/**
 * Trusted JavaScript evaluated once per QuickJS wasm instance, before the
 * memory image every run starts from is taken (isolate.instance.ts). It
 * evaluates to a function that the host calls once with its host functions;
 * those stay in this closure, so hook code can never reach them. Because the
 * image is restored before every run, whatever a run changes here is undone.
 *
 * What it does, and why:
 * - `defineToolAdapter` brands adapters in a closure WeakSet, so the runtime
 *   can tell an adapter built by it from a look-alike object.
 * - The clock is the call's `calledAt`: `Date.now()`, `new Date()` and `Date()`
 *   return it (deterministic hooks, no timing side channel).
 * - `Math.random` is reseeded from the host for every run: QuickJS seeds its
 *   own generator once per context, so every run restored from the same image
 *   would otherwise draw the same numbers.
 * - Built-ins that loop natively over a receiver's length (Array, TypedArray
 *   and String methods) never reach an interrupt poll, so `new Array(1e9).join()`
 *   would run for seconds unbounded. Each is replaced by a Proxy whose `apply`
 *   trap charges the call to the work budget *before* the native runs; when the
 *   budget is gone the call throws and the next poll interrupts the run
 *   uncatchably. The Proxy keeps the method's `name` and `length`.
 * - `context` is built per run (`begin`) from host JSON: deep-frozen config,
 *   base64 helpers, and log functions whose payloads are JSON-escaped, so lone
 *   surrogates survive the copy to the host exactly.
 * - The returned driver functions (begin, stageKind, invoke, describe,
 *   serialize) are what the host calls; they use built-ins captured before
 *   hook code ran.
 */
export const PRELUDE_SOURCE = String.raw`(function (hostCharge, hostLog, base64Source) {
  "use strict";
  const G = globalThis;
  const apply = Reflect.apply;
  const construct = Reflect.construct;
  const freeze = Object.freeze;
  const isFrozen = Object.isFrozen;
  const keys = Object.keys;
  const defineProperty = Object.defineProperty;
  const stringify = JSON.stringify;
  const parse = JSON.parse;
  const toStringOf = String;
  const ProxyOf = Proxy;
  const evalGlobal = eval;
  const ceil = Math.ceil;
  const log2 = Math.log2;
  const RealDate = Date;
  const brands = new WeakSet();
  const weakSetAdd = WeakSet.prototype.add;
  const weakSetHas = WeakSet.prototype.has;
  // The base64 codec gets built-ins captured before hook code (and the charging below) can change them.
  const base64 = apply(apply(evalGlobal, undefined, [base64Source]), undefined, [apply, String.prototype.charAt,
    String.prototype.charCodeAt, Array.prototype.push, Array.prototype.join, encodeURIComponent, decodeURIComponent, unescape]);
  // Per-run state, set by begin().
  let calledAtMs = 0;
  let context;

  // ---- work charging for natively looping built-ins ----
  const FLUSH_UNITS = 20000;
  let pendingUnits = 0;
  function charge(units) {
    pendingUnits += units;
    if (pendingUnits < FLUSH_UNITS) return;
    const flushed = pendingUnits;
    pendingUnits = 0;
    if (hostCharge(flushed)) throw new RangeError("work budget exhausted");
  }
  function lengthOf(receiver) {
    if (receiver === null || receiver === undefined) return 0;
    const length = receiver.length;
    return typeof length === "number" && length > 0 ? length : 0;
  }
  function charging(costOf) {
    return { __proto__: null, apply(target, receiver, args) { charge(costOf(receiver, args)); return apply(target, receiver, args); } };
  }
  const linear = charging(lengthOf);
  const sorting = charging(function (receiver) {
    const length = lengthOf(receiver);
    return length > 1 ? length * ceil(log2(length)) : length;
  });
  // Strings are charged 16 characters per unit; substring search is quadratic in the worst case (naive search), so n*m.
  const scanning = charging(function (receiver) {
    return typeof receiver === "string" ? receiver.length / 16 : 0;
  });
  const searching = charging(function (receiver, args) {
    const needle = typeof args[0] === "string" ? args[0].length : 0;
    return typeof receiver === "string" ? (receiver.length * (needle > 1 ? needle : 1)) / 16 : 0;
  });
  function wrapMethods(proto, skip, special, plain, specialHandler) {
    const names = Object.getOwnPropertyNames(proto);
    for (let i = 0; i < names.length; i++) {
      const name = names[i];
      if (skip[name] === true) continue;
      // A plain read (no descriptor object per method): the only accessors, on %TypedArray%.prototype, are
      // skipped by name. An unknown accessor either throws here (every run fails closed) or yields no function.
      const original = proto[name];
      // Assignment keeps the built-in's attributes (writable, configurable, not enumerable).
      if (typeof original === "function") proto[name] = new ProxyOf(original, special[name] === true ? specialHandler : plain);
    }
  }
  const SKIP_ARRAY = { __proto__: null, constructor: true, keys: true, values: true, entries: true, at: true, push: true, pop: true,
    buffer: true, byteLength: true, byteOffset: true, length: true };
  const SORTS = { __proto__: null, sort: true, toSorted: true };
  wrapMethods(Array.prototype, SKIP_ARRAY, SORTS, linear, sorting);
  wrapMethods(Object.getPrototypeOf(Uint8Array.prototype), SKIP_ARRAY, SORTS, linear, sorting);
  wrapMethods(String.prototype,
    { __proto__: null, constructor: true, at: true, charAt: true, charCodeAt: true, codePointAt: true, toString: true, valueOf: true },
    { __proto__: null, indexOf: true, lastIndexOf: true, includes: true, split: true, replace: true, replaceAll: true },
    scanning, searching);

  // ---- the clock is calledAt ----
  function FixedDate(...args) {
    if (new.target === undefined) return new RealDate(calledAtMs).toString();
    return construct(RealDate, args.length === 0 ? [calledAtMs] : args, new.target);
  }
  defineProperty(FixedDate, "prototype", { value: RealDate.prototype, writable: false, enumerable: false, configurable: false });
  defineProperty(RealDate.prototype, "constructor", { value: FixedDate, writable: true, enumerable: false, configurable: true });
  FixedDate.now = function now() { return calledAtMs; };
  FixedDate.parse = RealDate.parse;
  FixedDate.UTC = RealDate.UTC;
  defineProperty(G, "Date", { value: FixedDate, writable: true, enumerable: false, configurable: true });

  // ---- adapter branding ----
  defineProperty(G, "defineToolAdapter", {
    value: function defineToolAdapter(adapter) {
      if (adapter !== null && (typeof adapter === "object" || typeof adapter === "function")) apply(weakSetAdd, brands, [adapter]);
      return adapter;
    },
    writable: true, enumerable: false, configurable: true,
  });

  // ---- context ----
  function deepFreeze(value) {
    if (value === null || typeof value !== "object" || isFrozen(value)) return value;
    freeze(value);
    const names = keys(value);
    for (let i = 0; i < names.length; i++) deepFreeze(value[names[i]]);
    return value;
  }
  const encoding = freeze({ base64Encode: base64[0], base64Decode: base64[1] });
  function logAt(level) {
    return function (message, data) {
      const messageJson = stringify(typeof message === "string" ? message : toStringOf(message));
      let dataJson;
      if (data !== undefined) {
        dataJson = stringify(data);
        if (typeof dataJson !== "string") throw new TypeError("log data must be JSON-serialisable");
      }
      if (hostLog(level, messageJson, dataJson)) throw new RangeError("log limit exceeded");
    };
  }

  const log = freeze({ debug: logAt("debug"), info: logAt("info"), warn: logAt("warn"), error: logAt("error") });

  // ---- Math.random: sfc32, 53 bits from two outputs, seeded per run ----
  let ra = 0, rb = 0, rc = 0, rd = 0;
  function next32() {
    const t = (((ra + rb) | 0) + rd) | 0;
    rd = (rd + 1) | 0;
    ra = rb ^ (rb >>> 9);
    rb = (rc + (rc << 3)) | 0;
    rc = (((rc << 21) | (rc >>> 11)) + t) | 0;
    return t >>> 0;
  }
  Math.random = function random() { return ((next32() >>> 5) * 67108864 + (next32() >>> 6)) / 9007199254740992; };

  // ---- driver (host-facing) ----
  function adapterOrThrow() {
    const root = G.__rayrun;
    const adapter = root === null || root === undefined ? undefined : root.default;
    if (adapter === null || typeof adapter !== "object") {
      throw new TypeError("the bundle did not leave an adapter object at globalThis.__rayrun.default");
    }
    return adapter;
  }
  return freeze({
    // Starts a run: the call's clock, random seed and context.
    begin(contextJson, calledAt, seed0, seed1, seed2, seed3) {
      calledAtMs = calledAt;
      ra = seed0 | 0; rb = seed1 | 0; rc = seed2 | 0; rd = seed3 | 0;
      for (let i = 0; i < 12; i++) next32();
      const meta = parse(contextJson);
      context = freeze({
        calledAt: meta.calledAt,
        requestId: meta.requestId,
        workspaceUid: meta.workspaceUid,
        connectionId: meta.connectionId,
        toolUid: meta.toolUid,
        toolName: meta.toolName,
        config: deepFreeze(meta.config),
        encoding,
        log,
      });
    },
    // "function" | "absent"; throws when there is no adapter object.
    stageKind(stage) {
      return typeof adapterOrThrow()[stage] === "function" ? "function" : "absent";
    },
    invoke(stage, inputJson) {
      const adapter = adapterOrThrow();
      const input = parse(inputJson);
      // Define, not assign: a setter planted on Object.prototype must not see the context.
      defineProperty(input, "context", { value: context, writable: true, enumerable: true, configurable: true });
      return (async function () { return adapter[stage](input); })();
    },
    // Inspection only (compiler): the host passes DESCRIBE_SOURCE, so the instance image does not carry it.
    // A default export that is not an object (e.g. "export default 42") is described as unbranded, not thrown.
    describe(source) {
      const root = G.__rayrun;
      const candidate = root === null || root === undefined ? undefined : root.default;
      if (candidate === null || typeof candidate !== "object") return { stages: [], branded: false };
      return apply(evalGlobal, undefined, [source])(candidate, apply(weakSetHas, brands, [candidate]));
    },
    // JSON text, or undefined when the value has no JSON form; throws like JSON.stringify.
    serialize(value) {
      return stringify(value);
    },
  });
})`;

/**
 * The base64 codec (UTF-8, standard padded alphabet), compiled inside the
 * context during setup. It evaluates to a factory that
 * receives built-ins captured by the prelude before hook code ran, and returns
 * `[base64Encode, base64Decode]`; invalid input throws inside the hook.
 */
export const BASE64_SOURCE = String.raw`(function (apply, charAt, charCodeAt, push, join, encodeURIComponentNative, decodeURIComponentNative, unescapeNative) {
  "use strict";
  const B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  const B64_INDEX = { __proto__: null };
  for (let i = 0; i < 64; i++) B64_INDEX[apply(charAt, B64, [i])] = i;
  function base64Encode(value) {
    if (typeof value !== "string") throw new TypeError("base64Encode expects a string");
    // encodeURIComponent throws URIError on a lone surrogate: invalid input throws.
    const bytes = unescapeNative(encodeURIComponentNative(value));
    const parts = [];
    for (let i = 0; i < bytes.length; i += 3) {
      const a = apply(charCodeAt, bytes, [i]);
      const b = i + 1 < bytes.length ? apply(charCodeAt, bytes, [i + 1]) : 0;
      const c = i + 2 < bytes.length ? apply(charCodeAt, bytes, [i + 2]) : 0;
      const n = (a << 16) | (b << 8) | c;
      apply(push, parts, [
        apply(charAt, B64, [(n >> 18) & 63]) + apply(charAt, B64, [(n >> 12) & 63]) +
          (i + 1 < bytes.length ? apply(charAt, B64, [(n >> 6) & 63]) : "=") +
          (i + 2 < bytes.length ? apply(charAt, B64, [n & 63]) : "="),
      ]);
    }
    return apply(join, parts, [""]);
  }
  const HEX = "0123456789abcdef";
  function percentByte(byte) {
    return "%" + apply(charAt, HEX, [byte >> 4]) + apply(charAt, HEX, [byte & 15]);
  }
  function base64Decode(value) {
    if (typeof value !== "string") throw new TypeError("base64Decode expects a string");
    let end = value.length;
    if (end % 4 !== 0) throw new TypeError("base64Decode: length must be a multiple of 4");
    let padding = 0;
    while (padding < 2 && end > 0 && apply(charAt, value, [end - 1]) === "=") { end--; padding++; }
    const parts = [];
    let bits = 0;
    let bitCount = 0;
    for (let i = 0; i < end; i++) {
      const digit = B64_INDEX[apply(charAt, value, [i])];
      if (digit === undefined) throw new TypeError("base64Decode: invalid character at " + i);
      bits = ((bits << 6) | digit) & 0xffffff;
      bitCount += 6;
      if (bitCount >= 8) {
        bitCount -= 8;
        apply(push, parts, [percentByte((bits >> bitCount) & 255)]);
      }
    }
    try {
      return decodeURIComponentNative(apply(join, parts, [""]));
    } catch (error) {
      throw new TypeError("base64Decode: data is not valid UTF-8");
    }
  }
  return [base64Encode, base64Decode];
})`;

/**
 * The adapter description for `evaluateAdapter`, evaluated by the driver's
 * `describe` with the adapter and whether `defineToolAdapter` branded it.
 */
export const DESCRIBE_SOURCE = String.raw`(function (adapter, branded) {
  "use strict";
  const hasBefore = typeof adapter.before === "function";
  const hasAfter = typeof adapter.after === "function";
  // Array literals define (not set) elements: a polluted Array.prototype cannot fake stages.
  const stages = hasBefore && hasAfter ? ["before", "after"] : hasBefore ? ["before"] : hasAfter ? ["after"] : [];
  return { apiVersion: adapter.apiVersion, stages, branded, publicContract: adapter.publicContract };
})`;
