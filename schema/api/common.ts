import { z } from "@hono/zod-openapi";
import { codesWithStatus, ERROR_CODES, type ErrorStatus } from "./errors.ts";

export const ErrorSchema = z
  .object({
    error: z.object({
      code: z.enum(ERROR_CODES).openapi({ example: "not_found" }),
      message: z.string(),
      details: z.record(z.string(), z.unknown()).optional(),
    }),
  })
  .openapi("Error");

export const WorkspaceParams = z.object({
  ws: z.string().openapi({ param: { name: "ws", in: "path" }, example: "ws_0123456789abcdefghij" }),
});

const STATUS_SUMMARIES: Record<ErrorStatus, string> = {
  400: "Malformed JSON or a request that fails the schema or a rule",
  401: "Missing or invalid credentials",
  403: "The credential lacks the required scope",
  404: "Not found in this workspace",
  409: "Conflicts with current state",
  412: "The `If-Match` etag is stale",
  413: "Over a documented limit",
  415: "The body is not JSON",
  422: "The hook does not compile, or its tool's declarations are too large to generate",
  428: "`If-Match` is required",
  429: "Over a rate quota; see `Retry-After`",
  500: "A bug; details go to the Worker log only",
  502: "The upstream MCP server failed",
  503: "The compiler failed and is being restarted, or the workspace's Durable Object did not answer; retry",
};

/**
 * Standard error responses, so every route documents the shape it fails with;
 * each status lists the codes it may carry (all codes with that status in `ERROR_STATUS`).
 * Any authenticated route can answer 503: a key is checked under its workspace's lease.
 */
export function errorResponses(...statuses: ErrorStatus[]) {
  const documented: ErrorStatus[] = [...new Set<ErrorStatus>([401, 403, ...statuses, 503])];
  return Object.fromEntries(
    documented.map((status) => {
      const codes = codesWithStatus(status).map((code) => `\`${code}\``);
      const description = `${STATUS_SUMMARIES[status]}: ${codes.join(", ")}`;
      return [status, { description, content: { "application/json": { schema: ErrorSchema } } }];
    }),
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
