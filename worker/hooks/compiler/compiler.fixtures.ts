import type { UpstreamToolDefinition } from "./compiler.types.ts";

/** The release-notes search tool the seed's example adapts. */
export const SEARCH_TOOL: UpstreamToolDefinition = {
  name: "search_release_notes",
  description: "Full-text search over release notes",
  inputSchema: {
    type: "object",
    properties: { q: { type: "string", description: "Query text" }, limit: { type: "integer" } },
    required: ["q"],
  },
  outputSchema: {
    type: "object",
    properties: { items: { type: "array", items: { type: "object" } } },
    required: ["items"],
  },
};

/** The seed's "Author one explicit adapter" example. */
export const RELEASE_NOTES_HOOK = `export default defineToolAdapter<{ query: string }, { items: unknown[] }>({
  apiVersion: "rayrun.hooks/v1",

  publicContract: {
    description: "Search public release notes",
    inputSchema: {
      type: "object",
      properties: { query: { type: "string" } },
      required: ["query"],
      additionalProperties: false,
    },
  },

  before({ arguments: args, context }) {
    context.log.info("Preparing search", { query: args.query });
    const prefix = typeof context.config.prefix === "string" ? context.config.prefix : "";
    return {
      action: "continue",
      arguments: { q: prefix + args.query },
    };
  },

  after({ result }) {
    return { action: "return", result: { items: result.items } };
  },
});
`;

/** A minimal valid hook whose adapter object literal body is `members`. */
export function hookWith(members: string): string {
  return `export default defineToolAdapter({
  apiVersion: "rayrun.hooks/v1",
  ${members}
});
`;
}

export const PASS_THROUGH_BEFORE = `before({ arguments: args }) {
    return { action: "continue", arguments: args };
  },`;
