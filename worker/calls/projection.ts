import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";

/**
 * Response projection: an admin-configured list of top-level fields a client
 * may receive from a tool's structured result. The text content is rewritten
 * from the projected object, because the upstream's text usually repeats the
 * whole structured result and would leak the fields projection removes.
 */
export function projectResult(result: CallToolResult, fields: readonly string[] | null): CallToolResult {
  // Error results too: an upstream's isError result may carry the fields projection removes.
  if (!fields) return result;
  const structured = result.structuredContent;
  if (!structured || typeof structured !== "object") return result;
  const projected = Object.fromEntries(fields.filter((field) => field in structured).map((field) => [field, structured[field]]));
  return { ...result, structuredContent: projected, content: [{ type: "text", text: JSON.stringify(projected) }] };
}

/** The output schema clients see for a projected tool: only the kept properties, still required where they were. */
export function projectOutputSchema(
  schema: Record<string, unknown> | undefined,
  fields: readonly string[] | null,
): Record<string, unknown> | undefined {
  if (!schema || !fields) return schema;
  const properties = (schema.properties ?? {}) as Record<string, unknown>;
  const required = Array.isArray(schema.required) ? (schema.required as string[]) : [];
  return {
    ...schema,
    properties: Object.fromEntries(fields.filter((field) => field in properties).map((field) => [field, properties[field]])),
    required: required.filter((field) => fields.includes(field)),
  };
}
