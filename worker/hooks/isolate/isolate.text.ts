/**
 * String helpers for data crossing the isolate boundary. Values leave QuickJS
 * as JSON text produced by its own JSON.stringify, which escapes lone UTF-16
 * surrogates; after JSON.parse on the host they are ordinary (ill-formed) JS
 * strings, found and handled here.
 */

// With the `u` flag a surrogate range only matches code units that are not part of a pair.
const LONE_SURROGATE = /[\uD800-\uDFFF]/u;
const LONE_SURROGATES = /[\uD800-\uDFFF]/gu;

const encoder = new TextEncoder();

export function utf8Length(text: string): number {
  return encoder.encode(text).byteLength;
}

/** True when any string (or object key) inside a JSON value holds a lone surrogate. */
export function containsLoneSurrogate(value: unknown): boolean {
  if (typeof value === "string") return LONE_SURROGATE.test(value);
  if (Array.isArray(value)) return value.some(containsLoneSurrogate);
  if (value !== null && typeof value === "object") {
    return Object.entries(value).some(([key, item]) => LONE_SURROGATE.test(key) || containsLoneSurrogate(item));
  }
  return false;
}

/** Log text is kept, not rejected: lone surrogates become U+FFFD. */
export function replaceLoneSurrogates<T>(value: T): T {
  if (typeof value === "string") return value.replace(LONE_SURROGATES, "\uFFFD") as T;
  if (Array.isArray(value)) return value.map(replaceLoneSurrogates) as T;
  if (value !== null && typeof value === "object") {
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [replaceLoneSurrogates(key), replaceLoneSurrogates(item)])) as T;
  }
  return value;
}
