/** Bounds of one `run_code` run (docs/limits.md and docs/code-mode.md). Tests may lower them, never raise them. */
export interface CodeModeLimits {
  /** Inner tool calls per run; the next one ends the run with `too_many_tool_calls`. */
  toolCalls: number;
  /** Inner calls running at once; later ones wait in order, they do not fail. */
  callsInFlight: number;
  /** Wall time of the whole run, waiting on tools included (`wall_time_exceeded`). */
  wallTimeMs: number;
  /** UTF-8 bytes of the program's result as JSON (`output_too_large`). */
  resultBytes: number;
  /** console.log lines per run (`log_limit`). */
  logLines: number;
  /** UTF-8 bytes of one inner call's arguments as JSON (`invalid_arguments`). */
  argumentsBytes: number;
}

const MiB = 1024 * 1024;

export const CODE_MODE_LIMITS: Readonly<CodeModeLimits> = Object.freeze({
  toolCalls: 50,
  callsInFlight: 8,
  wallTimeMs: 60_000,
  resultBytes: 1 * MiB,
  logLines: 100,
  argumentsBytes: 1 * MiB,
});
