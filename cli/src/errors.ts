import { ApiRequestError, ApiUnreachableError } from "./api/client.ts";

/** Documented exit codes (cli/README.md). */
export const EXIT = { ok: 0, refused: 1, usage: 2, conflict: 3, rateLimited: 4, unavailable: 5 } as const;
export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

/** A failure the CLI explains itself, with the exit code it ends with. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: ExitCode,
    readonly code = "cli_error",
    readonly details?: Record<string, unknown>,
  ) {
    super(message);
    this.name = "CliError";
  }
}

/** How to fix what the API refused, by its stable code. */
const HINTS: Record<string, string> = {
  unauthorized: "check RAYRUN_API_KEY (or --api-key): the key may be mistyped or revoked",
  forbidden: "use a key with the scope named above",
  precondition_failed: "the draft changed on the server since you pulled it: run `rayrun hooks pull`, merge, and push again (or --force)",
  rate_limited: "wait and retry",
  compile_failed: "fix the diagnostics above",
};

/** Any error as the CLI reports it: message, stable code, exit code. */
export function describeFailure(error: unknown): { message: string; code: string; exitCode: ExitCode; details?: Record<string, unknown> } {
  if (error instanceof CliError) return { message: error.message, code: error.code, exitCode: error.exitCode, details: error.details };
  if (error instanceof ApiUnreachableError) return { message: error.message, code: "api_unreachable", exitCode: EXIT.unavailable };
  if (error instanceof ApiRequestError) {
    const hint = HINTS[error.code];
    let message = `${error.message} (${error.code}, HTTP ${error.status})`;
    if (error.code === "forbidden" && typeof error.details?.required === "string") message += `; missing scope: ${error.details.required}`;
    if (error.retryAfter) message += `; retry after ${error.retryAfter} s`;
    if (hint) message += `\n  hint: ${hint}`;
    return { message, code: error.code, exitCode: exitCodeForStatus(error.status), details: error.details };
  }
  return { message: error instanceof Error ? error.message : String(error), code: "internal", exitCode: EXIT.unavailable };
}

function exitCodeForStatus(status: number): ExitCode {
  if (status === 409 || status === 412 || status === 428) return EXIT.conflict;
  if (status === 429) return EXIT.rateLimited;
  if (status >= 500) return EXIT.unavailable;
  return EXIT.refused;
}
