import type { JsonValue } from "../../schema/hooks/contract.ts";
import { runStage, type StageInput, type StageRun } from "../hooks/isolate/index.ts";
import { stageContext, type StageCall } from "../hooks/stage-call.ts";
import { canonicalJson } from "../lib/crypto.ts";
import type { CallLogEntry } from "../logs/logs.store.ts";
import type { DeployedRevision } from "./deployment.ts";
import { logEntry } from "./outcome.ts";
import { stageRunLog } from "./stage-log.ts";

/** One stage as the active path ran it: the exact input, and what active decided (null: active has no such stage). */
export interface ObservedStage {
  input: StageInput;
  active: StageRun | null;
}

/** What the caller runs after the live response: the shadow revision on the inputs the active path saw. */
export interface ShadowWork {
  call: StageCall;
  revision: DeployedRevision;
  /** The tool's current upstream definition hash: a shadow built for another one must not run. */
  definitionHash: string;
  before?: ObservedStage;
  after?: ObservedStage;
}

/**
 * What a stage decided, comparable across revisions: outcome, returned value,
 * error code. A revision without the stage passed its input through unchanged.
 */
function verdict(run: StageRun | null, passThrough: { action: "continue" | "return" } & Record<string, unknown>): string {
  if (!run) return canonicalJson({ outcome: passThrough.action, value: passThrough, error: null });
  return canonicalJson({ outcome: run.outcome, value: run.value ?? null, error: run.error?.code ?? null });
}

/**
 * Runs the shadow revision's stages on the inputs the active path saw and
 * returns one log row per stage, saying whether it differed from active. It
 * never touches the live call and never calls the upstream; a failing shadow is
 * only a row. A shadow compiled against an earlier upstream definition does not
 * run: its row says `hook_outdated`, as an active one would refuse the call.
 */
export async function runShadow(work: ShadowWork): Promise<CallLogEntry[]> {
  const { call, revision } = work;
  if (revision.definitionHash !== work.definitionHash) {
    return [
      logEntry(
        { toolUid: call.tool.uid, requestId: call.requestId },
        { stage: "pre_dispatch", channel: "shadow", outcome: "refused", code: "hook_outdated", revisionId: revision.revisionId },
      ),
    ];
  }
  const context = stageContext(call, revision.config);
  const entries: CallLogEntry[] = [];
  if (work.before && revision.stages.includes("before")) {
    const { input, active } = work.before;
    const run = await runStage({ bundle: revision.bundle, stage: "before", input, context });
    const differed = verdict(run, { action: "continue" }) !== verdict(active, { action: "continue", arguments: input.arguments });
    entries.push(stageRunLog(call, "before", revision, run, "shadow", differed));
  }
  if (work.after && revision.stages.includes("after")) {
    const { input, active } = work.after;
    const run = await runStage({ bundle: revision.bundle, stage: "after", input, context });
    const differed = verdict(run, { action: "return" }) !== verdict(active, { action: "return", result: input.result as JsonValue });
    entries.push(stageRunLog(call, "after", revision, run, "shadow", differed));
  }
  return entries;
}
