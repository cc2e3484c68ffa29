import { describe, it } from "vitest";
import errorsDoc from "../../docs/errors.md?raw";
import { GATEWAY_REFUSAL_CODES } from "./outcome.ts";

/** The codes in the first column of docs/errors.md's `isError` table (its "MCP: `isError` tool results" section). */
function documentedRefusalCodes(markdown: string): string[] {
  const start = markdown.indexOf("## MCP: `isError` tool results");
  const end = markdown.indexOf("\n## ", start + 1);
  const codes: string[] = [];
  for (const line of markdown.slice(start, end).split("\n")) {
    // A code cell starts with a code span; "_the hook's `reason`_" is the hook's own codes, not the gateway's.
    const cell = /^\|\s*(`[^|]+)\|/.exec(line)?.[1];
    if (cell) codes.push(...[...cell.matchAll(/`([a-z_]+)`/g)].map((match) => match[1]!));
  }
  return codes.sort();
}

describe("gateway refusal codes", () => {
  it("are exactly the codes docs/errors.md's isError table documents", ({ expect }) => {
    const documented = documentedRefusalCodes(errorsDoc);
    expect(documented.length).toBeGreaterThan(0);
    expect(documented).toEqual([...GATEWAY_REFUSAL_CODES].sort());
  });
});
