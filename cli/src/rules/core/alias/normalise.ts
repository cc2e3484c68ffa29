// The one normalisation of text the alias door matches real values in, used alike by
// the rewrite, the leak meter and the run_end check (docs/alias.md, "Matching"). Each
// character becomes its *matching form*: lower case, compatibility decomposition with
// marks dropped and recomposed (NFKD, no \p{M}, NFC: `Ｚｏë` → `zoe`), format characters
// (\p{Cf}: zero-width space, soft hyphen, word joiner; and `<wbr>`) dropped, and a
// look-alike of a Latin letter or digit read as that letter (Unicode's confusables, from
// the `unhomoglyph` package: Cyrillic `о` → `o`). Encoded characters are read decoded, in
// place: HTML entities (`&#101;`, `&eacute;`), percent-encoding (`%20`, `%C3%AB`),
// backslash escapes (`\u00eb`, `\ud83d\ude00`, `\xc3\xab`), quoted-printable UTF-8
// (`=C3=AB`, and a soft line break `=` + newline reads as nothing), and a `+` between two
// letters, a query string's space (`Matthew+Nowell`). RFC 2047 encoded-words are read
// whole, by encoded-words.ts (SpellingMatcher).
//
// Forms are worked out per character the first time one is met, not for the whole of
// Unicode up front (a `hooks run` process reads one event; building every form takes a
// third of a second), and kept for the process.
import { decodeHTMLStrict } from "entities/decode";
import confusablesData from "unhomoglyph/data.json";

export const SPACE = 0x20;
const AT = 0x40;
export const DOT = 0x2e;
export const PLUS = 0x2b;
const AMPERSAND = 0x26;
const PERCENT = 0x25;
const BACKSLASH = 0x5c;
const EQUALS = 0x3d;
const LESS_THAN = 0x3c;

/** What a unit is to the normaliser, as bits. PLAIN (0): its form is one unit, `folded[code]`. */
export const PLAIN = 0;
export const SPACE_UNIT = 1;
export const OPENER = 2;
/** Between two digits it is formatting (`020 7946-0958`, `(0)20`), not content. */
export const SEPARATOR = 4;
/** Its form is nothing: a mark or a format character. */
export const IGNORABLE = 8;
/** Its form is several units (`ﬁ` → `fi`, `①` → `1`), in `expansions`. */
const EXPANDS = 16;
/** A high surrogate: the code point is read with the unit after it. */
const SURROGATE = 32;
/** `&`, `%`, `+`, `\\`, `=` or `<`: it may start (or be) an encoded character. */
const ENCODED = 64;
/** A unit the normaliser has not worked out yet (set until the first time it is met). */
const UNKNOWN = 128;
/** Whatever is not PLAIN, SPACE_UNIT, OPENER or SEPARATOR needs the slow path. */
export const COMPLEX = IGNORABLE | EXPANDS | SURROGATE | ENCODED | UNKNOWN;

const kinds = new Uint8Array(65536).fill(UNKNOWN);
/** The one-unit form of a PLAIN (or space, opener, separator) unit. */
const folded = new Uint16Array(65536);
const expansions = new Map<number, string>();
/** Forms of code points beyond the BMP (mathematical letters, tags), as met. */
const astral = new Map<number, string>();

/**
 * A letter, digit or `_` in the original text: a match of a word-edged phrase may not touch one. Marks and
 * format characters are not words of their own: the edge checks pass over them to the character they sit on.
 */
let wordTable: Uint8Array | undefined;
export function words(): Uint8Array {
  if (wordTable) return wordTable;
  wordTable = new Uint8Array(65536);
  const word = /[\p{L}\p{N}_]/u;
  const ignorable = /^[\p{M}\p{Cf}]$/u;
  for (let code = 0; code < 65536; code++) {
    const char = String.fromCharCode(code);
    if (word.test(char)) wordTable[code] = 1;
    // Known up front, so the scan's word-edge checks can pass over them with one table read.
    if (ignorable.test(char)) kinds[code] = IGNORABLE;
  }
  return wordTable;
}

export const isSpace = (c: number) =>
  c === 0x20 ||
  (c >= 0x09 && c <= 0x0d) ||
  c === 0xa0 ||
  c === 0x1680 ||
  (c >= 0x2000 && c <= 0x200a) ||
  c === 0x2028 ||
  c === 0x2029 ||
  c === 0x202f ||
  c === 0x205f ||
  c === 0x3000;
export const isDigit = (c: number) => c >= 0x30 && c <= 0x39;
/** Hyphens and dashes of every width: `020–7946–0958` is a phone. */
const isDash = (c: number) => c === 0x2d || (c >= 0x2010 && c <= 0x2015) || c === 0x2212 || c === 0xfe58 || c === 0xfe63 || c === 0xff0d;
const isSeparator = (c: number) => isSpace(c) || isDash(c) || c === 0x28 || c === 0x29 || c === 0x2f;
const isOpener = (c: number) => c === 0x5b || c === 0x28 || c === 0x7b;
const isCloser = (c: number) => c === 0x5d || c === 0x29 || c === 0x7d;

const IGNORED = /[\p{M}\p{Cf}]/gu;
let confusables: Map<string, string> | undefined;
/** A look-alike's Latin letters or digits (marks dropped), or undefined when it looks like something else. */
function latinLookAlike(char: string): string | undefined {
  confusables ??= new Map(Object.entries(confusablesData as Record<string, string>));
  const target = confusables.get(char)?.normalize("NFKD").replace(IGNORED, "");
  if (!target || !/^[\x21-\x7e]+$/.test(target)) return undefined;
  // Unicode's prototype of `I`, `l`, `1` and `|` is `l`: a capital that looks like one is an I.
  return target === "l" && char !== char.toLowerCase() ? "i" : target;
}

/** The matching form of one code point, as a string: what every occurrence of it reads as. */
function formOf(codePoint: number): string {
  const char = String.fromCodePoint(codePoint);
  if (codePoint < 0x80) return char.toLowerCase();
  let form = "";
  for (const part of char.normalize("NFKD").replace(IGNORED, "")) {
    // ASCII stays itself: `rn`, `1` and `0` are what they are, not look-alikes of `m`, `l` and `O`. A letter
    // is looked up as it is, then in lower case (Cyrillic `Н` looks like `H`, its `н` like nothing Latin).
    form += part.charCodeAt(0) < 0x80 ? part : (latinLookAlike(part) ?? latinLookAlike(part.toLowerCase()) ?? part);
  }
  return form.normalize("NFC").toLowerCase();
}

/** Works out one BMP unit's kind and form (the first time it is met). */
function resolve(code: number): number {
  let kind: number;
  if (code >= 0xd800 && code <= 0xdbff) kind = SURROGATE;
  else if (code === AMPERSAND || code === PERCENT || code === PLUS || code === BACKSLASH || code === EQUALS || code === LESS_THAN)
    kind = ENCODED;
  else {
    const form = code >= 0xdc00 && code <= 0xdfff ? String.fromCharCode(code) : formOf(code);
    if (form.length === 0) kind = IGNORABLE;
    else if (form.length > 1) {
      kind = EXPANDS;
      expansions.set(code, form);
    } else {
      const unit = form.charCodeAt(0);
      folded[code] = unit;
      // Spaces, openers and separators by the character itself or by its form (fullwidth `（` is `(`).
      kind =
        (isSpace(code) || isSpace(unit) ? SPACE_UNIT : 0) |
        (isOpener(unit) ? OPENER : 0) |
        (isSeparator(code) || isSeparator(unit) ? SEPARATOR : 0);
      if (kind & SPACE_UNIT) folded[code] = SPACE;
      // Every dash reads as `-` (Unicode's look-alike of `—` is a katakana mark, no separator).
      else if (isDash(code)) folded[code] = 0x2d;
    }
  }
  kinds[code] = kind;
  return kind;
}

/** A unit's kind (PLAIN, SPACE_UNIT, …), worked out on first sight. */
export function kindOf(code: number): number {
  const kind = kinds[code]!;
  return kind === UNKNOWN ? resolve(code) : kind;
}

/** The kinds table itself, for the scan's fast path (UNKNOWN until a unit is first met; read kindOf then). */
export const unitKinds = (): Uint8Array => kinds;
/** The one-unit forms, for the scan's fast path (valid where the kind has no COMPLEX bit). */
export const unitForms = (): Uint16Array => folded;

/** Whether a unit reads as nothing (a mark, a format character). */
export const isIgnorable = (code: number) => kindOf(code) === IGNORABLE;

/**
 * One position of the text read through the normalisation: its form's first unit (-1 when the form is
 * empty), the rest of a longer form ("" for one unit), and where the next position starts.
 */
interface Read {
  code: number;
  more: string;
  next: number;
}

function readForm(out: Read, form: string, next: number): Read {
  out.code = form.length ? form.charCodeAt(0) : -1;
  out.more = form.length > 1 ? form.slice(1) : "";
  out.next = next;
  return out;
}

/** Reads the character (or encoded character) at `i`: `&#101;` → `e`, `%C3%AB` → `e`, `𝐌` → `m`, ZWSP → nothing. */
export function readAt(text: string, i: number, out: Read): Read {
  const code = text.charCodeAt(i);
  out.more = "";
  out.next = i + 1;
  // Most characters are one unit already worked out: one table read (small enough to be inlined where it is called).
  if (!(kinds[code]! & COMPLEX)) {
    out.code = folded[code]!;
    return out;
  }
  return readComplex(text, i, code, out);
}

function readComplex(text: string, i: number, code: number, out: Read): Read {
  const kind = kindOf(code);
  if (kind === ENCODED) {
    const decoded = decodeAt(text, i, code);
    if (decoded) return readForm(out, decoded.form, decoded.next);
    out.code = code;
  } else if (kind === SURROGATE) {
    const low = text.charCodeAt(i + 1);
    if (low >= 0xdc00 && low <= 0xdfff) {
      const point = ((code - 0xd800) << 10) + (low - 0xdc00) + 0x10000;
      let form = astral.get(point);
      if (form === undefined) astral.set(point, (form = formOf(point)));
      return readForm(out, form, i + 2);
    }
    out.code = code;
  } else if (kind === IGNORABLE) out.code = -1;
  else if (kind === EXPANDS) return readForm(out, expansions.get(code)!, i + 1);
  else out.code = folded[code]!;
  return out;
}

/** The encoded character that starts with the unit `code` at `i`, decoded; undefined when there is none. */
function decodeAt(text: string, i: number, code: number): { form: string; next: number } | undefined {
  switch (code) {
    case AMPERSAND:
      return entityAt(text, i);
    case PLUS:
      return plusAt(text, i);
    case PERCENT:
      return utf8At(text, i, percentByte, false);
    case BACKSLASH:
      return escapeAt(text, i);
    case EQUALS:
      return quotedPrintableAt(text, i);
    default:
      return wbrAt(text, i);
  }
}

/** The form of a decoded code point, through the same per-character rules. */
function decodedForm(point: number): string {
  if (point < 0x10000) {
    const kind = kindOf(point);
    if (kind === IGNORABLE) return "";
    if (kind === EXPANDS) return expansions.get(point)!;
    if (kind === SURROGATE || kind === ENCODED) return String.fromCharCode(point);
    return String.fromCharCode(folded[point]!);
  }
  let form = astral.get(point);
  if (form === undefined) astral.set(point, (form = formOf(point)));
  return form;
}

const NUMERIC_ENTITY = /^&#(?:[xX]([0-9a-fA-F]{1,6})|([0-9]{1,7}));?/;
const NAMED_ENTITY = /^&[A-Za-z][A-Za-z0-9]{1,31};/;

/** An HTML character reference at `i` (`&#101;`, `&#x65;`, `&eacute;`), decoded; undefined when there is none. */
function entityAt(text: string, i: number): { form: string; next: number } | undefined {
  const head = text.slice(i, i + 40);
  const numeric = NUMERIC_ENTITY.exec(head);
  if (numeric) {
    const point = numeric[1] === undefined ? Number(numeric[2]) : parseInt(numeric[1], 16);
    if (point > 0x10ffff || (point >= 0xd800 && point <= 0xdfff)) return undefined;
    return { form: decodedForm(point), next: i + numeric[0].length };
  }
  const named = NAMED_ENTITY.exec(head);
  if (!named) return undefined;
  const decoded = decodeHTMLStrict(named[0]);
  if (decoded === named[0]) return undefined;
  let form = "";
  for (const char of decoded) form += decodedForm(char.codePointAt(0)!);
  return { form, next: i + named[0].length };
}

export const isAsciiLetter = (c: number) => (c | 0x20) >= 0x61 && (c | 0x20) <= 0x7a;

/**
 * Whether the `+` at `i` is certainly itself, not a query string's space: first in the text, or next to an ASCII
 * character that is not a letter (ASCII has no marks, and its letters are A–Z and a–z), as a phone's `+44` or
 * `C++` is. Decided without a regular expression; a `+` between other characters goes to plusAt.
 */
export function plusIsItself(text: string, i: number): boolean {
  if (i === 0) return true;
  const before = text.charCodeAt(i - 1);
  const after = text.charCodeAt(i + 1);
  return (before < 0x80 && !isAsciiLetter(before)) || (after < 0x80 && !isAsciiLetter(after));
}
const LETTER = /^\p{L}$/u;
/** A letter, or a mark on one (`Zoë+Fairbanks` in NFD). */
const LETTER_BEFORE = /^[\p{L}\p{M}]$/u;

/**
 * A `+` between two letters is a space as a query string writes it (`q=Matthew+Nowell`); anywhere else
 * it is itself, so a phone's `+44` (after a space, a digit or nothing) keeps its meaning.
 */
function plusAt(text: string, i: number): { form: string; next: number } | undefined {
  if (plusIsItself(text, i) || !LETTER_BEFORE.test(text.charAt(i - 1)) || !LETTER.test(text.charAt(i + 1))) return undefined;
  return { form: " ", next: i + 1 };
}

/** The value of the two hex digits at `i`, or -1. */
function hexPair(text: string, i: number): number {
  const high = hexDigit(text.charCodeAt(i));
  const low = high < 0 ? -1 : hexDigit(text.charCodeAt(i + 1));
  return low < 0 ? -1 : (high << 4) | low;
}
function hexDigit(c: number): number {
  if (c >= 0x30 && c <= 0x39) return c - 0x30;
  const lower = c | 0x20;
  return lower >= 0x61 && lower <= 0x66 ? lower - 0x57 : -1;
}
/** The value of `count` hex digits at `i`, or -1. */
function hexRun(text: string, i: number, count: number): number {
  let value = 0;
  for (let n = 0; n < count; n++) {
    const digit = hexDigit(text.charCodeAt(i + n));
    if (digit < 0) return -1;
    value = value * 16 + digit;
  }
  return value;
}

/**
 * One spelt byte at `i` (`%C3`, `=C3`, `\xc3`): its value, or -1 when there is none there; where it ends is left in
 * `byteEnd`. The readers below are what utf8At reads a character's bytes with.
 */
type ByteReader = (text: string, i: number) => number;
let byteEnd = 0;
const percentByte: ByteReader = (text, i) => {
  if (text.charCodeAt(i) !== PERCENT) return -1;
  byteEnd = i + 3;
  return hexPair(text, i + 1);
};
const quotedByte: ByteReader = (text, i) => {
  if (text.charCodeAt(i) !== EQUALS) return -1;
  byteEnd = i + 3;
  return hexPair(text, i + 1);
};
/** Backslashes before an escape's letter: one, or more where JSON was written inside JSON (`\\u00eb`). */
const MAX_BACKSLASHES = 8;
/** Where a run of backslashes at `i` ends (at most MAX_BACKSLASHES), or -1 when `i` holds none. */
function afterBackslashes(text: string, i: number): number {
  let j = i;
  while (j - i < MAX_BACKSLASHES && text.charCodeAt(j) === BACKSLASH) j++;
  return j === i ? -1 : j;
}
const escapedByte: ByteReader = (text, i) => {
  const j = afterBackslashes(text, i);
  if (j < 0 || text.charCodeAt(j) !== 0x78) return -1;
  byteEnd = j + 3;
  return hexPair(text, j + 1);
};

/**
 * A UTF-8 character spelt byte by byte at `i` (`%C3%AB`, `=C3=AB`, `\xc3\xab`), decoded; undefined when it is not
 * well formed. With `latin1`, a byte of 0x80 or more that starts no well-formed character is the code point of the
 * same number (`\xeb` is `ë`, as Python and JavaScript write it).
 */
function utf8At(text: string, i: number, byteAt: ByteReader, latin1: boolean): { form: string; next: number } | undefined {
  const lead = byteAt(text, i);
  if (lead < 0) return undefined;
  const leadEnd = byteEnd;
  if (lead < 0x80) return { form: decodedForm(lead), next: leadEnd };
  const length = lead >= 0xf0 && lead <= 0xf4 ? 4 : lead >= 0xe0 && lead <= 0xef ? 3 : lead >= 0xc2 && lead < 0xe0 ? 2 : 0;
  let point = lead & (0xff >> (length + 1));
  let next = leadEnd;
  let n = 1;
  for (; n < length; n++) {
    const byte = byteAt(text, next);
    if (byte < 0x80 || byte > 0xbf) break;
    point = (point << 6) | (byte & 0x3f);
    next = byteEnd;
  }
  const least = [0, 0, 0x80, 0x800, 0x10000][length]!;
  if (length > 0 && n === length && point >= least && point <= 0x10ffff && !(point >= 0xd800 && point <= 0xdfff))
    return { form: decodedForm(point), next };
  return latin1 ? { form: decodedForm(lead), next: leadEnd } : undefined;
}

/**
 * A backslash escape at `i`, decoded: `\u00eb` (a surrogate pair `\ud83d\ude00` as one character), `\u{1F600}`,
 * `\U0001F600`, `\xc3\xab` (UTF-8) or `\xeb` (one byte); a run of backslashes counts as one (`\\u00eb`, JSON
 * written inside JSON). Anything else (`\n`, `\user`, a lone surrogate) is no escape: the backslash is itself.
 */
function escapeAt(text: string, i: number): { form: string; next: number } | undefined {
  const j = afterBackslashes(text, i);
  const letter = text.charCodeAt(j);
  if (letter === 0x78) return utf8At(text, i, escapedByte, true);
  let point = -1;
  let next = -1;
  if (letter === 0x55) {
    point = hexRun(text, j + 1, 8);
    next = j + 9;
  } else if (letter === 0x75 && text.charCodeAt(j + 1) === 0x7b) {
    let close = j + 2;
    while (close < j + 9 && hexDigit(text.charCodeAt(close)) >= 0) close++;
    if (close > j + 2 && text.charCodeAt(close) === 0x7d) point = hexRun(text, j + 2, close - j - 2);
    next = close + 1;
  } else if (letter === 0x75) {
    point = hexRun(text, j + 1, 4);
    next = j + 5;
    if (point >= 0xd800 && point <= 0xdbff) {
      // A high surrogate is one character with the low one escaped after it; alone it is no character.
      const k = afterBackslashes(text, next);
      const low = k >= 0 && text.charCodeAt(k) === 0x75 ? hexRun(text, k + 1, 4) : -1;
      if (low < 0xdc00 || low > 0xdfff) return undefined;
      point = ((point - 0xd800) << 10) + (low - 0xdc00) + 0x10000;
      next = k + 5;
    }
  }
  if (point < 0 || point > 0x10ffff || (point >= 0xd800 && point <= 0xdfff)) return undefined;
  return { form: decodedForm(point), next };
}

/**
 * Quoted-printable at `i`: a soft line break (`=` before a line end) reads as nothing, and `=C3=AB` as the UTF-8
 * character it encodes. Only bytes past ASCII are read: `=` before two hex digits is everywhere in code and
 * queries (`width=20`, `q=020 7946 0958`, `id=42`), and an encoder spells an ASCII letter or digit as itself.
 */
function quotedPrintableAt(text: string, i: number): { form: string; next: number } | undefined {
  const after = text.charCodeAt(i + 1);
  if (after === 0x0a) return { form: "", next: i + 2 };
  if (after === 0x0d && text.charCodeAt(i + 2) === 0x0a) return { form: "", next: i + 3 };
  return hexPair(text, i + 1) >= 0x80 ? utf8At(text, i, quotedByte, false) : undefined;
}

const WBR = /^<wbr\s*\/?>/i;
/** `<wbr>` (`<wbr/>`, `<WBR />`): a line-break opportunity, formatting like a soft hyphen, so it reads as nothing. */
function wbrAt(text: string, i: number): { form: string; next: number } | undefined {
  const tag = WBR.exec(text.slice(i, i + 12));
  return tag ? { form: "", next: i + tag[0].length } : undefined;
}

const edge: Read = { code: 0, more: "", next: 0 };

/**
 * Where the encoded character that ends right at `end` starts (`\u201c`, `%C3%AB`, `\xc3\xab`, `=C3=AB`, `<wbr>`, a
 * soft line break), or -1 when none does. Longer candidates first: `\xab` alone is a character too (`«`).
 */
function encodedStartBefore(text: string, end: number): number {
  const candidates: number[] = [];
  const c = text.charCodeAt(end - 1);
  if (c === 0x3e) {
    // `<wbr>` to `<wbr  />`: a few characters back, never a search of the text.
    for (let open = end - 5; open >= Math.max(0, end - 9); open--) if (text.charCodeAt(open) === LESS_THAN) candidates.push(open);
  } else if (c === 0x0a) candidates.push(end - 2, end - 3);
  else if (hexDigit(c) >= 0) {
    for (let bytes = 4; bytes >= 1; bytes--) candidates.push(end - 4 * bytes, end - 3 * bytes);
    candidates.push(end - 12, end - 6);
  }
  for (let start of candidates) {
    if (start < 0) continue;
    const first = text.charCodeAt(start);
    if (first !== BACKSLASH && first !== PERCENT && first !== EQUALS && first !== LESS_THAN) continue;
    // A `\u` escape is read from the first backslash of its run (`\\u00e9`).
    if (first === BACKSLASH) while (start > 0 && end - start < 6 + MAX_BACKSLASHES && text.charCodeAt(start - 1) === BACKSLASH) start--;
    if (readComplex(text, start, first, edge).next === end && (edge.code !== first || edge.more !== "")) return start;
  }
  return -1;
}

/**
 * Whether a reader reads a word unit (letter, digit, `_`) just before `end`: marks, format characters, `<wbr>` and soft
 * line breaks passed over, encoded characters decoded (`\u201cMatthew` starts a word; `\u00e9Nowell` does not), and a
 * JSON `\n`, `\t` or `\r` read as the whitespace it is (`"…\nMatthew Nowell"`). `word` is words().
 */
export function wordEndsAt(text: string, end: number, word: Uint8Array): boolean {
  for (let steps = 0; end > 0 && steps < 8; steps++) {
    const c = text.charCodeAt(end - 1);
    if (kindOf(c) === IGNORABLE) {
      end--;
      continue;
    }
    if ((c === 0x6e || c === 0x74 || c === 0x72) && text.charCodeAt(end - 2) === BACKSLASH) return false;
    if (!word[c] && c !== 0x3e && c !== 0x0a) return false;
    const start = encodedStartBefore(text, end);
    if (start < 0) return word[c] === 1;
    if (edge.code >= 0) return word[edge.more ? edge.more.charCodeAt(edge.more.length - 1) : edge.code] === 1;
    end = start;
  }
  return false;
}

/** Whether a reader reads a word unit at `i`: an encoded character decoded, and what reads as nothing passed over. */
export function wordStartsAt(text: string, i: number, word: Uint8Array): boolean {
  for (let steps = 0; i < text.length && steps < 8; steps++) {
    const c = text.charCodeAt(i);
    const kind = kindOf(c);
    if (kind === IGNORABLE) i++;
    else if (kind !== ENCODED) return word[c] === 1;
    else if (readComplex(text, i, c, edge).code >= 0) return word[edge.code] === 1;
    else i = edge.next;
  }
  return false;
}

/** One normalised unit that is not a plain folded character: what `special` found at a position. */
export interface Unit {
  /** The unit's code, or -1 when the characters were only formatting (dropped). */
  code: number;
  /** More units read from the same characters (an expansion such as `ﬁ`); "" for one. */
  more: string;
  /** Where its characters end in the original, and where the next unit starts. */
  end: number;
  next: number;
}

const scratch: Read = { code: 0, more: "", next: 0 };
const ahead: Read = { code: 0, more: "", next: 0 };

/** Whether a read position is one unit of the given kind bits. */
const readIs = (read: Read, bits: number) => read.code >= 0 && read.more === "" && (kindOf(read.code) & bits) !== 0;
/** A separator between digits: a dash, slash, bracket or space; in `dots` mode a full stop too. */
const separates = (read: Read, dots: boolean) => readIs(read, SEPARATOR) || (dots && read.code === DOT && read.more === "");

/**
 * The normalisation rules for a position whose unit is not plain: separators between digits are
 * dropped (in `dots` mode full stops too), a whitespace run is one space (and a space after a space
 * is dropped, decoded ones included), an obfuscated `at`/`dot` is `@`/`.`, marks and format
 * characters are dropped, an encoded character is read decoded; anything else is its form. `last`
 * is the code of the previous unit.
 */
export function special(text: string, i: number, last: number, out: Unit, dots: boolean): void {
  const n = text.length;
  const read = readAt(text, i, scratch);
  out.more = "";
  if (read.code < 0) {
    out.code = -1;
    out.end = out.next = read.next;
    return;
  }
  if (isDigit(last) && separates(read, dots)) {
    // Up to three separators (marks and format characters aside), then a digit: all formatting.
    let j = read.next;
    let count = 1;
    while (j < n) {
      readAt(text, j, ahead);
      if (ahead.code < 0) j = ahead.next;
      else if (count < 3 && separates(ahead, dots)) {
        count++;
        j = ahead.next;
      } else break;
    }
    if (j < n && isDigit(ahead.code)) {
      out.code = -1;
      out.end = out.next = j;
      return;
    }
  }
  const space = readIs(read, SPACE_UNIT);
  if (space || readIs(read, OPENER)) {
    let j = i;
    if (space) {
      j = read.next;
      while (j < n) {
        readAt(text, j, ahead);
        if (ahead.code >= 0 && !readIs(ahead, SPACE_UNIT)) break;
        j = ahead.next;
      }
    }
    const token = obfuscation(text, j, j > i);
    if (token) {
      out.code = token.code;
      out.end = out.next = token.end;
      while (out.next < n && kindOf(text.charCodeAt(out.next)) & SPACE_UNIT) out.next++;
      return;
    }
    if (space) {
      out.code = last === SPACE ? -1 : SPACE;
      out.end = out.next = j;
      return;
    }
  }
  out.code = read.code;
  out.more = read.more;
  out.end = out.next = read.next;
}

/** `[at]`, `(dot)`, `{at}` anywhere; ` at `, ` dot ` as words between spaces. */
function obfuscation(text: string, at: number, spaced: boolean): { code: number; end: number } | undefined {
  const c = text.charCodeAt(at);
  if (isOpener(c)) {
    let j = at + 1;
    while (isSpace(text.charCodeAt(j))) j++;
    const word = wordAt(text, j);
    if (!word) return undefined;
    j += word.length;
    while (isSpace(text.charCodeAt(j))) j++;
    if (!isCloser(text.charCodeAt(j))) return undefined;
    return { code: word.code, end: j + 1 };
  }
  if (!spaced) return undefined;
  const word = wordAt(text, at);
  if (!word || !isSpace(text.charCodeAt(at + word.length))) return undefined;
  return { code: word.code, end: at + word.length };
}

const AT_WORD = { code: AT, length: 2 } as const;
const DOT_WORD = { code: DOT, length: 3 } as const;

function wordAt(text: string, at: number): { code: number; length: number } | undefined {
  const a = text.charCodeAt(at) | 0x20;
  const b = text.charCodeAt(at + 1) | 0x20;
  if (a === 0x61 && b === 0x74) return AT_WORD;
  if (a === 0x64 && b === 0x6f && (text.charCodeAt(at + 2) | 0x20) === 0x74) return DOT_WORD;
  return undefined;
}

/** A phrase in normalised form, as a string (for building and for lookups). `dots`: the phone pass's reading. */
export function phraseOf(text: string, dots = false): string {
  const unit: Unit = { code: 0, more: "", end: 0, next: 0 };
  const trimmed = text.trim();
  let out = "";
  let last = -1;
  for (let i = 0; i < trimmed.length;) {
    const c = trimmed.charCodeAt(i);
    const kind = kindOf(c);
    if (kind === PLAIN && !(dots && folded[c] === DOT)) {
      last = folded[c]!;
      out += String.fromCharCode(last);
      i++;
      continue;
    }
    special(trimmed, i, last, unit, dots);
    i = unit.next;
    if (unit.code < 0) continue;
    out += String.fromCharCode(unit.code) + unit.more;
    last = unit.more.length ? unit.more.charCodeAt(unit.more.length - 1) : unit.code;
  }
  return out;
}

const UMLAUTS = /[äöüÄÖÜßẞ]/g;
const UMLAUT_SPELLED: Record<string, string> = { ä: "ae", ö: "oe", ü: "ue", Ä: "Ae", Ö: "Oe", Ü: "Ue", ß: "ss", ẞ: "SS" };

/**
 * A seeded value as German spells it without umlauts (`Müller` → `Mueller`, `Strauß` → `Strauss`), or undefined when
 * it has none. The door matches it for that value only: the normalisation itself reads `ü` as `u` and `ue` as `ue`,
 * so no other text starts to match.
 */
export function germanTransliteration(value: string): string | undefined {
  const composed = value.normalize("NFC");
  if (!/[äöüÄÖÜßẞ]/.test(composed)) return undefined;
  return composed.replace(UMLAUTS, (char) => UMLAUT_SPELLED[char]!);
}
