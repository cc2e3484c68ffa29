/**
 * A JSON text with its long string values left out. Checking a large tool
 * result's structure (upstream.passthrough.ts) needs its members and content
 * types, not the megabyte of text or base64 in one string. Holding that
 * string, or parsing it, allocates its like in the isolate's heap, which costs
 * more than the parse itself; here the text is read as it arrives, in pieces,
 * the long strings are checked where they lie and replaced by `""`, and only
 * the rest is kept and parsed.
 *
 * A removed string leaves `""` when its text is base64 and `"-"` when it is
 * not, so a check that wants base64 (an image's data) still holds on the
 * reduction.
 *
 * The reduction keeps the text's meaning: strings are found the way a JSON
 * lexer finds them (outside a string, a quote opens one; the first unescaped
 * quote closes it), a removed string is checked to be well-formed (every
 * escape valid, and the text holds no control character at all), and member
 * names are never removed. So the reduced text parses exactly when the whole
 * one does, to the same value but for the shortened strings.
 */

/** Strings longer than this (in characters) are left out of the parse. */
export const LONG_STRING_CHARS = 1024;
/**
 * The JavaScript work is per string and per escape (the scans over the
 * characters are native): past these counts the text is parsed whole instead.
 */
const MAX_STRINGS = 4096;
const MAX_ESCAPES = 4096;

const CONTROL_CHARACTER = /[\u0000-\u001f]/;
const NOT_BASE64 = /[^A-Za-z0-9+/=]/;
const ONLY_PADDING = /^=+$/;
const HEX_DIGIT = /[0-9a-fA-F]/;
const SIMPLE_ESCAPES = new Set([...'"\\/bfnrt'].map((char) => char.charCodeAt(0)));
const LETTER_U = 0x75;
const SPACE = 0x20;
const COLON = 0x3a;

/** Where the reader is: between tokens, inside a string, just after its backslash, or in a `\u` escape's digits. */
type Place = "between" | "string" | "escape" | "unicode";

/**
 * Reduces a JSON text fed in pieces (split anywhere). `finish` gives the text
 * with each string value longer than LONG_STRING_CHARS replaced by `""` (or
 * `"-"`, see above), or
 * null when it could not be reduced safely or cheaply (a control character, a
 * malformed string, a long member name, too many strings or escapes): the text
 * is then to be parsed whole.
 */
export class SkeletonBuilder {
  readonly #kept: string[] = [];
  #place: Place = "between";
  #failed = false;
  #strings = 0;
  #escapes = 0;
  #hexLeft = 0;
  /** Characters of the open string so far, and its text while it is short. */
  #stringChars = 0;
  #stringText: string[] = [];
  /**
   * Whether the open string's raw text is base64 as `atob` takes it, so far: the alphabet, then at most the
   * `=` padding (counted here). A long string that is becomes `""`, one that is not `"-"`, so a schema
   * that wants base64 (an image's `data`) still tells them apart on the reduction.
   */
  #base64 = true;
  #padding = 0;
  /** A long string just closed: the next token decides whether it was a member name. */
  #afterLong = false;

  push(text: string): void {
    if (this.#failed || !text) return;
    // Raw control characters are invalid inside strings, and JSON's tab and line breaks between tokens are
    // not worth telling apart from them here: only spaces may separate tokens.
    if (CONTROL_CHARACTER.test(text)) return this.#fail();
    // Each search only moves forward through the piece, so the piece is scanned once whatever it holds.
    let quoteAt = -2;
    let backslashAt = -2;
    const nextQuote = (from: number) =>
      quoteAt === -2 || (quoteAt >= 0 && quoteAt < from) ? (quoteAt = text.indexOf('"', from)) : quoteAt;
    const nextBackslash = (from: number) =>
      backslashAt === -2 || (backslashAt >= 0 && backslashAt < from) ? (backslashAt = text.indexOf("\\", from)) : backslashAt;
    let at = 0;
    while (at < text.length && !this.#failed) {
      switch (this.#place) {
        case "between": {
          if (this.#afterLong) {
            const spaces = at;
            while (at < text.length && text.charCodeAt(at) === SPACE) at++;
            this.#kept.push(text.slice(spaces, at));
            if (at === text.length) break;
            // Its text is gone, and a member name must be kept whole.
            if (text.charCodeAt(at) === COLON) return this.#fail();
            this.#afterLong = false;
          }
          const quote = nextQuote(at);
          if (quote < 0) {
            this.#kept.push(text.slice(at));
            at = text.length;
            break;
          }
          this.#kept.push(text.slice(at, quote + 1));
          if (++this.#strings > MAX_STRINGS) return this.#fail();
          this.#place = "string";
          this.#stringChars = 0;
          this.#stringText = [];
          this.#base64 = true;
          this.#padding = 0;
          at = quote + 1;
          break;
        }
        case "string": {
          const quote = nextQuote(at);
          const backslash = nextBackslash(at);
          if (backslash >= 0 && (quote < 0 || backslash < quote)) {
            this.#take(text.slice(at, backslash + 1));
            if (++this.#escapes > MAX_ESCAPES) return this.#fail();
            this.#place = "escape";
            at = backslash + 1;
            break;
          }
          if (quote < 0) {
            this.#take(text.slice(at));
            at = text.length;
            break;
          }
          this.#take(text.slice(at, quote));
          if (this.#stringChars > LONG_STRING_CHARS) {
            this.#kept.push(this.#isBase64() ? '"' : '-"');
            this.#afterLong = true;
          } else {
            this.#kept.push(...this.#stringText, '"');
          }
          this.#place = "between";
          at = quote + 1;
          break;
        }
        case "escape": {
          const escaped = text.charCodeAt(at);
          if (escaped === LETTER_U) {
            this.#place = "unicode";
            this.#hexLeft = 4;
          } else if (SIMPLE_ESCAPES.has(escaped)) {
            this.#place = "string";
          } else {
            return this.#fail();
          }
          this.#take(text[at]!);
          at++;
          break;
        }
        case "unicode": {
          if (!HEX_DIGIT.test(text[at]!)) return this.#fail();
          this.#take(text[at]!);
          at++;
          if (--this.#hexLeft === 0) this.#place = "string";
          break;
        }
      }
    }
  }

  /** The reduced text, or null when it is to be parsed whole (see the class). */
  finish(): string | null {
    if (this.#failed || this.#place !== "between") return null;
    return this.#kept.join("");
  }

  /** Part of the open string's text: kept while the string is short, counted once it is long. */
  #take(part: string): void {
    if (this.#base64 && part) this.#base64 = this.#stillBase64(part);
    this.#stringChars += part.length;
    if (this.#stringChars <= LONG_STRING_CHARS) this.#stringText.push(part);
    else if (this.#stringText.length) this.#stringText = [];
  }

  /** Whether the string stays base64 with `part` added: alphabet characters, and `=` only as a run at the end. */
  #stillBase64(part: string): boolean {
    if (NOT_BASE64.test(part)) return false;
    const padding = part.indexOf("=");
    if (padding < 0) return this.#padding === 0;
    if (this.#padding > 0 && padding > 0) return false;
    if (!ONLY_PADDING.test(part.slice(padding))) return false;
    this.#padding += part.length - padding;
    return true;
  }

  /** Whether the closed string is one `atob` decodes (the forgiving-base64 rules on its length and padding). */
  #isBase64(): boolean {
    const length = this.#stringChars;
    return this.#base64 && this.#padding <= 2 && (length % 4 === 0 || (this.#padding === 0 && length % 4 !== 1));
  }

  #fail(): void {
    this.#failed = true;
    this.#kept.length = 0;
    this.#stringText = [];
  }
}

/** A whole text reduced at once: see SkeletonBuilder. */
export function withoutLongStrings(text: string): string | null {
  const builder = new SkeletonBuilder();
  builder.push(text);
  return builder.finish();
}
