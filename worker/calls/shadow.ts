import type { JsonValue } from "../../schema/hooks/contract.ts";
import { runStage, type StageRun } from "../hooks/isolate/index.ts";
import { canonicalJson } from "../lib/crypto.ts";
import type { CallLogEntry } from "../logs/logs.store.ts";
import type { DeployedRevision } from "./deployment.ts";
import { stageLog, type CallRequest, type CallTrace } from "./pipeline.ts";

/**
 * What a stage decided, comparable across revisions: outcome, returned value,
 * error code. A revision without the stage passed its input through unchanged.
 */
function verdict(run: StageRun | null, passThrough: { action: "continue" | "return" } & Record<string, unknown>): string {
  if (!run) return canonicalJson({ outcome: passThrough.action, value: passThrough, error: null });
  return canonicalJson({ outcome: run.outcome, value: run.value ?? null, error: run.error?.code ?? null });
}

/**
 * Runs the shadow revision's stages on the inputs the active path saw, after the
 * live response, and logs whether each differed from active. It never touches the
 * live call and never calls the upstream; a failing shadow is only a log row.
 */
export async function runShadow(call: CallRequest, shadow: DeployedRevision, trace: CallTrace): Promise<void> {
  const entries: CallLogEntry[] = [];
  const context = { ...trace.context, config: shadow.config };
  if (trace.before && shadow.stages.includes("before")) {
    const run = await runStage({ bundle: shadow.bundle, stage: "before", input: { arguments: trace.before.input }, context });
    const active = verdict(trace.before.run, { action: "continue", arguments: trace.before.input });
    entries.push(stageLog(call, "before", shadow, run, "shadow", verdict(run, { action: "continue" }) !== active));
  }
  if (trace.after && shadow.stages.includes("after")) {
    const input = { arguments: trace.after.arguments, result: trace.after.result as JsonValue };
    const run = await runStage({ bundle: shadow.bundle, stage: "after", input, context });
    const active = verdict(trace.after.run, { action: "return", result: trace.after.result });
    entries.push(stageLog(call, "after", shadow, run, "shadow", verdict(run, { action: "return" }) !== active));
  }
  await call.record(entries);
}
