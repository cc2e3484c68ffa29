/** A timestamp in the viewer's locale, or a dash. */
export function when(iso: string | null | undefined): string {
  return iso ? new Date(iso).toLocaleString() : "—";
}

/**
 * Characters a reader does not see but a model reads: format characters (zero-width, bidi controls, the tag block
 * U+E0000–E007F that can spell out whole sentences), private-use characters, variation selectors and the Hangul
 * fillers. An upstream can hide instructions for the agent in a tool's description with them (round 6).
 */
const INVISIBLE = /[\p{Cf}\p{Co}\u{FE00}-\u{FE0F}\u{E0100}-\u{E01EF}\u115F\u1160\u3164\uFFA0]/gu;

/** How many characters of `text` a reader cannot see. */
export const invisibleCount = (text: string): number => text.match(INVISIBLE)?.length ?? 0;

/** `\uXXXX` (a surrogate pair beyond the BMP): in JSON text, the same string, and one a reader can see. */
const escaped = (character: string) =>
  [...Array(character.length).keys()].map((i) => `\\u${character.charCodeAt(i).toString(16).toUpperCase().padStart(4, "0")}`).join("");

/**
 * JSON for people to read, with every invisible character shown as its escape. It only ever occurs inside a string,
 * so the text is still valid JSON of the same value: what an approver reads is what the agent gets.
 */
export function json(value: unknown): string {
  return JSON.stringify(value, null, 2).replace(INVISIBLE, escaped);
}

export function bytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KiB`;
  return `${(n / 1024 / 1024).toFixed(1)} MiB`;
}
