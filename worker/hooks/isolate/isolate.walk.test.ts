import { it } from "vitest";
import { walkNatives } from "./isolate.walk.fixtures.ts";

/**
 * Every built-in function of the engine is accounted for: a native that loops over something a hook controls is
 * charged (the prelude replaced it), and every other one is listed here with why it needs no charge. A native this
 * table does not name (a new one after a QuickJS update) fails the test until someone decides which it is.
 */

/** Replaced by the prelude to charge its work (isolate.prelude.ts, docs/isolate.md "Native work"). */
const CHARGED: RegExp[] = [
  /^Array\.prototype\.(?!(at|pop|push|values|keys|entries|\[Symbol\.iterator\])$)/,
  /^%TypedArray%\.prototype\.(?!(at|values|keys|entries|\[Symbol\.iterator\]|(length|buffer|byteLength|byteOffset|\[Symbol\.toStringTag\]) get)$)/,
  /^String\.prototype\.(?!(at|charAt|charCodeAt|codePointAt|toString|valueOf|\[Symbol\.iterator\])$)/,
  /^(Array|%TypedArray%)\.from$/,
  /^Object\.(create|defineProperties|keys|values|entries|getOwnPropertyNames|getOwnPropertySymbols|getOwnPropertyDescriptors|assign|freeze|seal|isFrozen|isSealed)$/,
  /^Reflect\.(apply|construct|ownKeys)$/,
  /^JSON\.(parse|stringify)$/,
  /^(parseInt|parseFloat|isNaN|isFinite|decodeURI|decodeURIComponent|encodeURI|encodeURIComponent|escape|unescape|Number)$/,
  /^(eval|Function|%(Async)?(Generator)?Function\.prototype%\.constructor|%AsyncGeneratorFunction\.prototype%\.constructor)$/,
  /^(String\.raw|RegExp|RegExp\.escape|RegExp\.prototype\.compile)$/,
  /^(ArrayBuffer|SharedArrayBuffer|(Int8|Uint8|Uint8Clamped|Int16|Uint16|Int32|Uint32|Float16|Float32|Float64)Array)$/,
  /^ArrayBuffer\.prototype\.(resize|slice|transfer|transferToFixedLength)$/,
  /^SharedArrayBuffer\.prototype\.(grow|slice)$/,
  /^Set\.prototype\.(union|intersection|difference|symmetricDifference|isSubsetOf|isSupersetOf|isDisjointFrom)$/,
  /^Function\.prototype\.(apply|bind|toString)$/,
  /^%(Array|String|Map|Set|RegExpString)IteratorPrototype%\.next$/,
];

/** Replaced by the prelude for another reason: the call's clock, the run's random seed, recorded Proxies, no BigInt. */
const REPLACED_OTHERWISE: RegExp[] = [
  /^Date$/,
  /^Math\.random$/,
  /^Proxy(\.revocable)?$/,
  /^(BigInt|BigInt64Array|BigUint64Array)$/,
  /^DataView\.prototype\.(get|set)Big(Ui|I)nt64$/,
];

/** Left as the engine has them, and why they need no charge. */
const UNCHARGED: [pattern: RegExp, why: string][] = [
  [/^BigInt\.(asUintN|asIntN|prototype\.(toString|valueOf))$/, "unreachable: the prelude deletes BigInt"],
  [/^(Iterator|Function\.prototype)$/, "throws, or returns undefined"],
  [/^String$/, "converts one value: an object's own toString or valueOf is the guest's code, an array's join is charged"],
  [/^Math\.(?!(max|min|hypot|sumPrecise|random)$)/, "a fixed amount of arithmetic on one or two numbers"],
  [
    /^(Math\.(max|min|hypot)|Array\.of|%TypedArray%\.of|String\.(fromCharCode|fromCodePoint)|Function\.prototype\.call|Array\.prototype\.push)$/,
    "work per argument: each argument was written out, spread (a tick each) or listed by apply (charged)",
  ],
  [
    /^(Array|Object|Boolean|Symbol|Error|EvalError|RangeError|ReferenceError|SyntaxError|TypeError|URIError|InternalError|AggregateError|DataView|WeakRef|FinalizationRegistry)$/,
    "a constructor doing a fixed amount of work per argument (an error's stack is a residual risk: docs/isolate.md)",
  ],
  [
    /^(Map|Set|WeakMap|WeakSet|Promise)$/,
    "a constructor whose work is the steps of its iterable (ticks) and calls of its adder or executor (ticks)",
  ],
  [
    /^(Math\.sumPrecise|Object\.(fromEntries|groupBy)|(Map|Set)\.groupBy|Promise\.(all|allSettled|any|race)|Iterator\.(concat|from))$/,
    "work is the steps of an iterator (ticks: built-in iterators step through a Proxy) or calls of a callback (ticks)",
  ],
  [
    /^%(IteratorPrototype|IteratorHelperPrototype|WrapForValidIteratorPrototype|GeneratorPrototype|AsyncGeneratorPrototype)%\./,
    "iterator helpers and generators: every step is a call of next or of a callback, or the guest's own code",
  ],
  [/^%AsyncIteratorPrototype%\.\[Symbol\.asyncIterator\]$/, "returns its receiver"],
  [
    /^(Array\.prototype|%TypedArray%\.prototype|String\.prototype|Map\.prototype|Set\.prototype)\.(values|keys|entries|\[Symbol\.iterator\])$/,
    "creates an iterator; its steps are ticks",
  ],
  [/^(Array|%TypedArray%|String)\.prototype\.(at|charAt|charCodeAt|codePointAt|pop|toString|valueOf)$/, "reads or removes one element"],
  [/^Map\.prototype\.(forEach)$|^Set\.prototype\.forEach$/, "a callback per entry: each call is ticks"],
  [
    /^(Map|Set|WeakMap|WeakSet)\.prototype\.(set|get|getOrInsert|getOrInsertComputed|has|delete|add|size get)$/,
    "one hashed entry (a long string key is a residual risk: docs/isolate.md)",
  ],
  [/^(Map|Set)\.prototype\.clear$/, "removes entries that each took ticks to add, and only once"],
  [
    /^(Date\.(now|parse|UTC)|Date\.prototype\..*)$/,
    "a fixed amount of date arithmetic (parse stops at the first character it cannot read)",
  ],
  [/^DataView\.prototype\./, "reads or writes one value"],
  [/^(Number|Boolean|Symbol|Error)\.prototype\./, "a fixed amount of work on one value (number text is at most about a hundred digits)"],
  [/^Number\.(isNaN|isFinite|isInteger|isSafeInteger)$/, "tests one number, converting nothing"],
  [/^(Symbol\.(for|keyFor)|Error\.isError|Array\.isArray|ArrayBuffer\.isView)$/, "one lookup or test"],
  [/^(WeakRef|FinalizationRegistry|Promise)\.prototype\./, "one registration, reaction or lookup"],
  [/^Promise\.(resolve|reject|withResolvers|try)$/, "one promise"],
  [
    /^(Object\.(getPrototypeOf|getOwnPropertyDescriptor|defineProperty|is|hasOwn|isExtensible|preventExtensions)|Reflect\.(defineProperty|deleteProperty|getOwnPropertyDescriptor|getPrototypeOf|isExtensible|preventExtensions))$/,
    "one property or one object's flag",
  ],
  [
    /^(Object\.setPrototypeOf|Reflect\.(get|set|has|setPrototypeOf)|Object\.prototype\.(__proto__ (get|set)|__lookupGetter__|__lookupSetter__|isPrototypeOf))$/,
    "one property, or a walk of a prototype chain (a long chain is a residual risk: docs/isolate.md; isPrototypeOf polls)",
  ],
  [
    /^Object\.prototype\.(toString|toLocaleString|valueOf|hasOwnProperty|propertyIsEnumerable|__defineGetter__|__defineSetter__)$/,
    "one property or a fixed-size text",
  ],
  [
    /^Function\.prototype\.(caller get|caller set|arguments get|arguments set|fileName get|lineNumber get|columnNumber get|\[Symbol\.hasInstance\])$/,
    "throws, reads one recorded position, or walks a prototype chain polling at each step",
  ],
  [
    /^RegExp\.prototype\.(exec|test|toString|\[Symbol\.(match|matchAll|replace|search|split)\]|(flags|source|global|ignoreCase|multiline|dotAll|unicode|unicodeSets|sticky|hasIndices) get)$/,
    "the regex engine polls; each match found is a call of exec; the accessors read recorded flags",
  ],
  [
    /^((Array|Map|Set|RegExp|Promise|ArrayBuffer|SharedArrayBuffer|%TypedArray%)\.\[Symbol\.species\] get|(ArrayBuffer|SharedArrayBuffer)\.prototype\.(byteLength|maxByteLength|resizable|detached|growable) get|%TypedArray%\.prototype\.(length|buffer|byteLength|byteOffset|\[Symbol\.toStringTag\]) get)$/,
    "an accessor returning a recorded value",
  ],
];

it("has charged every native that loops over what a hook controls, and says why each other one needs no charge", async ({ expect }) => {
  const walked = await walkNatives();
  expect(walked.length).toBeGreaterThan(400);
  const unclassified: string[] = [];
  const notReplaced: string[] = [];
  const replacedUnexpectedly: string[] = [];
  for (const { path, replaced } of walked) {
    if (CHARGED.some((pattern) => pattern.test(path))) {
      if (!replaced) notReplaced.push(path);
    } else if (REPLACED_OTHERWISE.some((pattern) => pattern.test(path))) {
      if (!replaced) notReplaced.push(path);
    } else if (UNCHARGED.some(([pattern]) => pattern.test(path))) {
      if (replaced) replacedUnexpectedly.push(path);
    } else unclassified.push(path);
  }
  expect({ unclassified, notReplaced, replacedUnexpectedly }).toEqual({ unclassified: [], notReplaced: [], replacedUnexpectedly: [] });
});
