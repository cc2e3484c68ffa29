// RFC 2047 encoded-words, the way a mail header carries text that is not ASCII:
// `=?UTF-8?Q?Zo=C3=AB_M=C3=BCller?=` and `=?UTF-8?B?Wm/DqyBNw7xsbGVy?=` both read
// `Zoë Müller`. A reader sees the decoded text, so the door matches in it
// (SpellingMatcher): B (base64) cannot be read a character at a time in place, since
// its four-character groups do not line up with characters, so a word is decoded
// whole, and one that changes is written again in the same encoding, so the header
// stays a header. Adjacent words with only whitespace between them are one text, as
// RFC 2047 §6.2 displays them (a long name may be split across two).
//
// Bounds: a word is at most MAX_WORD characters (RFC 2047 allows 75), found by one
// regular expression whose every attempt stops at the next `?` or whitespace, so the
// search is linear in the text; a decoded text is never longer than its encoding.

/** One run of adjacent encoded-words: where it is in the text, and what it reads as. */
export interface EncodedRun {
  start: number;
  end: number;
  /** The decoded text of every word of the run, joined. */
  text: string;
  /** `B` or `Q`, as the run's first word has it (upper or lower case kept). */
  encoding: string;
  /** The charset label to write the run with again: its own when it is UTF-8, else `UTF-8`. */
  charset: string;
  /** What separated the run's words (a folded header's `\r\n `), or a space. */
  separator: string;
}

/** Characters of one encoded-word's encoded text that are read; a longer word is left as it is. */
const MAX_WORD = 1000;
const WORD = new RegExp(`=\\?([\\w.:-]{1,40})(?:\\*[\\w-]{1,20})?\\?([BbQq])\\?([^?\\s]{0,${MAX_WORD}})\\?=`, "g");
const NONE: readonly EncodedRun[] = [];

/** Every run of encoded-words in `text` that decodes (a charset it knows, well-formed bytes), in order. */
export function encodedRuns(text: string): readonly EncodedRun[] {
  if (!text.includes("=?")) return NONE;
  const runs: EncodedRun[] = [];
  let run: (EncodedRun & { bytes: number[]; label: string }) | undefined;
  const close = () => {
    if (!run) return;
    const decoded = decode(run.bytes, run.label);
    if (decoded !== undefined)
      runs.push({ start: run.start, end: run.end, text: decoded, encoding: run.encoding, charset: run.charset, separator: run.separator });
    run = undefined;
  };
  WORD.lastIndex = 0;
  for (let word = WORD.exec(text); word; word = WORD.exec(text)) {
    const [whole, label, encoding, encoded] = word as unknown as [string, string, string, string];
    const bytes = /^[Bb]$/.test(encoding) ? base64Bytes(encoded) : qBytes(encoded);
    const charset = label.toLowerCase();
    const between = run ? text.slice(run.end, word.index) : "";
    if (run && (charset !== run.label || !/^[ \t\r\n]+$/.test(between))) close();
    if (!bytes || !decodes(charset)) {
      close();
      continue;
    }
    if (run) {
      if (run.separator === " " && between !== " ") run.separator = between;
      for (const byte of bytes) run.bytes.push(byte);
      run.end = word.index + whole.length;
    } else {
      run = {
        start: word.index,
        end: word.index + whole.length,
        text: "",
        encoding,
        charset: charset === "utf-8" || charset === "utf8" ? label : "UTF-8",
        separator: " ",
        bytes,
        label: charset,
      };
    }
  }
  close();
  return runs;
}

const decodes = (charset: string) => UTF8.has(charset) || LATIN1.has(charset);
const UTF8 = new Set(["utf-8", "utf8", "us-ascii", "ascii"]);
const LATIN1 = new Set(["iso-8859-1", "latin1", "iso-8859-15", "windows-1252", "cp1252"]);

function decode(bytes: number[], charset: string): string | undefined {
  if (LATIN1.has(charset)) {
    let text = "";
    for (const byte of bytes) text += String.fromCharCode(byte);
    return text;
  }
  try {
    return new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(new Uint8Array(bytes));
  } catch {
    return undefined;
  }
}

/** Q: `_` is a space, `=C3` a byte, anything else printable ASCII itself; undefined when it is not well formed. */
function qBytes(encoded: string): number[] | undefined {
  const bytes: number[] = [];
  for (let i = 0; i < encoded.length; i++) {
    const c = encoded.charCodeAt(i);
    if (c === 0x5f) bytes.push(0x20);
    else if (c === 0x3d) {
      const byte = Number.parseInt(encoded.slice(i + 1, i + 3), 16);
      if (!/^[0-9A-Fa-f]{2}$/.test(encoded.slice(i + 1, i + 3))) return undefined;
      bytes.push(byte);
      i += 2;
    } else if (c > 0x20 && c < 0x7f) bytes.push(c);
    else return undefined;
  }
  return bytes;
}

const BASE64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/** B: base64 (padding optional); undefined when it is not well formed. */
function base64Bytes(encoded: string): number[] | undefined {
  const body = encoded.replace(/=+$/, "");
  if (body.length % 4 === 1) return undefined;
  const bytes: number[] = [];
  let bits = 0;
  let value = 0;
  for (let i = 0; i < body.length; i++) {
    const digit = BASE64.indexOf(body.charAt(i));
    if (digit < 0) return undefined;
    value = ((value << 6) | digit) & 0xffffff;
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      bytes.push((value >> bits) & 0xff);
    }
  }
  return bytes;
}

/** Longest encoded-word written back (RFC 2047's limit). */
const WORD_LIMIT = 75;

/** `text` written as the run was: encoded-words of its encoding, each within 75 characters, joined by its separator. */
export function encodeRun(run: EncodedRun, text: string): string {
  const prefix = `=?${run.charset}?${run.encoding}?`;
  const room = WORD_LIMIT - prefix.length - 2;
  const base64 = /^[Bb]$/.test(run.encoding);
  const words: string[] = [];
  let bytes: number[] = [];
  let q = "";
  const flush = () => {
    if (base64 ? bytes.length : q) words.push(`${prefix}${base64 ? base64Of(bytes) : q}?=`);
    bytes = [];
    q = "";
  };
  const encoder = new TextEncoder();
  for (const char of text) {
    const charBytes = [...encoder.encode(char)];
    if (base64) {
      if (Math.ceil((bytes.length + charBytes.length) / 3) * 4 > room) flush();
      bytes.push(...charBytes);
    } else {
      const piece = charBytes.map(qOf).join("");
      if (q.length + piece.length > room) flush();
      q += piece;
    }
  }
  flush();
  return words.join(run.separator);
}

/** One byte as Q writes it: letters, digits and `!*+-/` as they are, a space as `_`, anything else `=XX`. */
function qOf(byte: number): string {
  if (byte === 0x20) return "_";
  const char = String.fromCharCode(byte);
  return /^[A-Za-z0-9!*+\-/]$/.test(char) ? char : `=${byte.toString(16).toUpperCase().padStart(2, "0")}`;
}

function base64Of(bytes: number[]): string {
  let out = "";
  for (let i = 0; i < bytes.length; i += 3) {
    const value = (bytes[i]! << 16) | ((bytes[i + 1] ?? 0) << 8) | (bytes[i + 2] ?? 0);
    out += BASE64[(value >> 18) & 63]! + BASE64[(value >> 12) & 63]!;
    out += i + 1 < bytes.length ? BASE64[(value >> 6) & 63]! : "=";
    out += i + 2 < bytes.length ? BASE64[value & 63]! : "=";
  }
  return out;
}
