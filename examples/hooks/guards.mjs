// Callable handlers: each gets the event and returns an answer, text (context) or nothing (allow).

export function capResults(event) {
  const limit = event.tool_input.max_results;
  if (typeof limit === "number" && limit <= 50) return undefined;
  return { decision: "rewrite", updated_input: { ...event.tool_input, max_results: 50 }, additional_context: "capped at 50 results" };
}

export function provenance(event) {
  return event.error ? undefined : `${event.tool_name} answered in run ${event.run_id}`;
}

export function failedChecks(event) {
  const failed = event.report?.failed_checks ?? [];
  if (failed.length === 0) return undefined;
  return { decision: "deny", reason: `${failed.length} check(s) failed`, findings: failed.map((check) => ({ check })) };
}
