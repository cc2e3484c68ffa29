import type { CallToolResult, McpError } from "@modelcontextprotocol/sdk/types.js";
import type { CallLogEntry } from "../logs/logs.store.ts";
import type { RawResult } from "../services/upstream.passthrough.ts";
import type { ShadowWork } from "./shadow.ts";

/** The `_meta` namespace of the gateway's own signals; nothing from an upstream or a hook may use it. */
export const GATEWAY_META_PREFIX = "dev.rayrun/";

/**
 * Every code the gateway itself refuses or fails a call with. docs/errors.md's
 * `isError` table is tested against this list; a hook's own `reason` codes
 * travel separately, marked `source: "hook"`.
 */
export const GATEWAY_REFUSAL_CODES = [
  "tool_review_required",
  "upstream_authorization_required",
  "invalid_arguments",
  "invalid_upstream_arguments",
  "approval_required",
  "approval_limit",
  "hook_failed",
  "hook_outdated",
  "hook_unavailable",
  "revision_changed",
  "invalid_output",
  "schema_too_complex",
  "url_not_allowed",
  "upstream_unreachable",
  "upstream_timeout",
  "upstream_protocol_error",
  "upstream_response_too_large",
  "cancelled",
] as const;
export type GatewayRefusalCode = (typeof GATEWAY_REFUSAL_CODES)[number];

/** How one tools/call ended, before anything is put on the wire. */
export type CallOutcome =
  /** No such tool, or one this client's profile may not see: the two must look alike. */
  | { kind: "hidden" }
  | { kind: "refused"; source: "gateway"; code: GatewayRefusalCode; message: string; details: Record<string, unknown> }
  | { kind: "refused"; source: "hook"; code: string; message: string; details: Record<string, unknown> }
  /** The upstream answered with a JSON-RPC error; it is passed on as the upstream's own. */
  | { kind: "upstream_rpc_error"; error: McpError }
  | { kind: "result"; result: CallToolResult }
  /** The upstream's result value as the bytes it sent, for the client unchanged (upstream.passthrough.ts). */
  | { kind: "raw_result"; raw: RawResult };

/** Everything a tools/call produced: the outcome, the rows to log, and the shadow work still to do. */
export interface ToolCallRun {
  outcome: CallOutcome;
  /** Rows of the live path; the caller writes them after the response. */
  logs: CallLogEntry[];
  /** A deployed shadow revision's run on the same inputs, for the caller to start after the response. */
  shadow: ShadowWork | null;
  /** Whether the rows may keep their details (service payload capture and workspace detail policy). */
  captureDetails: boolean;
}

/** The one way a call-log row is built, so every row has every field. */
export function logEntry(
  call: { toolUid: string; requestId: string },
  row: Pick<CallLogEntry, "stage" | "outcome"> & Partial<Omit<CallLogEntry, "toolUid" | "requestId" | "stage" | "outcome">>,
): CallLogEntry {
  return {
    toolUid: call.toolUid,
    requestId: call.requestId,
    stage: row.stage,
    channel: row.channel ?? "active",
    outcome: row.outcome,
    code: row.code ?? null,
    durationMs: row.durationMs ?? 0,
    revisionId: row.revisionId ?? null,
    shadowDiffered: row.shadowDiffered ?? null,
    ...(row.details ? { details: row.details } : {}),
  };
}
