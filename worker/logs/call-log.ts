/**
 * The shapes of the call log: a call row for every call, the stage rows of its hook runs and refusals, and the
 * queue message that carries one call's rows from the call path to the consumer. Rows are built by
 * `worker/calls/call-rows.ts`; where they are stored is `worker/logs/log-store.ts`.
 */
import type { CALL_KINDS, CALL_OUTCOMES } from "../../schema/api/logs.ts";

export type CallKind = (typeof CALL_KINDS)[number];
export type CallRowOutcome = (typeof CALL_OUTCOMES)[number];

/** A shadow revision's verdict on the call: same as active, differed, or did not run (outdated, unavailable). */
export type ShadowVerdict = "same" | "differed" | "not_run";

/** One row of `call_logs`: a hook stage run, or a refusal/failure before or at dispatch. */
export interface StageRow {
  toolUid: string;
  requestId: string;
  stage: "before" | "after" | "pre_dispatch" | "upstream";
  channel: "active" | "shadow";
  outcome: string;
  code: string | null;
  durationMs: number;
  revisionId: string | null;
  shadowDiffered: boolean | null;
  /** A Code Mode inner call's 0-based index in its run (whose request id the row carries); absent on direct calls. */
  callIndex?: number | null;
  /** When the stage started, in ms after its call started (for the trace's child spans). */
  offsetMs?: number;
  /** Hook-supplied or payload-derived text; dropped unless the capture policy allows it. */
  details?: Record<string, unknown>;
}

/** One row of `calls`. */
export interface CallRow {
  workspaceId: string;
  requestId: string;
  kind: CallKind;
  /** A Code Mode inner call's index in its run; null for every other call. */
  callIndex: number | null;
  startedAt: string;
  actor: string;
  keyId: string;
  grantedBy: string | null;
  profileId: string | null;
  serviceId: string | null;
  toolUid: string | null;
  /** The public name called: the tool, the prompt, or the gateway resource URI. */
  name: string;
  /** Content only: the upstream URI or prompt name. */
  item: string | null;
  outcome: CallRowOutcome;
  code: string | null;
  durationMs: number;
  gatewayMs: number;
  hooksMs: number;
  upstreamMs: number;
  /** When the upstream request started, in ms after the call started; null when none was made. */
  upstreamOffsetMs: number | null;
  bytesIn: number;
  bytesOut: number;
  revisionId: string | null;
  shadow: ShadowVerdict | null;
  /** run_code only. */
  innerCalls: number | null;
  program: { sha256: string; bytes: number } | null;
}

/** The queue message of one call: its row and its stage rows, details already dropped unless capture allows them. */
export interface CallLogMessage {
  v: 1;
  call: CallRow;
  stages: StageRow[];
}

/**
 * The queue message of several calls (call-log.send.ts): the messages of the calls one isolate logged on one lane
 * within a short wait, so the call path pays one queue send per packet, not per call. The consumer reads packets
 * and single-call messages alike.
 */
export interface CallLogPacket {
  v: 1;
  packet: CallLogMessage[];
}

/** Characters of a called name or content item a row keeps. */
export const CALL_NAME_CHARS = 512;

export const cutName = (name: string) => (name.length <= CALL_NAME_CHARS ? name : `${name.slice(0, CALL_NAME_CHARS - 1)}…`);
