// Readable sentences for the API's hook error codes: what happened and what to
// do next, with the server's own message kept (it names the exact bound or stage).
import { ApiRequestError, describeError } from "../api.ts";

const ADVICE: Record<string, (error: ApiRequestError) => string> = {
  precondition_failed: () => "Someone saved a newer draft since you loaded it.",
  precondition_required: () => "The save did not say which draft it was made against; reload the draft.",
  not_tested: (error) => {
    const stages = Array.isArray(error.details?.untestedStages) ? error.details.untestedStages.join(" and ") : "every stage";
    return `Run a passing test of ${stages} on this exact draft first (a later failing test withdraws an earlier pass).`;
  },
  incompatible_revision: () => "That revision was built for an earlier definition of the tool; create a new revision.",
  service_deleted: () => "The tool's service was deleted: its hook history can be read, exported or reset, not changed.",
  hook_reset: () => "The hook was reset while this ran; reload.",
  compile_failed: () => "The hook does not compile; the problems are marked in the editor.",
  source_too_large: () => "The source is over the 100 KiB limit.",
  config_too_large: () => "The config is over the 16 KiB limit.",
  compiled_too_large: () => "The compiled hook is over the size limit.",
  history_full: () => "The workspace's draft history is full; export and reset a hook to free space.",
  deployed_code_full: () => "The workspace's deployed code allowance is full; remove a deployment first.",
  rate_limited: (error) =>
    `Too many ${error.details?.quota === "compile_attempts" ? "compile attempts" : "saves"} this hour${
      error.retryAfter ? `; try again in ${error.retryAfter} s` : ""
    }.`,
  compiler_unavailable: () => "The compiler is restarting; try again in a moment.",
  declarations_too_large: () => "The tool's schemas are too large to generate type declarations; the editor cannot type-check this hook.",
  not_found: () => "Not found; it may have been removed or reset.",
  forbidden: () => "Your role cannot do this.",
};

/** "What happened. Server message (code)". */
export function hookErrorMessage(error: unknown): string {
  if (!(error instanceof ApiRequestError)) return describeError(error);
  const advice = ADVICE[error.code]?.(error);
  return advice ? `${advice} ${describeError(error)}` : describeError(error);
}
