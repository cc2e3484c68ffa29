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
 * - Built-ins that loop natively (Array, TypedArray and String methods, typed
 *   array constructors, Array.from, Object.keys and kin) never reach an
 *   interrupt poll, so `new Array(1e9).join()` would run for seconds unbounded.
 *   Each is replaced by a Proxy whose `apply` trap charges the work the native
 *   will do *before* it runs, from lengths, counts and needles read once and
 *   pinned (receiver and arguments); when the budget is gone the call throws and
 *   the next poll interrupts the run uncatchably. The Proxy keeps the method's
 *   `name` and `length`. `concat` (with non-genuine arguments), `flat` and
 *   `flatMap` run as JavaScript, and `JSON.stringify` gets a pass-through
 *   replacer, so the elements they visit are interpreter ticks. Natives whose
 *   work is set by a value made once and reused (JSON.parse, RegExp, apply,
 *   Object.assign, buffers, Set algebra; docs/isolate.md lists them) are
 *   charged on every call, and built-in iterators step through a Proxy, so
 *   spreading an array is a tick per element instead of one native copy.
 * - BigInt is removed: its operators cannot be charged (docs/isolate.md).
 * - `context` is built per run (`begin`) from host JSON: deep-frozen config,
 *   base64 helpers, and log functions whose payloads are JSON-escaped, so lone
 *   surrogates survive the copy to the host exactly.
 * - The returned driver functions (begin, readCallState, takeLogs, invoke,
 *   describe, serialize, describeThrown) are what the host calls; they use built-ins
 *   captured before hook code ran. What the host reads from their answers is
 *   read with no guest code running (docs/isolate.md, "What the host reads back").
 */
/**
 * A BigInt literal (`10n`, `0x1fn`, `1_000n`): a numeric literal directly followed by `n`, not part of an
 * identifier or a decimal. It may also match inside a string or comment; such source is refused too, which errs
 * on the closed side.
 */
export const BIGINT_LITERAL = /(?<![\w$.])(?:0[xXoObB][\da-fA-F_]+|\d[\d_]*)n(?![\w$])/;

export const PRELUDE_SOURCE = String.raw`(function (hostCharge, hostLogRefused, hostUtf8Bytes, base64Source) {
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
  const bigIntLiteralSource = ${JSON.stringify(BIGINT_LITERAL.source)};
  const ceil = Math.ceil;
  const log2 = Math.log2;
  const RealDate = Date;
  const brands = new WeakSet();
  const weakSetAdd = WeakSet.prototype.add;
  const weakSetHas = WeakSet.prototype.has;
  // For reading a thrown value without running any of its code (describeThrown), before the charging below wraps slice.
  const getOwnPropertyDescriptor = Object.getOwnPropertyDescriptor;
  const getPrototypeOf = Object.getPrototypeOf;
  const hasOwn = Object.prototype.hasOwnProperty;
  const sliceString = String.prototype.slice;
  // The base64 codec gets built-ins captured before hook code (and the charging below) can change them.
  const base64 = apply(apply(evalGlobal, undefined, [base64Source]), undefined, [apply, String.prototype.charAt,
    String.prototype.charCodeAt, Array.prototype.push, Array.prototype.join, encodeURIComponent, decodeURIComponent, unescape]);
  // Per-run state, set by begin().
  let calledAtMs = 0;
  let context;
  // This run's log: its entries as JSON text, comma-separated (a string, so nothing planted on Array.prototype sees
  // them), and the caps [entries, message characters, data bytes] the host set for the run (startCall).
  let logText = "";
  let logCount = 0;
  let logCaps = [0, 0, 0];
  // Set once the host refused work (the budget, a log cap): every later log call throws, as the host would.
  let refused = false;
  // Whether code read the clock or Math.random since begin(): a bundle whose top level did is not imaged, since its
  // evaluated state would depend on the call that evaluated it (isolate.instance.ts, bundle images).
  let readCallState = false;

  // ---- work charging for natively looping built-ins ----
  // A native loop never reaches an interrupt poll, so it is charged before it runs, by the work it will do: every
  // length it will read, taken once here and pinned so a getter, valueOf or Proxy cannot report less to the charge
  // than to the native. Where the work hides in arguments (concat, flat), the loop runs in JavaScript instead, so
  // interpreter ticks count it. JS calls made by a native (getters, traps, callbacks) are ticks too.
  const FLUSH_UNITS = 20000;
  const MAX_LENGTH = 9007199254740991;
  /** Characters of a string copied, filled or scanned per unit. */
  const CHARS_PER_UNIT = 16;
  const FILL_CHARS_PER_UNIT = 32;
  /** Longest string QuickJS builds (JS_STRING_LEN_MAX); past it a native throws RangeError before any work. */
  const MAX_STRING_LENGTH = 1073741823;
  const ArrayOf = Array;
  const ObjectOf = Object;
  const isArray = Array.isArray;
  const floor = Math.floor;
  const reflectGet = Reflect.get;
  const symbolSpecies = Symbol.species;
  const symbolSpreadable = Symbol.isConcatSpreadable;
  const TypedArray = Object.getPrototypeOf(Uint8Array);
  const typedArrayLength = Object.getOwnPropertyDescriptor(TypedArray.prototype, "length").get;
  const arrayBufferByteLength = Object.getOwnPropertyDescriptor(ArrayBuffer.prototype, "byteLength").get;
  let pendingUnits = 0;
  function charge(units) {
    // NaN (an unknown amount) is charged as the whole budget: the host counts it as Infinity.
    if (pendingUnits + units < FLUSH_UNITS) { pendingUnits += units; return; }
    const flushed = pendingUnits + units;
    pendingUnits = 0;
    if (hostCharge(flushed)) {
      refused = true;
      throw new RangeError("work budget exhausted");
    }
  }

  // Every Proxy hook code creates is recorded, so a Proxy of an array is never taken for a genuine one.
  const proxies = new WeakSet();
  const revocableProxy = Proxy.revocable;
  G.Proxy = new ProxyOf(ProxyOf, { __proto__: null, construct(target, args, newTarget) {
    const proxy = construct(target, args, newTarget);
    apply(weakSetAdd, proxies, [proxy]);
    return proxy;
  } });
  ProxyOf.revocable = function revocable(target, handler) {
    const pair = apply(revocableProxy, ProxyOf, [target, handler]);
    apply(weakSetAdd, proxies, [pair.proxy]);
    return pair;
  };
  function isObject(value) {
    return value !== null && (typeof value === "object" || typeof value === "function");
  }
  /** An Array whose "length" is its own exotic data property: exact, no code runs to read it. */
  function isGenuineArray(value) {
    return isArray(value) && !apply(weakSetHas, proxies, [value]);
  }
  /** A typed array's own element count (what its methods loop over), or -1 for anything else. */
  function typedLengthOf(value) {
    try { return apply(typedArrayLength, value, []); } catch (error) { return -1; }
  }
  function isArrayBuffer(value) {
    try { apply(arrayBufferByteLength, value, []); return true; } catch (error) { return false; }
  }
  // ToLength: the one read of a length (ToNumber calls valueOf once, and throws where the native would).
  function toLength(value) {
    const number = +value;
    if (!(number > 0)) return 0;
    return number > MAX_LENGTH ? MAX_LENGTH : floor(number);
  }
  function toIntegerOrInfinity(value) {
    const number = +value;
    if (number !== number) return 0;
    return number < 0 ? -floor(-number) : floor(number);
  }
  /** "target" as the native sees it, with "length" pinned to the value that was charged. */
  function pinnedLength(target, length) {
    return new ProxyOf(target, { __proto__: null, get(object, key, receiver) { return key === "length" ? length : reflectGet(object, key, receiver); } });
  }
  /**
   * An array-like argument (concat items aside) as the native will read it, and its charge: genuine arrays and
   * typed arrays as they are, other objects with their length pinned; an ArrayBuffer is viewed, not copied.
   */
  function arrayLikeArgument(value) {
    if (!isObject(value)) return { value, length: 0 };
    if (isGenuineArray(value)) return { value, length: value.length };
    const typedLength = typedLengthOf(value);
    if (typedLength >= 0) return { value, length: typedLength };
    if (isArrayBuffer(value)) return { value, length: 0 };
    const length = toLength(value.length);
    return { value: pinnedLength(value, length), length };
  }
  function chargingArrayLike(costOf) {
    return { __proto__: null, apply(target, receiver, args) {
      if (isGenuineArray(receiver) || !isObject(receiver)) {
        charge(costOf(typeof receiver === "string" || isGenuineArray(receiver) ? receiver.length : 0));
        return apply(target, receiver, args);
      }
      const length = toLength(receiver.length);
      charge(costOf(length));
      const pinned = pinnedLength(receiver, length);
      const result = apply(target, pinned, args);
      return result === pinned ? receiver : result;
    } };
  }
  function chargingTyped(costOf) {
    // A typed array's methods loop over its internal length, whatever an own "length" property says.
    return { __proto__: null, apply(target, receiver, args) {
      const length = typedLengthOf(receiver);
      charge(costOf(length > 0 ? length : 0));
      return apply(target, receiver, args);
    } };
  }
  function linearCost(length) { return length; }
  function sortCost(length) { return length > 1 ? length * ceil(log2(length)) : length; }

  function createDataProperty(target, index, value) {
    defineProperty(target, index, { value, writable: true, enumerable: true, configurable: true });
  }
  function toObject(value, method) {
    if (value === null || value === undefined) throw new TypeError("Array.prototype." + method + " called on null or undefined");
    return Object(value);
  }
  function arraySpeciesCreate(original) {
    if (!isArray(original)) return new ArrayOf(0);
    let C = original.constructor;
    if (isObject(C)) {
      C = C[symbolSpecies];
      if (C === null) C = undefined;
    }
    return C === undefined ? new ArrayOf(0) : construct(C, [0]);
  }
  // concat, flat and flatMap take their work from arguments and elements; their JavaScript versions below follow
  // the specification, and each element they visit costs interpreter ticks, holes included.
  function isConcatSpreadable(value) {
    if (!isObject(value)) return false;
    const spreadable = value[symbolSpreadable];
    return spreadable !== undefined ? !!spreadable : isArray(value);
  }
  function concatSlowly(object, items) {
    const result = arraySpeciesCreate(object);
    let n = 0;
    for (let i = -1; i < items.length; i++) {
      const item = i < 0 ? object : items[i];
      if (isConcatSpreadable(item)) {
        const length = toLength(item.length);
        if (n + length > MAX_LENGTH) throw new TypeError("concat: the result is too long");
        for (let k = 0; k < length; k++, n++) if (k in item) createDataProperty(result, n, item[k]);
      } else {
        if (n >= MAX_LENGTH) throw new TypeError("concat: the result is too long");
        createDataProperty(result, n++, item);
      }
    }
    result.length = n;
    return result;
  }
  const concatNative = Array.prototype.concat;
  function flattenInto(target, source, sourceLength, start, depth, mapper, thisArg) {
    let targetIndex = start;
    for (let i = 0; i < sourceLength; i++) {
      if (!(i in source)) continue;
      let element = source[i];
      if (mapper !== undefined) element = apply(mapper, thisArg, [element, i, source]);
      if (depth > 0 && isArray(element)) {
        targetIndex = flattenInto(target, element, toLength(element.length), targetIndex, depth - 1);
      } else {
        if (targetIndex >= MAX_LENGTH) throw new TypeError("flat: the result is too long");
        createDataProperty(target, targetIndex++, element);
      }
    }
    return targetIndex;
  }
  const arrayMethods = {
    concat(item) {
      const items = [];
      for (let i = 0; i < arguments.length; i++) items[i] = arguments[i];
      // Fast path: a genuine receiver and genuine or primitive items, charged the sum of their lengths.
      if (isGenuineArray(this)) {
        let units = this.length;
        let genuine = true;
        for (let i = 0; i < items.length && genuine; i++) {
          if (isGenuineArray(items[i])) units += items[i].length;
          else genuine = !isObject(items[i]);
        }
        if (genuine) {
          charge(units);
          return apply(concatNative, this, items);
        }
      }
      return concatSlowly(toObject(this, "concat"), items);
    },
    flat() {
      const object = toObject(this, "flat");
      const length = toLength(object.length);
      const depth = arguments[0] === undefined ? 1 : toIntegerOrInfinity(arguments[0]);
      const result = arraySpeciesCreate(object);
      flattenInto(result, object, length, 0, depth < 0 ? 0 : depth);
      return result;
    },
    flatMap(mapper) {
      const object = toObject(this, "flatMap");
      const length = toLength(object.length);
      if (typeof mapper !== "function") throw new TypeError("flatMap: the mapper is not a function");
      const result = arraySpeciesCreate(object);
      flattenInto(result, object, length, 0, 1, mapper, arguments[1]);
      return result;
    },
  };

  // Strings: the receiver is converted once (a lying toString cannot shrink the charge), and every argument that
  // sets the work (a needle, a replacement, a count, a target length) is converted once and passed on converted.
  function toStringOnce(value) {
    return typeof value === "string" ? value : "" + toStringOf(value);
  }
  function toStringOnce(value) {
    if (typeof value === "string") return value;
    if (typeof value === "symbol") throw new TypeError("cannot convert a Symbol value to a string");
    return toStringOf(value);
  }
  const symbolMatch = Symbol.match;
  const regExpSource = Object.getOwnPropertyDescriptor(RegExp.prototype, "source").get;
  function isRegExp(value) {
    if (!isObject(value)) return false;
    const matcher = value[symbolMatch];
    if (matcher !== undefined) return !!matcher;
    try { apply(regExpSource, value, []); return true; } catch (error) { return false; }
  }
  const stringIncludes = String.prototype.includes;
  const DELEGATE = { __proto__: null, replace: Symbol.replace, replaceAll: Symbol.replace, split: Symbol.split };
  /** indexOf, lastIndexOf, includes, replace, replaceAll, split: naive search costs receiver × needle. */
  function searching(name) {
    const symbol = DELEGATE[name];
    return { __proto__: null, apply(target, receiver, args) {
      if (receiver === null || receiver === undefined) return apply(target, receiver, args);
      const converted = [];
      for (let i = 0; i < args.length; i++) converted[i] = args[i];
      let needle = args[0];
      if (isObject(needle)) {
        // The specification's own dispatch, done once here, so the native never asks the object again.
        if (symbol !== undefined) {
          if (name === "replaceAll" && isRegExp(needle)) {
            const flags = needle.flags;
            if (flags === null || flags === undefined || !apply(stringIncludes, toStringOnce(flags), ["g"])) {
              throw new TypeError("replaceAll must be called with a global RegExp");
            }
          }
          const method = needle[symbol];
          if (method !== undefined && method !== null) return apply(method, needle, [receiver, args[1]]);
        } else if (name === "includes" && isRegExp(needle)) {
          throw new TypeError("the first argument must not be a regular expression");
        }
      }
      const string = toStringOnce(receiver);
      if (!(name === "split" && needle === undefined)) converted[0] = needle = toStringOnce(needle);
      const scanned = string.length * (needle !== undefined && needle.length > 1 ? needle.length : 1);
      let written = 0;
      if ((name === "replace" || name === "replaceAll") && typeof args[1] !== "function") {
        converted[1] = toStringOnce(args[1]);
        const matches = name === "replace" ? 1 : needle.length > 0 ? string.length / needle.length : string.length + 1;
        written = matches * converted[1].length;
      }
      charge((scanned + written) / CHARS_PER_UNIT);
      return apply(target, string, converted);
    } };
  }
  /** repeat, padStart, padEnd: the work is the string they build, set by an argument. */
  function building(name) {
    return { __proto__: null, apply(target, receiver, args) {
      if (receiver === null || receiver === undefined) return apply(target, receiver, args);
      const string = toStringOnce(receiver);
      let built;
      let pieces;
      let converted;
      if (name === "repeat") {
        const count = toIntegerOrInfinity(args[0]);
        converted = [count];
        built = string.length * count;
        pieces = string.length > 1 ? count : 0;
      } else {
        const targetLength = toLength(args[0]);
        const filler = args[1] === undefined ? undefined : toStringOnce(args[1]);
        converted = [targetLength, filler];
        built = targetLength;
        pieces = filler !== undefined && filler.length > 1 ? targetLength / filler.length : 0;
      }
      // Out of range (negative, infinite, longer than a string can be), the native throws before any work.
      if (built >= 0 && built <= MAX_STRING_LENGTH) charge(built / FILL_CHARS_PER_UNIT + pieces / CHARS_PER_UNIT);
      return apply(target, string, converted);
    } };
  }
  function scanning(target, receiver, args) {
    if (receiver === null || receiver === undefined) return apply(target, receiver, args);
    const string = toStringOnce(receiver);
    charge(string.length / CHARS_PER_UNIT);
    return apply(target, string, args);
  }

  function wrapMethods(proto, skip, handlerOf) {
    const names = Object.getOwnPropertyNames(proto);
    for (let i = 0; i < names.length; i++) {
      const name = names[i];
      if (skip[name] === true) continue;
      // A plain read (no descriptor object per method): the only accessors, on %TypedArray%.prototype, are
      // skipped by name. An unknown accessor either throws here (every run fails closed) or yields no function.
      const original = proto[name];
      // Assignment keeps the built-in's attributes (writable, configurable, not enumerable).
      if (typeof original === "function") proto[name] = new ProxyOf(original, handlerOf(name));
    }
  }
  const SKIP_ARRAY = { __proto__: null, constructor: true, keys: true, values: true, entries: true, at: true, push: true, pop: true,
    buffer: true, byteLength: true, byteOffset: true, length: true };
  const SORTS = { __proto__: null, sort: true, toSorted: true };
  const arrayLinear = chargingArrayLike(linearCost);
  const arraySorting = chargingArrayLike(sortCost);
  wrapMethods(Array.prototype, SKIP_ARRAY, function (name) { return SORTS[name] === true ? arraySorting : arrayLinear; });
  Array.prototype.concat = arrayMethods.concat;
  Array.prototype.flat = arrayMethods.flat;
  Array.prototype.flatMap = arrayMethods.flatMap;
  const typedLinear = chargingTyped(linearCost);
  const typedSorting = chargingTyped(sortCost);
  wrapMethods(TypedArray.prototype, SKIP_ARRAY, function (name) { return SORTS[name] === true ? typedSorting : typedLinear; });
  const SEARCHES = { __proto__: null, indexOf: true, lastIndexOf: true, includes: true, split: true, replace: true, replaceAll: true };
  const BUILDS = { __proto__: null, repeat: true, padStart: true, padEnd: true };
  const stringScanning = { __proto__: null, apply: scanning };
  wrapMethods(String.prototype,
    { __proto__: null, constructor: true, at: true, charAt: true, charCodeAt: true, codePointAt: true, toString: true, valueOf: true },
    function (name) { return SEARCHES[name] === true ? searching(name) : BUILDS[name] === true ? building(name) : stringScanning; });

  // Constructors and statics that copy an array-like argument: charged by its length, which is pinned.
  const copyingFirstArgument = { __proto__: null,
    apply(target, receiver, args) { return apply(target, receiver, chargedFirst(args)); },
    construct(target, args, newTarget) { return construct(target, chargedFirst(args), newTarget); },
  };
  function chargedFirst(args) {
    const copy = [];
    for (let i = 0; i < args.length; i++) copy[i] = args[i];
    if (typeof copy[0] === "string") charge(copy[0].length);
    else {
      const argument = arrayLikeArgument(copy[0]);
      charge(argument.length);
      copy[0] = argument.value;
    }
    return copy;
  }
  /** A typed array constructor's handler: a length is charged as the bytes it zero-fills, anything else as it copies. */
  function typedArrayConstructing(bytesPerElement) {
    return { __proto__: null,
      apply(target, receiver, args) { return apply(target, receiver, args); },
      construct(target, args, newTarget) {
        if (isObject(args[0])) return construct(target, chargedFirst(args), newTarget);
        const copy = [];
        for (let i = 0; i < args.length; i++) copy[i] = args[i];
        if (typeof copy[0] === "string") charge(copy[0].length);
        copy[0] = toIntegerOrInfinity(copy[0]);
        chargeBytes(copy[0] * bytesPerElement);
        return construct(target, copy, newTarget);
      },
    };
  }
  const TYPED_ARRAYS = ["Int8Array", "Uint8Array", "Uint8ClampedArray", "Int16Array", "Uint16Array", "Int32Array", "Uint32Array",
    "Float16Array", "Float32Array", "Float64Array"];
  for (let i = 0; i < TYPED_ARRAYS.length; i++) {
    const Constructor = G[TYPED_ARRAYS[i]];
    if (typeof Constructor !== "function") continue;
    const guarded = new ProxyOf(Constructor, typedArrayConstructing(Constructor.BYTES_PER_ELEMENT));
    G[TYPED_ARRAYS[i]] = guarded;
    defineProperty(Constructor.prototype, "constructor", { value: guarded });
  }
  ArrayOf.from = new ProxyOf(ArrayOf.from, copyingFirstArgument);
  TypedArray.from = new ProxyOf(TypedArray.from, copyingFirstArgument);
  // Own keys of a typed array or string are one per element, created on the spot: charged before they are.
  // Every other own key is listed afresh on each call, however long ago it was created: the list is charged too,
  // after the call, by its length (one call's work is bounded by the heap; the next call then finds the budget gone).
  function chargedAfter(result) {
    charge(isGenuineArray(result) ? result.length : isObject(result) ? apply(ownKeysNative, undefined, [result]).length : 0);
    return result;
  }
  const keyedByElement = { __proto__: null, apply(target, receiver, args) {
    const value = args[0];
    const typedLength = typedLengthOf(value);
    charge(typedLength >= 0 ? typedLength : typeof value === "string" ? value.length : 0);
    return chargedAfter(apply(target, receiver, args));
  } };
  const ownKeysNative = Reflect.ownKeys;
  const KEYED = ["keys", "values", "entries", "getOwnPropertyNames", "getOwnPropertySymbols", "getOwnPropertyDescriptors"];
  for (let i = 0; i < KEYED.length; i++) Object[KEYED[i]] = new ProxyOf(Object[KEYED[i]], keyedByElement);
  Reflect.ownKeys = new ProxyOf(ownKeysNative, keyedByElement);
  // Object.assign copies every own key of every source: charged by their count, listed once. A Proxy source (its
  // ownKeys trap could list few keys to the charge and many to the native) is copied in JavaScript from that list.
  const assignNative = Object.assign;
  const propertyIsEnumerable = Object.prototype.propertyIsEnumerable;
  Object.assign = new ProxyOf(assignNative, { __proto__: null, apply(target, receiver, args) {
    if (args.length < 2) return apply(target, receiver, args);
    const to = toObjectOf(args[0]);
    for (let i = 1; i < args.length; i++) {
      const source = args[i];
      if (source === null || source === undefined) continue;
      if (!isObject(source)) {
        charge(typeof source === "string" ? source.length : 0);
        apply(assignNative, undefined, [to, source]);
        continue;
      }
      const ownKeys = apply(ownKeysNative, undefined, [source]);
      charge(ownKeys.length);
      if (!apply(weakSetHas, proxies, [source])) {
        apply(assignNative, undefined, [to, source]);
        continue;
      }
      for (let k = 0; k < ownKeys.length; k++) {
        const key = ownKeys[k];
        if (apply(propertyIsEnumerable, source, [key])) to[key] = source[key];
      }
    }
    return to;
  } });
  function toObjectOf(value) {
    if (value === null || value === undefined) throw new TypeError("cannot convert undefined or null to object");
    return ObjectOf(value);
  }
  // JSON.stringify without a replacer function gets one that returns each value unchanged (the same output): each
  // value it visits, holes included, is then a call the interpreter counts.
  function keepValue(key, value) { return value; }
  JSON.stringify = new ProxyOf(stringify, { __proto__: null, apply(target, receiver, args) {
    const replacer = args[1];
    return apply(target, receiver, [args[0], isObject(replacer) ? replacer : keepValue, args[2]]);
  } });

  // Parsing and compiling: JSON.parse builds a value from every character of its text, and the RegExp constructor
  // (and the legacy compile) compiles every character of its pattern, both with no poll; eval and the Function
  // constructors are charged the same way for their source (below). The text is converted once and passed on.
  /** Characters parsed or compiled per unit: about a tick's work each, measured against the interpreter. */
  const PARSE_CHARS_PER_UNIT = 8;
  JSON.parse = new ProxyOf(parse, { __proto__: null, apply(target, receiver, args) {
    const text = toStringOnce(args[0]);
    charge(text.length / PARSE_CHARS_PER_UNIT);
    return apply(target, receiver, [text, args[1]]);
  } });
  const RegExpNative = RegExp;
  function chargedPattern(args) {
    const copy = [];
    for (let i = 0; i < args.length; i++) copy[i] = args[i];
    let length = 0;
    const pattern = copy[0];
    if (isObject(pattern)) {
      try { length = apply(regExpSource, pattern, []).length; } catch (error) { copy[0] = toStringOnce(pattern); length = copy[0].length; }
    } else if (pattern !== undefined) {
      copy[0] = toStringOnce(pattern);
      length = copy[0].length;
    }
    if (copy[1] !== undefined) copy[1] = toStringOnce(copy[1]);
    charge(length / PARSE_CHARS_PER_UNIT);
    return copy;
  }
  const GuardedRegExp = new ProxyOf(RegExpNative, { __proto__: null,
    apply(target, receiver, args) { return apply(target, receiver, chargedPattern(args)); },
    construct(target, args, newTarget) { return construct(target, chargedPattern(args), newTarget === GuardedRegExp ? target : newTarget); },
  });
  G.RegExp = GuardedRegExp;
  defineProperty(RegExpNative.prototype, "constructor", { value: GuardedRegExp, writable: true, enumerable: false, configurable: true });
  RegExpNative.prototype.compile = new ProxyOf(RegExpNative.prototype.compile, { __proto__: null, apply(target, receiver, args) {
    return apply(target, receiver, chargedPattern(args));
  } });

  // Iteration: spreading an array ([...a], f(...a), destructuring with a rest) copies it natively, with no poll, and
  // a Map, Set or string iterated by a built-in (spread, Array.from, new Set, Promise.all, the iterator helpers) is
  // stepped natively. Each iterator's next, wrapped in a Proxy, leaves the engine's fast path for arrays, and every
  // step through a Proxy is an interpreter tick.
  const ITERATED = [[], "", new Map(), new Set()];
  const iteratorPrototypes = [getPrototypeOf(/a/[Symbol.matchAll](""))];
  for (let i = 0; i < ITERATED.length; i++) iteratorPrototypes[i + 1] = getPrototypeOf(ITERATED[i][Symbol.iterator]());
  for (let i = 0; i < iteratorPrototypes.length; i++) {
    iteratorPrototypes[i].next = new ProxyOf(iteratorPrototypes[i].next, { __proto__: null });
  }

  // Calls with an argument list: Function.prototype.apply, Reflect.apply and Reflect.construct copy the list natively
  // (up to 65,534 arguments), charged by its length, read once and pinned. A bound function copies its bound arguments
  // on every call: past a few, each call is charged their count.
  function listAt(index) {
    return { __proto__: null, apply(target, receiver, args) {
      const copy = [];
      for (let i = 0; i < args.length; i++) copy[i] = args[i];
      const list = arrayLikeArgument(copy[index]);
      charge(list.length);
      copy[index] = list.value;
      return apply(target, receiver, copy);
    } };
  }
  Function.prototype.apply = new ProxyOf(Function.prototype.apply, listAt(1));
  Reflect.apply = new ProxyOf(apply, listAt(2));
  Reflect.construct = new ProxyOf(construct, listAt(1));
  // A function's source text is copied out on every toString: charged by its length, after.
  Function.prototype.toString = new ProxyOf(Function.prototype.toString, { __proto__: null, apply(target, receiver, args) {
    const text = apply(target, receiver, args);
    charge(text.length / CHARS_PER_UNIT);
    return text;
  } });
  /** Bound arguments copied per call without a charge. */
  const FREE_BOUND_ARGUMENTS = 16;
  const bindNative = Function.prototype.bind;
  Function.prototype.bind = new ProxyOf(bindNative, { __proto__: null, apply(target, receiver, args) {
    const bound = apply(target, receiver, args);
    const count = args.length - 1;
    if (count <= FREE_BOUND_ARGUMENTS) return bound;
    charge(count);
    const charged = new ProxyOf(bound, { __proto__: null,
      apply(boundTarget, thisArg, callArgs) { charge(count); return apply(boundTarget, thisArg, callArgs); },
      construct(boundTarget, callArgs, newTarget) { charge(count); return construct(boundTarget, callArgs, newTarget === charged ? boundTarget : newTarget); },
    });
    return charged;
  } });

  // Buffers: a new ArrayBuffer, SharedArrayBuffer or typed array of a given length is zero-filled, a resize fills what
  // it adds, a slice or transfer copies: charged by the bytes, before.
  /** Bytes zeroed or copied per unit. */
  const BYTES_PER_UNIT = 4096;
  /** Past this a buffer's length makes the native throw RangeError before any work, so it is not charged. */
  const MAX_BUFFER_BYTES = 2147483647;
  function chargeBytes(bytes) {
    if (bytes > 0 && bytes <= MAX_BUFFER_BYTES) charge(bytes / BYTES_PER_UNIT);
  }
  /** new ArrayBuffer(length, { maxByteLength }): both read once, the larger charged, the native given what was read. */
  function chargedBufferArguments(args) {
    const length = toIntegerOrInfinity(args[0]);
    const copy = [length];
    const options = args[1];
    if (isObject(options)) {
      const max = options.maxByteLength;
      if (max === undefined) copy[1] = {};
      else {
        const maxBytes = toIntegerOrInfinity(max);
        copy[1] = { maxByteLength: maxBytes };
        chargeBytes(maxBytes > length ? maxBytes : length);
        return copy;
      }
    }
    chargeBytes(length);
    return copy;
  }
  const BUFFERS = ["ArrayBuffer", "SharedArrayBuffer"];
  for (let i = 0; i < BUFFERS.length; i++) {
    const Constructor = G[BUFFERS[i]];
    if (typeof Constructor !== "function") continue;
    const guarded = new ProxyOf(Constructor, { __proto__: null,
      construct(target, args, newTarget) { return construct(target, chargedBufferArguments(args), newTarget === guarded ? target : newTarget); },
    });
    G[BUFFERS[i]] = guarded;
    defineProperty(Constructor.prototype, "constructor", { value: guarded, writable: true, enumerable: false, configurable: true });
    const proto = Constructor.prototype;
    const byteLengthOf = getOwnPropertyDescriptor(proto, "byteLength").get;
    const SIZED = ["slice", "resize", "transfer", "transferToFixedLength", "grow"];
    for (let m = 0; m < SIZED.length; m++) {
      const name = SIZED[m];
      const method = proto[name];
      if (typeof method !== "function") continue;
      proto[name] = new ProxyOf(method, { __proto__: null, apply(target, receiver, args) {
        let bytes = 0;
        try { bytes = apply(byteLengthOf, receiver, []); } catch (error) { bytes = 0; }
        const copy = [];
        for (let a = 0; a < args.length; a++) copy[a] = args[a];
        if (name !== "slice" && copy[0] !== undefined) {
          copy[0] = toIntegerOrInfinity(copy[0]);
          if (copy[0] > bytes) bytes = copy[0];
        }
        chargeBytes(bytes);
        return apply(target, receiver, copy);
      } });
    }
  }

  // Set algebra (union, intersection, difference, symmetricDifference and the three comparisons) walks both sets
  // natively: charged by both sizes, read once, through the engine's own size getter for genuine sets.
  const setSize = getOwnPropertyDescriptor(Set.prototype, "size").get;
  function sizeOf(value) {
    try { return apply(setSize, value, []); } catch (error) { return isObject(value) ? toLength(value.size) : 0; }
  }
  const SET_ALGEBRA = ["union", "intersection", "difference", "symmetricDifference", "isSubsetOf", "isSupersetOf", "isDisjointFrom"];
  for (let i = 0; i < SET_ALGEBRA.length; i++) {
    const method = Set.prototype[SET_ALGEBRA[i]];
    if (typeof method !== "function") continue;
    Set.prototype[SET_ALGEBRA[i]] = new ProxyOf(method, { __proto__: null, apply(target, receiver, args) {
      charge(sizeOf(receiver) + sizeOf(args[0]));
      return apply(target, receiver, args);
    } });
  }

  // Integrity levels: freezing, sealing or testing either visits every own key. Charged by the keys, listed once; on a
  // hook's Proxy (whose ownKeys trap could list more to the native than to the charge) the specification's steps run
  // in JavaScript from that one listing.
  const preventExtensionsNative = Object.preventExtensions;
  const isExtensibleNative = Object.isExtensible;
  function integrity(level, testing) {
    return { __proto__: null, apply(target, receiver, args) {
      const object = args[0];
      if (!isObject(object)) return apply(target, receiver, args);
      const ownKeys = apply(ownKeysNative, undefined, [object]);
      charge(ownKeys.length);
      if (!apply(weakSetHas, proxies, [object])) return apply(target, receiver, args);
      return testing ? testIntegrity(object, level, ownKeys) : setIntegrity(object, level, ownKeys);
    } };
  }
  function setIntegrity(object, level, ownKeys) {
    // Throws a TypeError, as freeze and seal do, when the Proxy's preventExtensions trap refuses.
    preventExtensionsNative(object);
    for (let i = 0; i < ownKeys.length; i++) {
      const key = ownKeys[i];
      if (level === "sealed") { defineProperty(object, key, { configurable: false }); continue; }
      const current = getOwnPropertyDescriptor(object, key);
      if (current === undefined) continue;
      defineProperty(object, key, apply(hasOwn, current, ["value"]) || apply(hasOwn, current, ["writable"])
        ? { configurable: false, writable: false } : { configurable: false });
    }
    return object;
  }
  function testIntegrity(object, level, ownKeys) {
    if (isExtensibleNative(object)) return false;
    for (let i = 0; i < ownKeys.length; i++) {
      const current = getOwnPropertyDescriptor(object, ownKeys[i]);
      if (current === undefined) continue;
      if (current.configurable) return false;
      if (level === "frozen" && (apply(hasOwn, current, ["value"]) || apply(hasOwn, current, ["writable"])) && current.writable) return false;
    }
    return true;
  }
  Object.freeze = new ProxyOf(Object.freeze, integrity("frozen", false));
  Object.seal = new ProxyOf(Object.seal, integrity("sealed", false));
  Object.isFrozen = new ProxyOf(Object.isFrozen, integrity("frozen", true));
  Object.isSealed = new ProxyOf(Object.isSealed, integrity("sealed", true));
  // Object.defineProperties and Object.create(proto, properties) read every own key of the properties object: charged
  // by the keys, listed once; a hook's Proxy as the properties object is read in JavaScript from that listing.
  function chargedProperties(properties) {
    if (!isObject(properties)) return properties;
    const ownKeys = apply(ownKeysNative, undefined, [properties]);
    charge(ownKeys.length);
    if (!apply(weakSetHas, proxies, [properties])) return properties;
    const copy = { __proto__: null };
    for (let i = 0; i < ownKeys.length; i++) {
      const key = ownKeys[i];
      if (apply(propertyIsEnumerable, properties, [key])) defineProperty(copy, key, { value: properties[key], enumerable: true });
    }
    return copy;
  }
  Object.defineProperties = new ProxyOf(Object.defineProperties, { __proto__: null, apply(target, receiver, args) {
    return apply(target, receiver, [args[0], chargedProperties(args[1])]);
  } });
  Object.create = new ProxyOf(Object.create, { __proto__: null, apply(target, receiver, args) {
    return args[1] === undefined ? apply(target, receiver, [args[0]]) : apply(target, receiver, [args[0], chargedProperties(args[1])]);
  } });
  // String.raw loops over its template's raw strings, however many its length says: read once, pinned, charged.
  String.raw = new ProxyOf(String.raw, { __proto__: null, apply(target, receiver, args) {
    const copy = [];
    for (let i = 0; i < args.length; i++) copy[i] = args[i];
    const template = copy[0];
    if (isObject(template)) {
      const raw = template.raw;
      if (isObject(raw)) {
        const list = arrayLikeArgument(raw);
        charge(list.length);
        copy[0] = { raw: list.value };
      }
    }
    return apply(target, receiver, copy);
  } });

  // Text conversions that read every character natively: charged by the text's length, converted once.
  const TEXT_FUNCTIONS = ["parseInt", "parseFloat", "encodeURI", "encodeURIComponent", "decodeURI", "decodeURIComponent",
    "escape", "unescape"];
  const textArgument = { __proto__: null, apply(target, receiver, args) {
    const copy = [];
    for (let i = 0; i < args.length; i++) copy[i] = args[i];
    copy[0] = toStringOnce(copy[0]);
    charge(copy[0].length / CHARS_PER_UNIT);
    return apply(target, receiver, copy);
  } };
  for (let i = 0; i < TEXT_FUNCTIONS.length; i++) {
    const fn = G[TEXT_FUNCTIONS[i]];
    if (typeof fn !== "function") continue;
    const guarded = new ProxyOf(fn, textArgument);
    G[TEXT_FUNCTIONS[i]] = guarded;
    if (TEXT_FUNCTIONS[i] === "parseInt" || TEXT_FUNCTIONS[i] === "parseFloat") Number[TEXT_FUNCTIONS[i]] = guarded;
  }
  if (typeof RegExpNative.escape === "function") RegExpNative.escape = new ProxyOf(RegExpNative.escape, textArgument);
  // Number(text), isNaN(text) and isFinite(text) read a string argument to its end (about 10 ms a MiB): charged by its
  // length. (The same conversion written as an operator, +text, is not seen: docs/isolate.md.)
  const numberOfText = { __proto__: null,
    apply(target, receiver, args) {
      if (typeof args[0] === "string") charge(args[0].length / CHARS_PER_UNIT);
      return apply(target, receiver, args);
    },
    construct(target, args, newTarget) {
      if (typeof args[0] === "string") charge(args[0].length / CHARS_PER_UNIT);
      return construct(target, args, newTarget === GuardedNumber ? target : newTarget);
    },
  };
  const NumberNative = Number;
  const GuardedNumber = new ProxyOf(NumberNative, numberOfText);
  G.Number = GuardedNumber;
  defineProperty(NumberNative.prototype, "constructor", { value: GuardedNumber, writable: true, enumerable: false, configurable: true });
  G.isNaN = new ProxyOf(G.isNaN, numberOfText);
  G.isFinite = new ProxyOf(G.isFinite, numberOfText);

  // ---- no BigInt ----
  // BigInt operators run natively with no poll and no way to charge them (String(1n << 1000000n) takes seconds), so
  // hooks get no BigInt: no globals that create one, and source with a BigInt literal does not compile.
  delete G.BigInt;
  delete G.BigInt64Array;
  delete G.BigUint64Array;
  delete DataView.prototype.getBigInt64;
  delete DataView.prototype.getBigUint64;
  delete DataView.prototype.setBigInt64;
  delete DataView.prototype.setBigUint64;
  const regExpExec = RegExp.prototype.exec;
  const BIGINT_LITERAL = new RegExp(bigIntLiteralSource);
  function checkedSource(value) {
    const source = toStringOnce(value);
    charge(source.length / PARSE_CHARS_PER_UNIT);
    if (apply(regExpExec, BIGINT_LITERAL, [source]) !== null) throw new SyntaxError("BigInt is not available in hooks");
    return source;
  }
  G.eval = new ProxyOf(evalGlobal, { __proto__: null, apply(target, receiver, args) {
    return typeof args[0] === "string" ? apply(target, receiver, [checkedSource(args[0])]) : args[0];
  } });
  function checkedSources(args) {
    const sources = [];
    for (let i = 0; i < args.length; i++) sources[i] = checkedSource(args[i]);
    return sources;
  }
  const compiling = { __proto__: null,
    apply(target, receiver, args) { return construct(target, checkedSources(args)); },
    construct(target, args, newTarget) { return construct(target, checkedSources(args), newTarget); },
  };
  const compilerPrototypes = [Function.prototype, Object.getPrototypeOf(async function () {}),
    Object.getPrototypeOf(function* () {}), Object.getPrototypeOf(async function* () {})];
  for (let i = 0; i < compilerPrototypes.length; i++) {
    const guarded = new ProxyOf(compilerPrototypes[i].constructor, compiling);
    defineProperty(compilerPrototypes[i], "constructor", { value: guarded });
    if (i === 0) G.Function = guarded;
  }

  // ---- the clock is calledAt ----
  function FixedDate(...args) {
    if (new.target === undefined || args.length === 0) readCallState = true;
    if (new.target === undefined) return new RealDate(calledAtMs).toString();
    return construct(RealDate, args.length === 0 ? [calledAtMs] : args, new.target);
  }
  defineProperty(FixedDate, "prototype", { value: RealDate.prototype, writable: false, enumerable: false, configurable: false });
  defineProperty(RealDate.prototype, "constructor", { value: FixedDate, writable: true, enumerable: false, configurable: true });
  FixedDate.now = function now() { readCallState = true; return calledAtMs; };
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
  // Entries stay here until the run ends (the host reads them with takeLogs): a host call per entry cost more than
  // the rest of a small stage. Only a refusal, and data whose UTF-8 size its length cannot settle, reach the host.
  function logRefusal(text, dataJson) {
    if (logCount >= logCaps[0]) return "more than " + logCaps[0] + " log entries";
    if (text.length > logCaps[1]) return "log message longer than " + logCaps[1] + " characters";
    if (dataJson === undefined) return undefined;
    // A UTF-16 unit is 1 to 3 UTF-8 bytes: only lengths between the cap's third and the cap need counting.
    if (dataJson.length > logCaps[2] || (dataJson.length * 3 > logCaps[2] && hostUtf8Bytes(dataJson) > logCaps[2])) {
      return "log data larger than " + logCaps[2] + " bytes";
    }
    return undefined;
  }
  function logAt(level) {
    return function (message, data) {
      if (refused) throw new RangeError("log limit exceeded");
      const text = typeof message === "string" ? message : toStringOf(message);
      const messageJson = stringify(text);
      let dataJson;
      if (data !== undefined) {
        dataJson = stringify(data, keepValue);
        if (typeof dataJson !== "string") throw new TypeError("log data must be JSON-serialisable");
      }
      const refusal = logRefusal(text, dataJson);
      if (refusal !== undefined) {
        refused = true;
        hostLogRefused(refusal);
        throw new RangeError("log limit exceeded");
      }
      const entry = '["' + level + '",' + messageJson + (dataJson === undefined ? "]" : "," + dataJson + "]");
      logText = logCount === 0 ? entry : logText + "," + entry;
      logCount++;
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
  Math.random = function random() {
    readCallState = true;
    return ((next32() >>> 5) * 67108864 + (next32() >>> 6)) / 9007199254740992;
  };

  // ---- reading a thrown value with none of its code running ----
  /** Prototypes looked through for a property; a longer chain is read as not having it. */
  const MAX_PROTOTYPES = 64;
  /**
   * The value of a data property \`key\` on \`object\` or its prototypes, found without running guest code: an
   * accessor or a Proxy on the way (its traps are guest code) reads as absent. Descriptors of ordinary objects are
   * the engine's own answers.
   */
  function plainProperty(object, key) {
    let current = object;
    for (let depth = 0; depth < MAX_PROTOTYPES && current !== null; depth++) {
      if (apply(weakSetHas, proxies, [current])) return undefined;
      const descriptor = getOwnPropertyDescriptor(current, key);
      if (descriptor !== undefined) return apply(hasOwn, descriptor, ["value"]) ? descriptor.value : undefined;
      current = getPrototypeOf(current);
    }
    return undefined;
  }
  /** A primitive as text (String() of a primitive runs no guest code); an object is not converted. */
  function primitiveText(value, maxChars) {
    if (isObject(value)) return undefined;
    const text = typeof value === "string" ? value : toStringOf(value);
    return text.length > maxChars ? apply(sliceString, text, [0, maxChars]) : text;
  }

  // ---- driver (host-facing) ----
  /**
   * The call's clock, random seed, context and log caps: [calledAt, seed0, seed1, seed2, seed3, context, logCount,
   * logMessageChars, logDataBytes]. With a null context (a bundle evaluated for its image) the clock reads 0, the
   * seed is 0 and the caps are 0, so the image holds nothing of any call.
   */
  function startCall(call) {
    calledAtMs = call[0];
    ra = call[1] | 0; rb = call[2] | 0; rc = call[3] | 0; rd = call[4] | 0;
    for (let i = 0; i < 12; i++) next32();
    readCallState = false;
    logText = "";
    logCount = 0;
    logCaps = [call[6], call[7], call[8]];
    refused = false;
    const meta = call[5];
    if (meta === null) { context = undefined; return; }
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
  }
  function adapterOrThrow() {
    const root = G.__rayrun;
    const adapter = root === null || root === undefined ? undefined : root.default;
    if (adapter === null || typeof adapter !== "object") {
      throw new TypeError("the bundle did not leave an adapter object at globalThis.__rayrun.default");
    }
    return adapter;
  }
  return freeze({
    // Starts a run: the call's clock, random seed and context (see startCall), as JSON.
    begin(callJson) {
      startCall(parse(callJson));
    },
    // True when code read the clock or Math.random since begin().
    readCallState() {
      return readCallState;
    },
    // The run's log entries, comma-separated JSON arrays [level, message, data?], or undefined when there are none.
    takeLogs() {
      return logCount === 0 ? undefined : logText;
    },
    // The stage's promise, or "absent" when the adapter does not define it; throws when there is no adapter object.
    // The JSON is [call, input]: a call that is not null starts the run first (see startCall), so a run restored
    // from a bundle image needs one crossing for both.
    invoke(stage, json) {
      const parsed = parse(json);
      if (parsed[0] !== null) startCall(parsed[0]);
      const adapter = adapterOrThrow();
      if (typeof adapter[stage] !== "function") return "absent";
      const input = parsed[1];
      // Define, not assign: a setter planted on Object.prototype must not see the context.
      defineProperty(input, "context", { value: context, writable: true, enumerable: true, configurable: true });
      return (async function () { return adapter[stage](input); })();
    },
    // Inspection only (compiler): the host passes DESCRIBE_SOURCE, so the instance image does not carry it.
    // A default export that is not an object (e.g. "export default 42") is described as unbranded, not thrown.
    // [branded, stages, apiVersion, publicContract]: an array literal the host reads element by element (own data,
    // no guest code), so nothing the adapter plants (a toJSON, a getter) can change the brand or the stages.
    describe(source) {
      const root = G.__rayrun;
      const candidate = root === null || root === undefined ? undefined : root.default;
      if (candidate === null || typeof candidate !== "object") return [false, "", undefined, undefined];
      const described = apply(evalGlobal, undefined, [source])(candidate);
      return [apply(weakSetHas, brands, [candidate]), described[0], described[1], described[2]];
    },
    // JSON text, or undefined when the value has no JSON form; throws like JSON.stringify. Text longer than
    // maxLength is answered with its length instead, so the host measures it without copying it.
    serialize(value, maxLength) {
      const text = stringify(value);
      return typeof text === "string" && text.length > maxLength ? text.length : text;
    },
    // [kind, name, message] of a thrown value, read by plainProperty: kind is "object" or the primitive's typeof
    // ("null" for null); name is a string or undefined; message is text cut at maxChars ("" when unreadable).
    describeThrown(value, maxChars) {
      if (value === null) return ["null", undefined, "null"];
      if (!isObject(value)) return [typeof value, undefined, primitiveText(value, maxChars)];
      const name = plainProperty(value, "name");
      const message = plainProperty(value, "message");
      return ["object", typeof name === "string" ? primitiveText(name, maxChars) : undefined, primitiveText(message === undefined ? "" : message, maxChars) ?? ""];
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
 * `describe` with the adapter: `[stages, apiVersion, publicContract]`, where
 * `stages` is "before,after", "before", "after" or "" (a string literal, so
 * nothing the hook planted can change it on its way to the host). Reading the
 * adapter's fields may run its getters: what they answer is the hook's own choice.
 */
export const DESCRIBE_SOURCE = String.raw`(function (adapter) {
  "use strict";
  const hasBefore = typeof adapter.before === "function";
  const hasAfter = typeof adapter.after === "function";
  // Array literals define (not set) elements: a polluted Array.prototype cannot fake them.
  const stages = hasBefore && hasAfter ? "before,after" : hasBefore ? "before" : hasAfter ? "after" : "";
  return [stages, adapter.apiVersion, adapter.publicContract];
})`;
