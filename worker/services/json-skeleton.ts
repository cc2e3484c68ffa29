/**
 * A JSON text with its long string values left out. Checking a large tool
 * result's structure (upstream.passthrough.ts) needs its members and content
 * types, not the megabyte of text or base64 in one string; parsing that string
 * allocates its like again, which on a busy isolate costs a garbage
 * collection more than the parse. Here the long strings are checked where
 * they lie and replaced by `""`, and only the rest is parsed.
 *
 * The reduction keeps the text's meaning: strings are found the way a JSON
 * lexer finds them (outside a string, a quote opens one; the first unescaped
 * quote closes it), a removed string is checked to be well-formed (every
 * escape valid, and the text holds no control character at all), and member
 * names are never removed. So the reduced text parses exactly when the whole
 * one does, to the same value but for the emptied strings.
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
const HEX4 = /^[0-9a-fA-F]{4}$/;
const SIMPLE_ESCAPES = new Set([...'"\\/bfnrt'].map((char) => char.charCodeAt(0)));
const LETTER_U = 0x75;
const SPACE = 0x20;
const COLON = 0x3a;

/**
 * The text with each string value longer than LONG_STRING_CHARS replaced by
 * `""`; the text itself when it has none; null when it cannot be reduced
 * safely or cheaply (a control character, a malformed string, too many strings
 * or escapes), and is to be parsed whole.
 */
export function withoutLongStrings(text: string): string | null {
  // Raw control characters are invalid inside strings, and JSON's tab and line breaks between tokens are
  // not worth telling apart from them here: only spaces may separate tokens.
  if (CONTROL_CHARACTER.test(text)) return null;
  const kept: string[] = [];
  let copiedTo = 0;
  const budget = { strings: MAX_STRINGS, escapes: MAX_ESCAPES };
  for (let open = text.indexOf('"'); open >= 0; open = text.indexOf('"', open)) {
    if (--budget.strings < 0) return null;
    const close = stringEnd(text, open, budget);
    if (close < 0) return null;
    if (close - open - 1 > LONG_STRING_CHARS && !isMemberName(text, close)) {
      kept.push(text.slice(copiedTo, open + 1));
      copiedTo = close;
    }
    open = close + 1;
  }
  if (!kept.length) return text;
  kept.push(text.slice(copiedTo));
  return kept.join("");
}

/**
 * The index of the quote closing the string opened at `open`; -1 when an
 * escape is invalid, the string never closes, or the escape budget is spent.
 * Both searches only move forward, so the whole string is scanned once.
 */
function stringEnd(text: string, open: number, budget: { escapes: number }): number {
  let quote = text.indexOf('"', open + 1);
  let backslash = text.indexOf("\\", open + 1);
  for (;;) {
    if (quote < 0) return -1;
    if (backslash < 0 || backslash > quote) return quote;
    if (--budget.escapes < 0) return -1;
    const escaped = text.charCodeAt(backslash + 1);
    let after: number;
    if (escaped === LETTER_U) {
      if (!HEX4.test(text.slice(backslash + 2, backslash + 6))) return -1;
      after = backslash + 6;
    } else if (SIMPLE_ESCAPES.has(escaped)) {
      after = backslash + 2;
    } else {
      return -1;
    }
    // An escaped quote does not close the string.
    if (quote < after) quote = text.indexOf('"', after);
    backslash = text.indexOf("\\", after);
  }
}

/** Whether the string closed at `close` is a member name: the next token is a colon. */
function isMemberName(text: string, close: number): boolean {
  let next = close + 1;
  while (text.charCodeAt(next) === SPACE) next++;
  return text.charCodeAt(next) === COLON;
}
