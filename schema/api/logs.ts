import { z } from "@hono/zod-openapi";

export const CallLogSchema = z
  .object({
    id: z.number().int(),
    toolUid: z.string(),
    requestId: z.string(),
    stage: z.enum(["before", "after", "pre_dispatch", "upstream"]),
    channel: z.enum(["active", "shadow"]),
    outcome: z.string().openapi({
      description:
        "continue, reject, require_approval, return, fail, error, refused, upstream_error, upstream_failed, cancelled; " +
        "ok (a Code Mode inner call that went through with no other row)",
    }),
    code: z.string().nullable().openapi({ description: "Isolate error code or refusal code" }),
    durationMs: z.number(),
    revisionId: z.string().nullable(),
    shadowDiffered: z.boolean().nullable(),
    actor: z.string().nullable().openapi({
      description: "Who made the call: `key:<key id>` for an API key, `oauth:<client_id>` for an OAuth access token; null on older rows",
    }),
    callIndex: z.number().int().nullable().openapi({
      description: "A Code Mode inner call's 0-based index in its `run_code` run, whose request id the row carries; null on direct calls",
    }),
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

export const ContentLogSchema = z
  .object({
    id: z.number().int(),
    serviceId: z.string(),
    actor: z.string().nullable().openapi({
      description: "Who made the request: `key:<key id>` or `oauth:<client_id>`; null on older rows",
    }),
    requestId: z.string(),
    method: z.enum(["resources/read", "prompts/get"]),
    item: z
      .string()
      .optional()
      .openapi({
        description:
          "The upstream resource URI or prompt name (≤ 512 characters). A URI may be a template filled with the client's values, " +
          "so it is shown, like call log details, only to hooks:write keys and admins",
      }),
    outcome: z.enum(["ok", "blocked", "upstream_error", "upstream_failed"]),
    code: z.string().nullable().openapi({ description: "Upstream failure code, or the upstream's JSON-RPC error code" }),
    durationMs: z.number(),
    createdAt: z.string(),
  })
  .openapi("ContentLog");

export const ContentLogsQuery = z.object({
  since: z.iso.datetime().optional(),
  until: z.iso.datetime().optional(),
  method: z.enum(["resources/read", "prompts/get"]).optional(),
  outcome: z.enum(["ok", "blocked", "upstream_error", "upstream_failed"]).optional(),
  requestId: z.string().max(128).optional(),
  limit: z.coerce.number().int().min(1).max(1000).default(100),
  cursor: z.string().regex(/^\d+$/).optional().openapi({ description: "`nextCursor` of the previous page" }),
  format: z.enum(["json", "jsonl"]).default("json").openapi({ description: "jsonl: one record per line (application/x-ndjson)" }),
});

export const CodeRunSchema = z
  .object({
    id: z.number().int(),
    actor: z.string().openapi({ description: "Who ran it: `key:<key id>` or `oauth:<client_id>`" }),
    requestId: z.string().openapi({ description: "The run's request id; its inner calls' rows (under each tool) carry it too" }),
    outcome: z.enum(["ok", "error"]),
    code: z.string().nullable().openapi({ description: "The run's error code: a Code Mode code, or an uncaught inner call's" }),
    innerCalls: z.number().int(),
    programSha256: z.string().nullable().openapi({ description: "SHA-256 (hex) of the program's text, which is never stored" }),
    programBytes: z.number().int().nullable(),
    durationMs: z.number(),
    createdAt: z.string(),
  })
  .openapi("CodeRun");

export const CodeRunsQuery = z.object({
  since: z.iso.datetime().optional(),
  until: z.iso.datetime().optional(),
  outcome: z.enum(["ok", "error"]).optional(),
  requestId: z.string().max(128).optional(),
  limit: z.coerce.number().int().min(1).max(1000).default(100),
  cursor: z.string().regex(/^\d+$/).optional().openapi({ description: "`nextCursor` of the previous page" }),
  format: z.enum(["json", "jsonl"]).default("json").openapi({ description: "jsonl: one record per line (application/x-ndjson)" }),
});
