import { ISOLATE_ERROR_CODES } from "../hooks/isolate/isolate.types.ts";

/**
 * Codes Code Mode itself adds to the `isError` vocabulary: the run's bounds and
 * failures, and the two an inner call can reject with besides the direct
 * call's own codes. docs/errors.md's Code Mode error table is tested against this
 * list. An inner call's gateway refusal (`approval_required`, …) or hook reason
 * reaches the program, and ends an uncaught run, with its own code.
 */
export const CODE_MODE_ERROR_CODES = [
  "compile_failed",
  "compiler_unavailable",
  // A program fails inside the isolate exactly as a hook does.
  ...ISOLATE_ERROR_CODES,
  "too_many_tool_calls",
  "wall_time_exceeded",
  "code_mode_busy",
  "unknown_tool",
  "unauthorized",
  "upstream_error",
  "declarations_too_large",
] as const;
export type CodeModeErrorCode = (typeof CODE_MODE_ERROR_CODES)[number];

/** An error as the program sees it (a rejected tool call) and as run_code returns it (`_meta["dev.rayrun/error"]`). */
export interface CodeModeError {
  /** A Code Mode code, a gateway refusal code, or a hook's reason. */
  code: string;
  message: string;
  details?: Record<string, unknown>;
}
