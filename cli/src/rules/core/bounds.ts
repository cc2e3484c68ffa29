// How deep an event's values may nest. Every walk over event data (the alias door's
// rewrite, the leak meter, the run_end scan, a command's JSON on stdin, a record
// line) recurses on nesting, so a tool result nested 100,000 levels deep would
// overflow the stack; the run refuses such an event before any walk starts.

/** Objects and arrays nested deeper than this make an event fail closed (the gateway's MAX_VALUE_NESTING is the same). */
export const MAX_EVENT_DEPTH = 64;

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
