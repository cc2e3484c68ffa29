import { z } from "@hono/zod-openapi";

export const CallLogSchema = z
  .object({
    id: z.number().int(),
    toolUid: z.string(),
    requestId: z.string(),
    stage: z.enum(["before", "after", "pre_dispatch", "upstream"]),
    channel: z.enum(["active", "shadow"]),
    outcome: z.string().openapi({
      description: "continue, reject, require_approval, return, fail, error, refused, upstream_error, upstream_failed, cancelled",
    }),
    code: z.string().nullable().openapi({ description: "Isolate error code or refusal code" }),
    durationMs: z.number(),
    revisionId: z.string().nullable(),
    shadowDiffered: z.boolean().nullable(),
    createdAt: z.string(),
    details: z.record(z.string(), z.unknown()).nullable().optional().openapi({
      description:
        "Reason, message, hook logs, error text. Present only for hooks:write keys and admins, and only when payload capture stored them",
    }),
  })
  .openapi("CallLog");

export const LogsQuery = z.object({
  since: z.iso.datetime().optional(),
  until: z.iso.datetime().optional(),
  stage: z.enum(["before", "after", "pre_dispatch", "upstream"]).optional(),
  channel: z.enum(["active", "shadow"]).optional(),
  outcome: z.string().max(64).optional(),
  requestId: z.string().max(128).optional(),
  limit: z.coerce.number().int().min(1).max(1000).default(100),
  cursor: z.string().regex(/^\d+$/).optional().openapi({ description: "`nextCursor` of the previous page" }),
  format: z.enum(["json", "jsonl"]).default("json").openapi({ description: "jsonl: one record per line (application/x-ndjson)" }),
});
