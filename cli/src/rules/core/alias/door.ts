// The alias door of one run: seeds in, personas derived from the run key, and the
// three directions over JSON values: to alias space (in), back to real values
// (out, with the refusals), and the leak scan (meter and run_end check).
import { MAX_EVENT_DEPTH } from "../bounds.ts";
import { deriveAll, domainKeeper, Hmac, newRunKey, type DeriveOptions, type Derived, type HmacSha256 } from "./derive.ts";
import { FREE_MAIL_DOMAINS } from "./names.ts";
import { germanTransliteration, isAsciiLetter } from "./normalise.ts";
import { SpellingMatcher } from "./phrases.ts";
import { AliasError, checkSeeds, type Seed, type SeedEntity } from "./seeds.ts";
import { spellings, storedForm, type Spelling } from "./variants.ts";

/** Characters of strings and keys the door reads in one value (an event's result, body or report). */
export const MAX_ALIAS_TEXT = 16 * 1024 * 1024;
/** Findings one run_end check reports one by one; the rest are counted. */
const MAX_FINDINGS = 100;

export interface AliasOptions {
  /** 64 hex digits; a fresh random key when omitted. Kept with the run, never sent in an event. */
  key?: string;
  /** Worlds that store fields as `sha256:<hex of SHA-256("<slug>:<value>")>`. */
  slugs?: readonly string[];
  publicLayerWins?: boolean;
  /** Free-mail domains kept real inside an email persona; omitted, the built-in list. */
  publicMailboxDomains?: readonly string[];
  /**
   * HMAC-SHA-256 as the runtime does it best; omitted, Web Crypto. Node's Web Crypto costs a thread-pool
   * job per signature, which thousands of seeds feel; the Node SDK passes `node:crypto`'s.
   */
  hmacSha256?: HmacSha256;
}

/** What a phrase stands for: the seed it came from, and the other side's spelling. */
interface Entry {
  kind: string;
  form: string;
  /** A public seed: matched so that it shadows private phrases inside it, and left as it is. */
  public: boolean;
  to: string;
  pretty?: string;
  /** The phrase as given (before normalising), and its replacement when found written exactly so. */
  from: string;
  asWritten?: string;
  fromUpper?: string;
  asUpper?: string;
  /** The last other spelling found, and its replacement. */
  recent?: { found: string; styled: string };
  /** Found spellings already styled for this entry (made on its first match). */
  rendered?: Map<string, string>;
  /** Replacements by the style bits of an ASCII spelling (asciiStyle), made on first use. */
  styled?: (string | undefined)[];
}

/** One spelling of a seed's real value and the same spelling of its alias. */
export interface VariantPair {
  seed: number;
  form: string;
  real: string;
  alias: string;
}

export interface LegendEntry {
  type: string;
  value: string;
  role: "public" | "private";
  identity?: string;
  alias: string;
  /** How many re-derivations a collision took (0: the first draw). */
  attempt: number;
}

export interface Legend {
  run_key: string;
  entries: LegendEntry[];
}

export interface LeakFinding {
  check: "alias_leak";
  /** The seed's type; never the value. */
  kind: string;
  /** `report.summary`, `report.people[2].name`, `artifacts["graph.json"] line 3`. */
  where: string;
  count: number;
}

export interface OutboundResult<V> {
  value: V;
  changed: boolean;
  /** Alias-shaped text that resolves to no seed (its kind), and sha256 selectors. */
  refusals: string[];
}

/**
 * Things only the door produces: a value of this shape in an outbound argument that
 * the door cannot map back is an alias of nothing, and the call is refused.
 */
const ALIAS_SHAPED: [string, RegExp][] = [
  ["email", /[\w.+-]+@[\w-]+(?:\.[\w-]+)*\.alias\b/gi],
  ["domain", /\b[\w-]+(?:\.[\w-]+)*\.alias\b/gi],
  ["phone", /(?:\+?1[\s.-]*)?\(?999\)?[\s.-]*555[\s.-]*\d{4}\b/g],
  ["ip", /\b(?:192\.0\.2|198\.51\.100|203\.0\.113)\.\d{1,3}\b|\b2001:db8::[0-9a-f]{1,4}:[0-9a-f]{1,4}\b/gi],
  ["account", /\bACCT-\d{8}\b/g],
  ["log", /\blog-[0-9a-f]{8}\b/g],
  ["ref", /\bREF-\d{4,8}\b/g],
];
const SELECTOR = /\bsha256:[0-9a-f]{64}\b/i;
const isPhone = (entry: Entry) => entry.kind === "phone";

export class AliasDoor {
  readonly #key: string;
  readonly #hmac: Hmac;
  readonly #slugs: readonly string[];
  readonly #options: DeriveOptions;
  #seeds: Seed[] = [];
  #derived: Derived[] = [];
  #inbound = new SpellingMatcher<Entry>([], isPhone);
  #outbound = new SpellingMatcher<Entry>([], isPhone);
  #variants: VariantPair[] = [];
  #ready: Promise<void> = Promise.resolve();
  /** Real values found in text about to reach the agent, after every rewrite. */
  leakThroughInbound = 0;

  constructor(options: AliasOptions = {}) {
    this.#key = options.key ?? newRunKey();
    this.#hmac = new Hmac(this.#key, options.hmacSha256);
    this.#slugs = options.slugs ?? [];
    this.#options = {
      publicLayerWins: options.publicLayerWins ?? false,
      publicMailboxDomains: new Set((options.publicMailboxDomains ?? FREE_MAIL_DOMAINS).map((domain) => domain.toLowerCase())),
    };
  }

  get seeded(): boolean {
    return this.#seeds.length > 0;
  }

  /**
   * Adds seeds and derives every alias again from the whole list (so the result
   * depends only on the key and the seeds in order). Bad seeds reject with AliasError.
   */
  seed(entities: readonly SeedEntity[]): Promise<void> {
    const next = this.#ready.then(async () => {
      const seeds = [...this.#seeds, ...checkSeeds(entities, this.#seeds.length)];
      const derived = await deriveAll(this.#hmac, seeds, this.#options);
      await this.#build(seeds, derived);
    });
    // A failed seed() leaves the door as it was for the next call.
    this.#ready = next.catch(() => undefined);
    return next;
  }

  /** Resolves when every seed() so far has been derived. */
  ready(): Promise<void> {
    return this.#ready;
  }

  async #build(seeds: Seed[], derived: Derived[]): Promise<void> {
    const keepsDomain = domainKeeper(seeds, this.#options);
    const aliasDomains = new Map<string, string>();
    for (const item of derived) {
      if (item.seed.role === "private" && item.seed.type === "email") {
        const [, realDomain] = item.seed.value.split("@") as [string, string];
        const [, aliasDomain] = item.alias.split("@") as [string, string];
        if (!keepsDomain(realDomain)) aliasDomains.set(realDomain, aliasDomain);
      }
    }
    const variants: VariantPair[] = [];
    const inbound: [string, Entry][] = [];
    const outbound: [string, Entry][] = [];
    const transliterated: { inbound: [string, Entry][]; outbound: [string, Entry][] } = { inbound: [], outbound: [] };
    // Public values first: as the first holder of a phrase, and the longest at its start, they shadow private phrases.
    for (const item of derived) {
      if (item.seed.role !== "public") continue;
      const self: Entry = { kind: item.seed.type, form: "value", public: true, to: item.seed.value, from: item.seed.value };
      inbound.push([item.seed.value, self]);
      outbound.push([item.seed.value, self]);
      const spelled = germanTransliteration(item.seed.value);
      if (spelled) {
        inbound.push([spelled, self]);
        outbound.push([spelled, self]);
      }
    }
    for (const item of derived) {
      if (item.seed.role !== "private") continue;
      const kind = item.seed.type;
      const forms: Spelling[] = spellings(item, (domain) => aliasDomains.get(domain));
      for (const worldSlug of this.#slugs) {
        for (const [real, alias] of new Set([
          [item.seed.value, item.alias],
          [item.seed.value.toLowerCase(), item.alias.toLowerCase()],
        ])) {
          forms.push({ form: `sha256:${worldSlug}`, real: await storedForm(worldSlug, real!), alias: await storedForm(worldSlug, alias!) });
        }
      }
      for (const spelling of forms) {
        variants.push({ seed: item.seed.index, form: spelling.form, real: spelling.real, alias: spelling.alias });
        const toAlias: Entry = {
          kind,
          form: spelling.form,
          public: false,
          to: spelling.alias,
          pretty: spelling.aliasPretty,
          from: spelling.real,
        };
        const toReal: Entry = {
          kind,
          form: spelling.form,
          public: false,
          to: spelling.real,
          pretty: spelling.realPretty,
          from: spelling.alias,
        };
        inbound.push([spelling.real, toAlias]);
        outbound.push([spelling.alias, toReal]);
        const realSpelled = germanTransliteration(spelling.real);
        if (realSpelled) transliterated.inbound.push([realSpelled, toAlias]);
        const aliasSpelled = germanTransliteration(spelling.alias);
        if (aliasSpelled) transliterated.outbound.push([aliasSpelled, toReal]);
      }
    }
    // A value with umlauts is also found as German writes it without them (`Mueller` for `Müller`), after every
    // value as written: a value seeded as `Mueller` itself keeps its own phrase.
    this.#inbound = new SpellingMatcher([...inbound, ...transliterated.inbound], isPhone);
    this.#outbound = new SpellingMatcher([...outbound, ...transliterated.outbound], isPhone);
    this.#seeds = seeds;
    this.#derived = derived;
    this.#variants = variants;
  }

  /** Every private seed's spellings, real and alias side by side (what fixtures/hooks/alias-vectors.json pins). */
  variants(): VariantPair[] {
    return [...this.#variants];
  }

  /** In: every real value and variant in strings, keys and numeric leaves becomes its alias. */
  toAlias<V>(value: V): { value: V; changed: boolean } {
    const walked = mapJson(value, (text) => this.#inbound.replace(text, render), new Budget());
    return { value: walked as V, changed: walked !== value };
  }

  /** Out: alias variants become real values; alias-shaped leftovers and sha256 selectors are refusals. */
  toReal<V>(value: V): OutboundResult<V> {
    const refusals: string[] = [];
    const walked = mapJson(
      value,
      (text) => {
        if (SELECTOR.test(text)) refusals.push("a sha256 digest used as a selector");
        const real = this.#outbound.replace(text, (entry, within, start, end) => {
          if (entry.form.startsWith("sha256:")) refusals.push("a sha256 digest used as a selector");
          return render(entry, within, start, end);
        });
        for (const [kind, shape] of ALIAS_SHAPED) {
          shape.lastIndex = 0;
          if (shape.test(real)) {
            refusals.push(`a ${kind} alias that resolves to no seeded value`);
            break;
          }
        }
        return real;
      },
      new Budget(),
    );
    return { value: walked as V, changed: walked !== value, refusals: [...new Set(refusals)] };
  }

  /** How many real values (private seeds' variants) a value holds. */
  countReal(value: unknown): number {
    let count = 0;
    walkStrings(value, "", new Budget(), (text) => {
      for (const match of this.#inbound.find(text)) if (!match.value.public) count++;
    });
    return count;
  }

  /** The run_end scan: which kinds of real value reached the report and the artifacts, and where; never the values. */
  check(report: unknown, artifacts: Readonly<Record<string, string>>): { findings: LeakFinding[]; total: number } {
    const found = new Map<string, LeakFinding>();
    let total = 0;
    const note = (kind: string, where: string) => {
      total++;
      const key = `${kind}\n${where}`;
      const finding = found.get(key);
      if (finding) finding.count++;
      else if (found.size < MAX_FINDINGS) found.set(key, { check: "alias_leak", kind, where, count: 1 });
    };
    const budget = new Budget();
    const realIn = (text: string) => this.#inbound.find(text).filter((match) => !match.value.public);
    walkStrings(
      report,
      "report",
      budget,
      (text, where) => {
        for (const match of realIn(text)) note(match.value.kind, where);
      },
      (key) => {
        const hit = realIn(key)[0];
        return hit ? `<${hit.value.kind}>` : key;
      },
    );
    for (const [name, text] of Object.entries(artifacts)) {
      budget.take(text.length);
      const lineStarts = [0];
      for (let i = text.indexOf("\n"); i >= 0; i = text.indexOf("\n", i + 1)) lineStarts.push(i + 1);
      for (const match of this.#inbound.find(text)) {
        if (match.value.public) continue;
        note(match.value.kind, `artifacts[${JSON.stringify(name)}] line ${lineOf(lineStarts, match.start)}`);
      }
    }
    return { findings: [...found.values()], total };
  }

  /** The map from every seed to its alias, with the run key: for a grader, kept with the run and never with world data. */
  legend(): Legend {
    return {
      run_key: this.#key,
      entries: this.#derived.map(({ seed, alias, attempt }) => ({
        type: seed.type,
        value: seed.value,
        role: seed.role,
        ...(seed.identity === undefined ? {} : { identity: seed.identity }),
        alias,
        attempt,
      })),
    };
  }
}

/** The replacement for one match, in the found text's style: its case, its phone separators, its email obfuscation. */
function render(entry: Entry, text: string, start: number, end: number): string {
  if (entry.public) return text.slice(start, end);
  // What the replacement follows of the found text is read in place: whether a phone has separators, and
  // the case and `+` joins of an ASCII spelling. An obfuscated email follows its exact spelling (below).
  if (entry.kind === "phone") return separated(text, start, end) && entry.pretty ? entry.pretty : entry.to;
  if (entry.kind !== "email" || entry.form !== "value") {
    const style = asciiStyle(text, start, end);
    if (style >= 0) return ((entry.styled ??= [])[style] ??= styleWith(entry, style));
  }
  return renderSpelling(entry, text, start, end);
}

/** render() for a replacement that follows the found spelling as a whole (an obfuscated email, non-ASCII text). */
function renderSpelling(entry: Entry, text: string, start: number, end: number): string {
  // A page repeats the same spelling, most often as the seed wrote it, in capitals, or as the last one
  // found: those are compared in place (no copy of the found text, no hashing).
  const length = end - start;
  if (length === entry.from.length) {
    if (text.startsWith(entry.from, start)) return (entry.asWritten ??= styleLike(entry, entry.from));
    const upper = (entry.fromUpper ??= entry.from.toUpperCase());
    if (upper.length === length && text.startsWith(upper, start)) return (entry.asUpper ??= styleLike(entry, upper));
  }
  const recent = entry.recent;
  if (recent && recent.found.length === length && text.startsWith(recent.found, start)) return recent.styled;
  const found = text.slice(start, end);
  // Other spellings are styled once each (a few per entry are kept).
  const rendered = (entry.rendered ??= new Map());
  let styled = rendered.get(found);
  if (styled === undefined) {
    styled = styleLike(entry, found);
    if (rendered.size < RENDERED_PER_ENTRY) rendered.set(found, styled);
  }
  entry.recent = { found, styled };
  return styled;
}

const RENDERED_PER_ENTRY = 16;

function styleLike(entry: Entry, found: string): string {
  if (entry.kind === "phone") return /[^\d+]/.test(found) && entry.pretty ? entry.pretty : entry.to;
  if (entry.kind === "email" && entry.form === "value" && !found.includes("@")) return obfuscated(entry.to, found);
  const upper = found === found.toUpperCase() && found !== found.toLowerCase();
  const lower = found === found.toLowerCase() && found !== found.toUpperCase();
  const joined = PLUS_JOINED.test(found) && !/\s/.test(found);
  return styleWith(entry, (upper ? UPPER : 0) | (lower ? LOWER : 0) | (joined ? PLUS_JOIN : 0));
}

/** Style bits of a found spelling: all upper case (with a cased letter), all lower case, words joined with `+` and no whitespace. */
const UPPER = 1;
const LOWER = 2;
const PLUS_JOIN = 4;

function styleWith(entry: Entry, style: number): string {
  // Words joined with `+` (a query string's spaces) stay joined so: `q=Matthew+Nowell` keeps a valid query.
  const to = style & PLUS_JOIN ? entry.to.replaceAll(" ", "+") : entry.to;
  return style & UPPER ? to.toUpperCase() : style & LOWER ? to.toLowerCase() : to;
}

const PLUS_JOINED = /[\p{L}\p{M}]\+\p{L}/u;

/** Whether a found phone is written with anything besides digits and `+`. */
function separated(text: string, start: number, end: number): boolean {
  for (let i = start; i < end; i++) {
    const c = text.charCodeAt(i);
    if ((c < 0x30 || c > 0x39) && c !== 0x2b) return true;
  }
  return false;
}

/** styleLike()'s style bits of `text[start, end)` read in place, for ASCII text; -1 when it holds anything else. */
function asciiStyle(text: string, start: number, end: number): number {
  let upper = false;
  let lower = false;
  let joined = false;
  let space = false;
  for (let i = start; i < end; i++) {
    const c = text.charCodeAt(i);
    if (c >= 0x80) return -1;
    if (c >= 0x61 && c <= 0x7a) lower = true;
    else if (c >= 0x41 && c <= 0x5a) upper = true;
    else if (c === 0x2b)
      joined ||= i > start && i + 1 < end && isAsciiLetter(text.charCodeAt(i - 1)) && isAsciiLetter(text.charCodeAt(i + 1));
    else if (c === 0x20 || (c >= 0x09 && c <= 0x0d)) space = true;
  }
  return (upper && !lower ? UPPER : 0) | (lower && !upper ? LOWER : 0) | (joined && !space ? PLUS_JOIN : 0);
}

const AT_STYLE = /\s*[[({]\s*at\s*[\])}]\s*|\s+at\s+/i;
const DOT_STYLE = /\s*[[({]\s*dot\s*[\])}]\s*|\s+dot\s+/i;

/** `matthew.nowell [at] nowell-ltd [dot] com` → the alias written the same way. */
function obfuscated(email: string, found: string): string {
  const at = AT_STYLE.exec(found)?.[0] ?? "@";
  const dot = DOT_STYLE.exec(found)?.[0];
  const [local, domain] = email.split("@") as [string, string];
  const dottedLocal = dot && DOT_STYLE.test(found.slice(0, AT_STYLE.exec(found)?.index ?? 0)) ? local.replaceAll(".", dot) : local;
  return `${dottedLocal}${at}${dot ? domain.replaceAll(".", dot) : domain}`;
}

function lineOf(lineStarts: number[], offset: number): number {
  let low = 0;
  let high = lineStarts.length - 1;
  while (low < high) {
    const mid = (low + high + 1) >> 1;
    if (lineStarts[mid]! <= offset) low = mid;
    else high = mid - 1;
  }
  return low + 1;
}

/** Counts the characters read in one value, and refuses past MAX_ALIAS_TEXT (and nesting past MAX_EVENT_DEPTH). */
class Budget {
  used = 0;
  /** Each key's mapping, for this one value. */
  readonly #keys = new Map<string, string>();
  /** The last object's keys and their mappings: the rows of a result have the same keys, in the same order. */
  #lastKeys: readonly string[] = [];
  #lastMapped: string[] = [];
  /**
   * An object's keys, counted and mapped. Each key is matched once per value; an object with the same
   * keys as the one before (the next row) takes its mappings whole, after a comparison of each key
   * (one step when they are the same strings, as parsed keys are).
   */
  mapKeys(keys: readonly string[], map: (text: string) => string): string[] {
    let same = keys.length === this.#lastKeys.length;
    for (let index = 0; index < keys.length; index++) {
      this.take(keys[index]!.length);
      same &&= keys[index] === this.#lastKeys[index];
    }
    if (same) return this.#lastMapped;
    const mapped = keys.map((key) => {
      let mappedKey = this.#keys.get(key);
      if (mappedKey === undefined) this.#keys.set(key, (mappedKey = map(key)));
      return mappedKey;
    });
    this.#lastKeys = keys;
    this.#lastMapped = mapped;
    return mapped;
  }
  /** The last copy made of an object whose keys mapped to `mappedKeys` (the same array mapKeys gave), if any. */
  #template: { keys: readonly string[]; copy: Record<string, unknown> } | undefined;
  /**
   * A new object with the keys a copy of such an object has, in order: the last such copy cloned (one step) when
   * there is one, rather than the keys added one at a time. Every key is then written, so no old value stays.
   */
  newCopy(mappedKeys: readonly string[]): Record<string, unknown> {
    return this.#template?.keys === mappedKeys ? { ...this.#template.copy } : {};
  }
  keepCopy(mappedKeys: readonly string[], copy: Record<string, unknown>): void {
    this.#template = { keys: mappedKeys, copy };
  }
  take(characters: number): void {
    this.used += characters;
    if (this.used > MAX_ALIAS_TEXT)
      throw new AliasError(
        "rules_alias_text_too_large",
        `the value holds more than ${MAX_ALIAS_TEXT} characters of text; the alias door reads at most that`,
      );
  }
  /** The walks recurse on nesting: past the bound they refuse instead of overflowing the stack. */
  descend(depth: number): void {
    if (depth > MAX_EVENT_DEPTH)
      throw new AliasError(
        "rules_alias_too_deep",
        `the value nests objects and arrays deeper than ${MAX_EVENT_DEPTH} levels; the alias door reads at most that`,
      );
  }
}

/** Integers of 7+ digits are read as text too: a phone or an account stored as a number. */
const LONG_INTEGER = 1_000_000;

/** The value with `map` applied to every string, key and long integer; unchanged parts keep their identity. */
function mapJson(value: unknown, map: (text: string) => string, budget: Budget, depth = 0): unknown {
  if (typeof value === "string") {
    budget.take(value.length);
    return map(value);
  }
  if (typeof value === "number") {
    if (!Number.isSafeInteger(value) || Math.abs(value) < LONG_INTEGER) return value;
    const text = String(value);
    const mapped = map(text);
    if (mapped === text) return value;
    return /^-?\d{1,15}$/.test(mapped) ? Number(mapped) : mapped;
  }
  if (Array.isArray(value)) {
    budget.descend(depth + 1);
    let copy: unknown[] | undefined;
    value.forEach((item, index) => {
      const mapped = mapJson(item, map, budget, depth + 1);
      if (mapped !== item) (copy ??= [...value])[index] = mapped;
    });
    return copy ?? value;
  }
  if (value !== null && typeof value === "object") {
    budget.descend(depth + 1);
    const record = value as Record<string, unknown>;
    const keys = Object.keys(record);
    const mappedKeys = budget.mapKeys(keys, map);
    let copy: Record<string, unknown> | undefined;
    for (let index = 0; index < keys.length; index++) {
      const key = keys[index]!;
      const item = record[key];
      const mappedKey = mappedKeys[index]!;
      // Short numbers, booleans and null are left as they are without a call (most of a result's leaves).
      const mapped =
        item === null || typeof item === "boolean" || (typeof item === "number" && Math.abs(item) < LONG_INTEGER)
          ? item
          : mapJson(item, map, budget, depth + 1);
      if (!copy && (mappedKey !== key || mapped !== item)) {
        // The first change: copy what came before it, in order, and go on building the copy.
        copy = budget.newCopy(mappedKeys);
        for (let before = 0; before < index; before++) copy[keys[before]!] = record[keys[before]!];
      }
      if (copy) copy[mappedKey] = mapped;
    }
    if (copy) budget.keepCopy(mappedKeys, copy);
    return copy ?? value;
  }
  return value;
}

/** Calls `visit` with every string, key and long integer and its JSON path. */
function walkStrings(
  value: unknown,
  path: string,
  budget: Budget,
  visit: (text: string, where: string) => void,
  label: (key: string) => string = (key) => key,
  depth = 0,
): void {
  if (typeof value === "string") {
    budget.take(value.length);
    visit(value, path);
  } else if (typeof value === "number") {
    if (Number.isSafeInteger(value) && Math.abs(value) >= LONG_INTEGER) visit(String(value), path);
  } else if (Array.isArray(value)) {
    budget.descend(depth + 1);
    value.forEach((item, index) => walkStrings(item, `${path}[${index}]`, budget, visit, label, depth + 1));
  } else if (value !== null && typeof value === "object") {
    budget.descend(depth + 1);
    for (const [key, item] of Object.entries(value)) {
      budget.take(key.length);
      // A key holding a real value is named by its kind in the path, so a finding never carries the value.
      const shown = label(key);
      const where =
        shown === key && /^[A-Za-z_$][\w$]*$/.test(key) ? `${path}.${key}` : `${path}[${shown === key ? JSON.stringify(key) : shown}]`;
      visit(key, where);
      walkStrings(item, where, budget, visit, label, depth + 1);
    }
  }
}
