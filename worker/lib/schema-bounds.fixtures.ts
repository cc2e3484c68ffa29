/**
 * Hostile upstream schemas, each with the call that made validation take
 * seconds before it was bounded. The demo upstream serves them as tools (with
 * fixtures on), the call-path tests call them, and the fairness check and
 * `npm run bench` can reuse them as attacks.
 */

/** `^(a+)+$` backtracks exponentially in a native RegExp on "aaa…!". */
export const EVIL_PATTERN = "^(a+)+$";

/** A string the evil pattern rejects only after ~2^n backtracking steps natively; linear here. */
export function evilPatternSubject(length = 32): string {
  return `${"a".repeat(length)}!`;
}

/**
 * An `anyOf` chain through `$defs`: each level offers two branches that both
 * reference the next, and anyOf checks every branch, so one value is checked
 * 2^levels times (22 levels took 18 s).
 */
export function anyOfChainSchema(levels = 22): Record<string, unknown> {
  const $defs: Record<string, unknown> = { [`l${levels}`]: { type: "string" } };
  for (let level = levels - 1; level >= 0; level--) {
    const next = { $ref: `#/$defs/l${level + 1}` };
    $defs[`l${level}`] = { anyOf: [next, { ...next }] };
  }
  return { type: "object", properties: { value: { $ref: "#/$defs/l0" } }, $defs };
}

/** `uniqueItems` compares every pair of items: 30,000 items are 450 million comparisons. */
export function uniqueItemsSchema(): Record<string, unknown> {
  return { type: "object", properties: { ids: { type: "array", items: { type: "integer" }, uniqueItems: true } } };
}

export function uniqueItemsArguments(length = 30_000): { ids: number[] } {
  return { ids: Array.from({ length }, (_, i) => i) };
}

/** The tools a hostile upstream lists: one per attack, named as the tests call them. */
export function hostileSchemaTools() {
  const stringInput = { type: "object", properties: { text: { type: "string" } } };
  return [
    {
      name: "evil_input_pattern",
      description: "Input with a catastrophically backtracking pattern",
      inputSchema: { type: "object", properties: { text: { type: "string", pattern: EVIL_PATTERN } }, required: ["text"] },
    },
    {
      name: "evil_output_pattern",
      description: "Output with a catastrophically backtracking pattern; returns { text } as given",
      inputSchema: stringInput,
      outputSchema: { type: "object", properties: { text: { type: "string", pattern: EVIL_PATTERN } }, required: ["text"] },
    },
    {
      name: "backreference_pattern",
      description: "A pattern only a backtracking engine can match",
      inputSchema: { type: "object", properties: { text: { type: "string", pattern: "^(a+)\\1$" } } },
    },
    { name: "anyof_chain", description: "A 22-level anyOf chain through $defs", inputSchema: anyOfChainSchema() },
    { name: "unique_items", description: "uniqueItems over whatever array it gets", inputSchema: uniqueItemsSchema() },
  ];
}
