import type { StageRun } from "../hooks/isolate/index.ts";
import type { StageCall } from "../hooks/stage-call.ts";
import { utf8Length } from "../hooks/isolate/isolate.text.ts";
import { boundedDetailsJson } from "../logs/log-details.ts";
import {
  cutName,
  type CallKind,
  type CallLogMessage,
  type CallRow,
  type CallRowOutcome,
  type ShadowVerdict,
  type StageRow,
} from "../logs/call-log.ts";
import type { DeployedRevision } from "./deployment.ts";
import type { CallOutcome, ToolCallRun } from "./outcome.ts";

/**
 * The one place a call-log row is built. The call path feeds it what happened (a tool call's run, a content
 * request, a run_code run); it gives back the rows and the queue message that carries them.
 */

/** A stage row with every field set. */
export function stageRow(
  call: { toolUid: string; requestId: string },
  row: Pick<StageRow, "stage" | "outcome"> & Partial<Omit<StageRow, "toolUid" | "requestId" | "stage" | "outcome">>,
): StageRow {
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
    ...(row.offsetMs !== undefined ? { offsetMs: row.offsetMs } : {}),
    ...(row.details ? { details: row.details } : {}),
  };
}

/**
 * The row of one stage run, active or shadow. Its details (the hook's reason and message, the error text, the
 * hook's logs and, for a shadow that differed, both verdicts to compare) are kept only where payload capture allows.
 */
export function stageRunRow(
  call: StageCall,
  stage: "before" | "after",
  revision: DeployedRevision,
  run: StageRun,
  options: { channel?: "active" | "shadow"; shadowDiffered?: boolean | null; offsetMs?: number; comparison?: unknown } = {},
): StageRow {
  const value = run.value as { reason?: string; message?: string } | undefined;
  // An isolate this Worker had no wasm memory for ran nothing: the gateway refused the stage, as it refused the call.
  const refused = run.unavailable === true;
  return stageRow(
    { toolUid: call.tool.uid, requestId: call.requestId },
    {
      stage,
      channel: options.channel ?? "active",
      outcome: refused ? "refused" : run.outcome,
      code: refused ? "hook_unavailable" : (run.error?.code ?? null),
      durationMs: run.usage.durationMs,
      revisionId: revision.revisionId,
      shadowDiffered: options.shadowDiffered ?? null,
      ...(options.offsetMs !== undefined ? { offsetMs: options.offsetMs } : {}),
      details: {
        ...(value?.reason ? { reason: value.reason } : {}),
        ...(value?.message ? { message: value.message } : {}),
        ...(run.error ? { error: run.error.message } : {}),
        ...(run.logs.length ? { logs: run.logs } : {}),
        ...(options.comparison !== undefined ? { comparison: options.comparison } : {}),
      },
    },
  );
}

/** Gateway codes that mean the upstream gave no usable answer, rather than a refusal of the call. */
const UPSTREAM_FAILURES = new Set(["upstream_unreachable", "upstream_protocol_error", "upstream_response_too_large", "url_not_allowed"]);

/** A tool call's outcome as its call row records it. */
export function toolCallOutcome(outcome: CallOutcome, approved: boolean): { outcome: CallRowOutcome; code: string | null } {
  switch (outcome.kind) {
    case "hidden":
      return { outcome: "hidden", code: null };
    case "upstream_rpc_error":
      return { outcome: "upstream_error", code: String(outcome.error.code) };
    case "result":
      if (outcome.result.isError) return { outcome: "upstream_error", code: null };
      return { outcome: approved ? "approved" : "ok", code: null };
    case "raw_result":
    case "task":
      return { outcome: approved ? "approved" : "ok", code: null };
    case "refused":
      if (outcome.source === "hook") return { outcome: "refused", code: outcome.code };
      if (outcome.code === "approval_required") return { outcome: "approval_required", code: outcome.code };
      if (outcome.code === "upstream_timeout") return { outcome: "timed_out", code: outcome.code };
      if (outcome.code === "cancelled") return { outcome: "cancelled", code: outcome.code };
      if (UPSTREAM_FAILURES.has(outcome.code)) return { outcome: "upstream_failed", code: outcome.code };
      return { outcome: "refused", code: outcome.code };
  }
}

/** Who made a call and through which credential, as every call row records it. */
export interface CallActor {
  workspaceId: string;
  actor: string;
  keyId: string;
  grantedBy: string | null;
  profileId: string | null;
}

/** What a shadow run's rows say about the call: null when no shadow was deployed. */
export function shadowVerdict(stages: StageRow[]): ShadowVerdict | null {
  const shadow = stages.filter((row) => row.channel === "shadow");
  if (!shadow.length) return null;
  if (shadow.some((row) => row.shadowDiffered)) return "differed";
  if (shadow.some((row) => row.stage === "pre_dispatch")) return "not_run";
  return "same";
}

/** A payload's size as a row records it: its JSON's UTF-8 bytes (0 for none). */
export const jsonBytes = (value: unknown) => (value === undefined ? 0 : utf8Length(JSON.stringify(value)));

/** An answer's size: a passed-through result is the upstream's bytes in pieces (never serialised again), else its JSON. */
function answerBytes(answer: unknown): number {
  if (Array.isArray(answer) && answer.every((piece) => piece instanceof Uint8Array)) {
    return answer.reduce((sum: number, piece: Uint8Array) => sum + piece.byteLength, 0);
  }
  return jsonBytes(answer);
}

/**
 * What a tools/call's row needs once its answer is out: the sizes in and out and the row's verdict, never the
 * payloads themselves. A Code Mode run keeps one for each of its (up to 50) inner calls until the run ends, so
 * holding the arguments, the answer and the pipeline's result (up to a MiB each) would hold them all at once.
 */
export interface RecordedToolCall {
  requestId: string;
  callIndex: number | null;
  name: string;
  bytesIn: number;
  bytesOut: number;
  verdict: { outcome: CallRowOutcome; code: string | null };
  run: Omit<ToolCallRun, "outcome" | "approved">;
}

/** A finished tools/call reduced to what its row needs (see RecordedToolCall). */
export function recordToolCall(
  call: { requestId: string; callIndex: number | null; name: string; arguments: unknown; answer: unknown },
  run: ToolCallRun,
): RecordedToolCall {
  const { outcome: _outcome, approved: _approved, ...kept } = run;
  return {
    requestId: call.requestId,
    callIndex: call.callIndex,
    name: call.name,
    bytesIn: jsonBytes(call.arguments),
    bytesOut: answerBytes(call.answer),
    verdict: toolCallOutcome(run.outcome, run.approved),
    run: kept,
  };
}

/** The call row of a tools/call (direct or a Code Mode inner call). */
export function toolCallRow(caller: CallActor, call: RecordedToolCall, stages: StageRow[]): CallRow {
  const { outcome, code } = call.verdict;
  const { run } = call;
  const { timing } = run;
  return {
    ...caller,
    requestId: call.requestId,
    kind: "tools/call",
    callIndex: call.callIndex,
    startedAt: new Date(timing.startedAt).toISOString(),
    serviceId: run.tool?.serviceId ?? null,
    toolUid: run.tool?.uid ?? null,
    name: cutName(call.name),
    item: null,
    outcome,
    code,
    durationMs: timing.durationMs,
    gatewayMs: Math.max(0, timing.durationMs - timing.hooksMs - timing.upstreamMs),
    hooksMs: timing.hooksMs,
    upstreamMs: timing.upstreamMs,
    upstreamOffsetMs: timing.upstreamOffsetMs,
    bytesIn: call.bytesIn,
    bytesOut: call.bytesOut,
    revisionId: run.revisionId,
    shadow: shadowVerdict(stages),
    innerCalls: null,
    program: null,
  };
}

/** The call row of a resources/read or prompts/get. */
export function contentCallRow(
  caller: CallActor,
  call: {
    requestId: string;
    kind: Extract<CallKind, "resources/read" | "prompts/get">;
    name: string;
    item: string;
    serviceId: string | null;
    startedAt: number;
    durationMs: number;
    upstreamMs: number;
    outcome: CallRowOutcome;
    code: string | null;
    request: unknown;
    answer: unknown;
  },
): CallRow {
  return {
    ...caller,
    requestId: call.requestId,
    kind: call.kind,
    callIndex: null,
    startedAt: new Date(call.startedAt).toISOString(),
    serviceId: call.serviceId,
    toolUid: null,
    name: cutName(call.name),
    item: cutName(call.item),
    outcome: call.outcome,
    code: call.code,
    durationMs: call.durationMs,
    gatewayMs: Math.max(0, call.durationMs - call.upstreamMs),
    hooksMs: 0,
    upstreamMs: call.upstreamMs,
    upstreamOffsetMs: call.upstreamMs ? 0 : null,
    bytesIn: jsonBytes(call.request),
    bytesOut: jsonBytes(call.answer),
    revisionId: null,
    shadow: null,
    innerCalls: null,
    program: null,
  };
}

/** The call row of one run_code: metadata only, the program as a digest and a size (its text may hold anything). */
export function codeRunRow(
  caller: CallActor,
  run: {
    requestId: string;
    startedAt: number;
    durationMs: number;
    outcome: "ok" | "error" | "cancelled" | "timed_out";
    code: string | null;
    innerCalls: number;
    program: { sha256: string; bytes: number } | null;
    arguments: unknown;
    answer: unknown;
  },
): CallRow {
  return {
    ...caller,
    requestId: run.requestId,
    kind: "run_code",
    callIndex: null,
    startedAt: new Date(run.startedAt).toISOString(),
    serviceId: null,
    toolUid: null,
    name: "run_code",
    item: null,
    outcome: run.outcome,
    code: run.code,
    durationMs: run.durationMs,
    gatewayMs: run.durationMs,
    hooksMs: 0,
    upstreamMs: 0,
    upstreamOffsetMs: null,
    bytesIn: jsonBytes(run.arguments),
    bytesOut: jsonBytes(run.answer),
    revisionId: null,
    shadow: null,
    innerCalls: run.innerCalls,
    program: run.program,
  };
}

/**
 * The largest message the call path sends. A Queues message holds at most 128 KB; a call's stage rows could carry
 * several 32 KiB details, so past this the largest details give way to a `limited` marker.
 */
export const CALL_LOG_MESSAGE_BYTES = 120 * 1024;

/**
 * One call's queue message. Details stay only when payload capture allows them, each within the row cap
 * (LOG_DETAIL_ROW_BYTES), and all of them within CALL_LOG_MESSAGE_BYTES.
 */
export function callLogMessage(call: CallRow, stages: StageRow[], captureDetails: boolean): CallLogMessage {
  const bounded = stages.map((row): StageRow => {
    const { details, ...metadata } = row;
    if (!captureDetails || !details || !Object.keys(details).length) return metadata;
    const { json, truncated } = boundedDetailsJson(details);
    return { ...metadata, details: truncated ? (JSON.parse(json) as Record<string, unknown>) : details };
  });
  let size = jsonBytes({ v: 1, call, stages: bounded });
  const bySize = bounded
    .map((row, index) => ({ index, bytes: jsonBytes(row.details) }))
    .filter((entry) => entry.bytes > 0)
    .sort((a, b) => b.bytes - a.bytes);
  for (const { index, bytes } of bySize) {
    if (size <= CALL_LOG_MESSAGE_BYTES) break;
    const marker = { limited: { code: "log_details_truncated", bytes } };
    bounded[index] = { ...bounded[index]!, details: marker };
    size -= bytes - jsonBytes(marker);
  }
  return { v: 1, call, stages: bounded };
}

/**
 * The call row of a tools/call no upstream tool is behind: describe_tools, an inner call to a name that matches no
 * tool or made after the caller's key went, a call the gateway failed on.
 */
export function gatewayCallRow(
  caller: CallActor,
  call: {
    requestId: string;
    callIndex: number | null;
    name: string;
    bytesIn: number;
    bytesOut: number;
    startedAt: number;
    durationMs: number;
    outcome: CallRowOutcome;
    code: string | null;
  },
): CallRow {
  return {
    ...caller,
    requestId: call.requestId,
    kind: "tools/call",
    callIndex: call.callIndex,
    startedAt: new Date(call.startedAt).toISOString(),
    serviceId: null,
    toolUid: null,
    name: cutName(call.name),
    item: null,
    outcome: call.outcome,
    code: call.code,
    durationMs: call.durationMs,
    gatewayMs: call.durationMs,
    hooksMs: 0,
    upstreamMs: 0,
    upstreamOffsetMs: null,
    bytesIn: call.bytesIn,
    bytesOut: call.bytesOut,
    revisionId: null,
    shadow: null,
    innerCalls: null,
    program: null,
  };
}
