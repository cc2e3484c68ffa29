import { engineErrorCode, type ThrownValue } from "../hooks/isolate/isolate.session.ts";
import type { IsolateError } from "../hooks/isolate/isolate.types.ts";
import type { CodeModeError } from "./codemode.errors.ts";
import type { CodeModeLimits } from "./codemode.limits.ts";

/** The errors a run ends with, in words for the agent. */

/** Longest thrown message a run's `exception` repeats; a longer one is cut and ends with "…". */
export const THROWN_MESSAGE_MAX_CHARS = 1000;

/** The run ended from outside: its client cancelled, or its wall time passed. */
export function endedError(signal: AbortSignal, limits: CodeModeLimits): CodeModeError {
  if (signal.reason === "cancelled") return { code: "cancelled", message: "The client cancelled the run" };
  return {
    code: "wall_time_exceeded",
    message: `The run took longer than ${limits.wallTimeMs / 1000} s; calls still in flight were cancelled`,
    details: { limit: limits.wallTimeMs },
  };
}

/** The workspace is over its share of Code Mode's compute in this Worker isolate (docs/code-mode.md, "Sharing"). */
export function busyError(message: string, retryAfterSeconds: number, details: Record<string, unknown> = {}): CodeModeError {
  return { code: "code_mode_busy", message, details: { ...details, retryAfterSeconds } };
}

/**
 * What the program threw, as read with none of its code running (isolate.session.ts `readThrown`). An engine
 * error keeps its code (a program can throw a look-alike only of a failure it can cause for real).
 */
export function thrownError(thrown: ThrownValue, limits: CodeModeLimits): CodeModeError {
  const name = thrown.kind === "object" ? (thrown.name ?? "Error") : "Error";
  const message =
    thrown.message.length > THROWN_MESSAGE_MAX_CHARS ? `${thrown.message.slice(0, THROWN_MESSAGE_MAX_CHARS)}…` : thrown.message;
  const text = `${name}: ${message}`;
  const engine = engineErrorCode(text);
  if (engine) return isolateError({ code: engine, message: text }, limits);
  return { code: "exception", message: `The program threw ${text}`, details: { name, message } };
}

/** An isolate fault as the run's error. */
export function isolateError(fault: IsolateError | undefined, limits: CodeModeLimits, bytes?: number): CodeModeError {
  if (!fault) return { code: "exception", message: "The program produced no result" };
  switch (fault.code) {
    case "timeout":
      return { code: "timeout", message: "The program used up its work budget (time waiting on tools does not count)" };
    case "memory_exceeded":
      return { code: "memory_exceeded", message: "The program ran out of memory" };
    case "stack_overflow":
      return { code: "stack_overflow", message: "The program overflowed its stack" };
    case "output_too_large":
      return {
        code: "output_too_large",
        message: `The program's result is larger than ${limits.resultBytes} bytes as JSON`,
        details: { limit: limits.resultBytes, ...(bytes !== undefined ? { bytes } : {}) },
      };
    case "invalid_return":
      return { code: "invalid_return", message: `The program's result is not JSON: ${fault.message}` };
    case "unresolved_promise":
      return { code: "unresolved_promise", message: "The program awaited a promise that can never settle" };
    case "log_limit":
      return { code: "log_limit", message: `The program wrote ${fault.message}`, details: { limit: limits.logLines } };
    case "exception":
      return { code: "exception", message: `The program failed: ${fault.message}` };
  }
}
