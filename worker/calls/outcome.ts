import type { CallToolResult, CreateTaskResult, McpError } from "@modelcontextprotocol/sdk/types.js";
import type { JsonObject } from "../../schema/hooks/contract.ts";
import type { StageInput, StageRun } from "../hooks/isolate/index.ts";
import type { StageCall } from "../hooks/stage-call.ts";
import type { StageRow } from "../logs/call-log.ts";
import type { RawResult } from "../services/raw-result.ts";
import type { DeployedRevision } from "./deployment.ts";

/**
 * Every code the gateway itself refuses or fails a call with. docs/errors.md's
 * `isError` table is tested against this list; a hook's own `reason` codes
 * travel separately, marked `source: "hook"`.
 */
export const GATEWAY_REFUSAL_CODES = [
  "tool_review_required",
  "tool_name_invalid",
  "upstream_authorization_required",
  "invalid_arguments",
  "invalid_upstream_arguments",
  "approval_required",
  "approval_limit",
  "approval_key_limit",
  "task_limit",
  "hook_failed",
  "hook_outdated",
  "hook_unavailable",
  "workspace_unavailable",
  "revision_changed",
  "unauthorized",
  "invalid_output",
  "schema_too_complex",
  "url_not_allowed",
  "upstream_unreachable",
  "upstream_timeout",
  "upstream_protocol_error",
  "upstream_response_too_large",
  "cancelled",
  "code_mode_busy",
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
  | { kind: "raw_result"; raw: RawResult }
  /**
   * A task-augmented call the upstream accepted as a task: its upstream task and the upstream session it lives in,
   * and the arguments it was created with (its result goes through `after` later, in `finishTaskResult`).
   */
  | { kind: "task"; created: CreateTaskResult; session: string | undefined; upstreamArguments: JsonObject };

/** One stage as the active path ran it: the exact input, and what active decided (null: active has no such stage). */
export interface ObservedStage {
  input: StageInput;
  active: StageRun | null;
}

/** What the caller runs after the live response: the shadow revision on the inputs the active path saw (calls/shadow.ts). */
export interface ShadowWork {
  call: StageCall;
  revision: DeployedRevision;
  /** The tool's current upstream definition hash: a shadow built for another one must not run. */
  definitionHash: string;
  before?: ObservedStage;
  after?: ObservedStage;
}

/** Where a call's time went: hooks (active stages), the upstream request, and the rest, the gateway's. */
export interface CallTiming {
  /** Epoch ms. */
  startedAt: number;
  durationMs: number;
  hooksMs: number;
  upstreamMs: number;
  /** When the upstream request started, in ms after the call started; null when none was made. */
  upstreamOffsetMs: number | null;
}

/** Everything a tools/call produced: the outcome, the rows to log, and the shadow work still to do. */
export interface ToolCallRun {
  outcome: CallOutcome;
  /** The tool the name resolved to; null for a name that matches none this client may see. */
  tool: { uid: string; serviceId: string } | null;
  /** Rows of the live path; the caller sends them with the call's row after the response. */
  logs: StageRow[];
  /** A deployed shadow revision's run on the same inputs, for the caller to start after the response. */
  shadow: ShadowWork | null;
  /** Whether the rows may keep their details (service payload capture and workspace detail policy). */
  captureDetails: boolean;
  timing: CallTiming;
  /** Interrupt polls the active stages spent: their work as the isolate counts it (Code Mode charges it, codemode.tools.ts). */
  hookPolls: number;
  /** The active revision that ran, if any. */
  revisionId: string | null;
  /** Whether the call went through on a claimed human approval. */
  approved: boolean;
}
