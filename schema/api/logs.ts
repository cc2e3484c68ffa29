import { z } from "@hono/zod-openapi";

/** What a call row is of. */
export const CALL_KINDS = ["tools/call", "resources/read", "prompts/get", "run_code"] as const;

/**
 * How a call ended. `approved`: it went through on a claimed human approval; `upstream_failed`: the gateway got no
 * usable answer (unreachable, protocol error, too large); `error`: a run_code program failed, or the gateway broke.
 */
export const CALL_OUTCOMES = [
  "ok",
  "approved",
  "upstream_error",
  "upstream_failed",
  "refused",
  "hidden",
  "cancelled",
  "approval_required",
  "timed_out",
  "error",
] as const;

/** A log row's id: its number within its workspace, never a count shared with other workspaces. */
const RowNumber = z.number().int().openapi({
  description: "The row's number within its workspace: rows landed later have larger ones (a skipped redelivery leaves a gap)",
});

/** A page cursor (worker/logs/page-cursor.ts): signed, opaque, valid only in the workspace and list that made it. */
const PageCursor = z
  .string()
  .max(512)
  .regex(/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/, "a cursor is the `nextCursor` of a previous page")
  .optional()
  .openapi({ description: "`nextCursor` of the previous page (of the same workspace and list)" });

export const CallLogSchema = z
  .object({
    id: RowNumber,
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
  cursor: PageCursor,
  format: z.enum(["json", "jsonl"]).default("json").openapi({ description: "jsonl: one record per line (application/x-ndjson)" }),
});

export const ContentLogSchema = z
  .object({
    id: RowNumber,
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
    outcome: z.enum(["ok", "blocked", "upstream_error", "upstream_failed", "error"]),
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
  cursor: PageCursor,
  format: z.enum(["json", "jsonl"]).default("json").openapi({ description: "jsonl: one record per line (application/x-ndjson)" }),
});

export const CodeRunSchema = z
  .object({
    id: RowNumber,
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
  cursor: PageCursor,
  format: z.enum(["json", "jsonl"]).default("json").openapi({ description: "jsonl: one record per line (application/x-ndjson)" }),
});

/** An id no longer than any the gateway issues, of the characters they use. */
const id = (what: string) =>
  z
    .string()
    .max(128)
    .regex(/^[A-Za-z0-9_:.@-]+$/, `a ${what} holds letters, digits and _ : . @ -`);

export const CallSchema = z
  .object({
    id: RowNumber,
    requestId: z.string().openapi({ description: "A run_code's inner calls carry the run's request id, with their `callIndex`" }),
    kind: z.enum(CALL_KINDS),
    callIndex: z.number().int().nullable().openapi({ description: "A Code Mode inner call's 0-based index in its run; null otherwise" }),
    createdAt: z.string().openapi({ description: "When the call started" }),
    actor: z.string().openapi({ description: "`key:<key id>` for an API key, `oauth:<client_id>` for an OAuth access token" }),
    grantedBy: z.string().nullable().openapi({ description: "An OAuth caller: the user whose grant the token holds" }),
    profileId: z.string().nullable(),
    serviceId: z.string().nullable(),
    toolUid: z.string().nullable().openapi({ description: "null for a name that matches no tool, and for content and run_code" }),
    name: z.string().openapi({ description: "The public name called: tool, prompt, or gateway resource URI (≤ 512 characters)" }),
    item: z.string().nullable().optional().openapi({
      description: "Content only: the upstream URI or prompt name; only for hooks:write keys and admins, like details",
    }),
    outcome: z.enum(CALL_OUTCOMES),
    code: z.string().nullable().openapi({ description: "The refusal, failure or hook reason code; the upstream's JSON-RPC code" }),
    durationMs: z.number(),
    gatewayMs: z.number(),
    hooksMs: z.number(),
    upstreamMs: z.number(),
    bytesIn: z.number().int(),
    bytesOut: z.number().int(),
    revisionId: z.string().nullable().openapi({ description: "The active hook revision that ran" }),
    shadow: z.enum(["same", "differed", "not_run"]).nullable().openapi({ description: "The shadow revision's verdict; null without one" }),
    innerCalls: z.number().int().nullable(),
    programSha256: z.string().nullable(),
    programBytes: z.number().int().nullable(),
  })
  .openapi("Call");

export const CallsQuery = z.object({
  since: z.iso.datetime().optional(),
  until: z.iso.datetime().optional(),
  kind: z.enum(CALL_KINDS).optional(),
  tool: id("tool uid").optional().openapi({ description: "A tool uid" }),
  service: id("service id").optional().openapi({ description: "A service id" }),
  actor: id("actor").optional().openapi({ description: "`key:<key id>` or `oauth:<client_id>`" }),
  profile: id("profile id").optional().openapi({ description: "An access profile id" }),
  outcome: z.enum(CALL_OUTCOMES).optional(),
  code: z
    .string()
    .max(64)
    .regex(/^[a-z0-9_-]+$/, "a code holds lowercase letters, digits, _ and -")
    .optional(),
  requestId: id("request id").optional(),
  limit: z.coerce.number().int().min(1).max(1000).default(100),
  cursor: PageCursor,
  format: z.enum(["json", "jsonl"]).default("json").openapi({ description: "jsonl: one record per line (application/x-ndjson)" }),
});

export const CallParams = z.object({
  ws: z.string().openapi({ param: { name: "ws", in: "path" } }),
  requestId: id("request id").openapi({ param: { name: "requestId", in: "path" } }),
});

export const CallDetailSchema = z
  .object({
    calls: z.array(CallSchema).openapi({ description: "The call; for a run_code, the run then its inner calls by index" }),
    stages: z.array(CallLogSchema).openapi({
      description:
        "Its hook stage runs and refusals, active and shadow; a shadow row that differed carries `details.comparison` " +
        "(`active` and `shadow` verdicts) when payload capture stored it",
    }),
  })
  .openapi("CallDetail");

export const MetricsQuery = z.object({
  since: z.iso.datetime().optional().openapi({ description: "Default: one hour before `until`" }),
  until: z.iso.datetime().optional().openapi({ description: "Default: now" }),
  step: z.coerce.number().int().min(1).max(1440).default(1).openapi({ description: "Minutes per point" }),
  kind: z.enum(CALL_KINDS).optional(),
  tool: id("tool uid").optional(),
  actor: id("actor").optional(),
});

const MetricsPointFields = {
  calls: z.number().int(),
  outcomes: z.record(z.string(), z.number().int()).openapi({ description: "Calls by outcome" }),
  p50Ms: z.number().nullable(),
  p99Ms: z.number().nullable(),
  bytesIn: z.number().int(),
  bytesOut: z.number().int(),
  lost: z.number().int().openapi({ description: "Call-log messages the gateway could not queue (workspace-wide)" }),
};

export const MetricsSchema = z
  .object({
    stepMinutes: z.number().int(),
    points: z.array(z.object({ at: z.string(), ...MetricsPointFields })),
    totals: z.object(MetricsPointFields),
  })
  .openapi("Metrics");
