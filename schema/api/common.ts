import { z } from "@hono/zod-openapi";

export const ErrorSchema = z
  .object({
    error: z.object({
      code: z.string().openapi({ example: "not_found" }),
      message: z.string(),
      details: z.record(z.string(), z.unknown()).optional(),
    }),
  })
  .openapi("Error");

export const WorkspaceParams = z.object({
  ws: z.string().openapi({ param: { name: "ws", in: "path" }, example: "ws_0123456789abcdefghij" }),
});

/** Standard error responses, so every route documents the shape it fails with. */
export function errorResponses(...statuses: number[]) {
  const descriptions: Record<number, string> = {
    400: "Malformed JSON (`invalid_json`) or a body that fails the schema (`invalid_request`)",
    401: "Missing or invalid credentials (`unauthorized`)",
    403: "The credential lacks the required scope (`forbidden`)",
    404: "Not found in this workspace (`not_found`)",
    409: "Conflicts with current state",
    413: "Over a documented limit",
    502: "The upstream MCP server failed (`upstream_unreachable`, `upstream_protocol_error`)",
  };
  return Object.fromEntries(
    [401, 403, ...statuses].map((status) => [
      status,
      { description: descriptions[status] ?? "Error", content: { "application/json": { schema: ErrorSchema } } },
    ]),
  );
}

export const json = <T extends z.ZodType>(schema: T, description: string) => ({
  description,
  content: { "application/json": { schema } },
});

export const jsonBody = <T extends z.ZodType>(schema: T) => ({
  required: true,
  content: { "application/json": { schema } },
});
