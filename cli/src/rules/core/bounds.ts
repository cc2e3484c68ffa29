// How deep an event's values may nest. Every walk over event data (the alias door's
// rewrite, the leak meter, the run_end scan, a command's JSON on stdin, a record
// line) recurses on nesting, so a tool result nested 100,000 levels deep would
// overflow the stack; the run refuses such an event before any walk starts.

/** Objects and arrays nested deeper than this make an event fail closed (the gateway's MAX_VALUE_NESTING is the same). */
export const MAX_EVENT_DEPTH = 64;

/**
 * How much structure a JSON text may hold before it is parsed: its `{`, `[` and `,` outside strings (about
 * one per value). Parsing costs memory per value, not per byte (63 MB of `{}` parse into 21 million objects
 * and gigabytes), so a text past this is refused unparsed. At the bound (999,990 empty objects in one list)
 * a `hooks run` event parses and passes the alias door in about 270 MB and 1.3 s.
 */
export const MAX_JSON_STRUCTURE = 2_000_000;

/**
 * Calls `visit` with each `{`, `[`, `}`, `]` and `,` of a JSON text that is outside its strings, in order, until it
 * returns true; returns that offset, or undefined. One linear pass, nothing built: for bounds checked before parsing.
 */
function firstStructural(text: string, visit: (code: number) => boolean): number | undefined {
  let inString = false;
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index);
    if (inString) {
      if (code === 0x5c) index++;
      else if (code === 0x22) inString = false;
    } else if (code === 0x22) inString = true;
    else if ((code === 0x7b || code === 0x5b || code === 0x7d || code === 0x5d || code === 0x2c) && visit(code)) return index;
  }
  return undefined;
}

/** Whether a JSON text holds more than `limit` `{`, `[` and `,` outside its strings. */
export function jsonStructureOver(text: string, limit = MAX_JSON_STRUCTURE): boolean {
  let count = 0;
  return firstStructural(text, (code) => code !== 0x7d && code !== 0x5d && ++count > limit) !== undefined;
}

/**
 * Where a JSON text first nests objects and arrays deeper than `limit` (the offset of the bracket that does), or
 * undefined: checked before parsing, since what follows a parse (locating each key's line) recurses.
 */
export function jsonNestingPastAt(text: string, limit = MAX_EVENT_DEPTH): number | undefined {
  let depth = 0;
  return firstStructural(text, (code) => {
    if (code === 0x7d || code === 0x5d) depth--;
    else if (code !== 0x2c) return ++depth > limit;
    return false;
  });
}

/** Whether `value` nests objects and arrays deeper than `limit`. An explicit stack: any depth is safe to ask about. */
export function nestsDeeperThan(value: unknown, limit = MAX_EVENT_DEPTH): boolean {
  if (value === null || typeof value !== "object") return false;
  const stack: unknown[] = [value];
  const depths: number[] = [1];
  while (stack.length > 0) {
    const next = stack.pop() as object;
    const depth = depths.pop()!;
    if (depth > limit) return true;
    // Indexes and for…in rather than Object.values: no array made per object of a large result.
    if (Array.isArray(next)) {
      for (let index = 0; index < next.length; index++) {
        const item: unknown = next[index];
        if (item === null || typeof item !== "object") continue;
        stack.push(item);
        depths.push(depth + 1);
      }
    } else {
      for (const key in next) {
        if (!Object.hasOwn(next, key)) continue;
        const item: unknown = (next as Record<string, unknown>)[key];
        if (item === null || typeof item !== "object") continue;
        stack.push(item);
        depths.push(depth + 1);
      }
    }
  }
  return false;
}
