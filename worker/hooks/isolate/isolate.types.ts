import type { HookLogLevel, HookStage, JsonObject } from "../../../schema/hooks/contract.ts";

/** Stable error codes of a failed isolate run. Every one of them fails the call closed. */
export const ISOLATE_ERROR_CODES = [
  "timeout",
  "memory_exceeded",
  "stack_overflow",
  "exception",
  "invalid_return",
  "output_too_large",
  "unresolved_promise",
  "log_limit",
] as const;
export type IsolateErrorCode = (typeof ISOLATE_ERROR_CODES)[number];

export interface IsolateError {
  code: IsolateErrorCode;
  message: string;
}

export interface HookLog {
  level: HookLogLevel;
  message: string;
  data?: unknown;
}

export interface IsolateUsage {
  /** Work spent, in interrupt polls (natively looping built-ins are charged in poll equivalents). */
  polls: number;
  /** Size of the QuickJS wasm memory at the end of the run. */
  wasmBytes: number;
  durationMs: number;
  /** UTF-8 bytes of the returned value's JSON copied out of the isolate (0 if none). */
  outputBytes: number;
}

/** Host-side call metadata; the isolate builds the hook's `context` from it. */
export interface StageContextInput {
  calledAt: string;
  requestId: string;
  workspaceUid: string;
  connectionId: string;
  toolUid: string;
  toolName: string;
  config: JsonObject;
}

export type StageName = HookStage;
