import type { JsonValue } from "../../schema/hooks/contract.ts";
import { runStage, type StageMeter, type StageRun } from "../hooks/isolate/index.ts";
import { stageContext } from "../hooks/stage-call.ts";
import { canonicalJson } from "../lib/crypto.ts";
import type { StageRow } from "../logs/call-log.ts";
import { stageRow, stageRunRow } from "./call-rows.ts";
import type { ShadowWork } from "./outcome.ts";

/** What a stage decided, comparable across revisions: outcome, returned value, error code. */
interface Verdict {
  outcome: string;
  value: unknown;
  error: string | null;
}

/** A revision without the stage passed its input through unchanged. */
function verdict(run: StageRun | null, passThrough: { action: "continue" | "return" } & Record<string, unknown>): Verdict {
  if (!run) return { outcome: passThrough.action, value: passThrough, error: null };
  return { outcome: run.outcome, value: run.value ?? null, error: run.error?.code ?? null };
}

/**
 * Runs the shadow revision's stages on the inputs the active path saw and
 * returns one log row per stage, saying whether it differed from active (and,
 * for the row's captured details, both verdicts, so an admin can diff them). It
 * never touches the live call and never calls the upstream; a failing shadow is
 * only a row. A shadow compiled against an earlier upstream definition does not
 * run: its row says `hook_outdated`, as an active one would refuse the call.
 * A Code Mode run's inner calls charge their shadow stages to the workspace's
 * compute allowance like their live ones (`meter`, codemode.sandbox.ts), as a
 * run's calls are many on one allowance. While it is spent a stage does not
 * run: its row is `refused`, `code_mode_busy`.
 */
export async function runShadow(work: ShadowWork, meter?: StageMeter): Promise<StageRow[]> {
  const { call, revision } = work;
  if (revision.definitionHash !== work.definitionHash) {
    return [
      stageRow(
        { toolUid: call.tool.uid, requestId: call.requestId },
        { stage: "pre_dispatch", channel: "shadow", outcome: "refused", code: "hook_outdated", revisionId: revision.revisionId },
      ),
    ];
  }
  const context = stageContext(call, revision.config);
  const entries: StageRow[] = [];
  const compared = (run: StageRun, active: Verdict) => {
    const shadow = verdict(run, { action: "continue" });
    const differed = canonicalJson(shadow) !== canonicalJson(active);
    return { channel: "shadow" as const, shadowDiffered: differed, ...(differed ? { comparison: { active, shadow } } : {}) };
  };
  // No isolate could be had for the shadow (this Worker's wasm budget had no room): it did not run, as when its
  // bundle cannot be read, and nothing is compared.
  const notRun = (): StageRow[] => [
    ...entries,
    stageRow(
      { toolUid: call.tool.uid, requestId: call.requestId },
      { stage: "pre_dispatch", channel: "shadow", outcome: "refused", code: "hook_unavailable", revisionId: revision.revisionId },
    ),
  ];
  const busy = (stage: "before" | "after") =>
    stageRow(
      { toolUid: call.tool.uid, requestId: call.requestId },
      { stage, channel: "shadow", outcome: "refused", code: "code_mode_busy", revisionId: revision.revisionId },
    );
  const metered = (stage: "before" | "after", input: Parameters<typeof runStage>[0]["input"]) =>
    runStage({ bundle: revision.bundle, stage, input, context, meter });
  if (work.before && revision.stages.includes("before")) {
    const { input, active } = work.before;
    const run = await metered("before", input);
    if (run.busy) return [busy("before")];
    if (run.unavailable) return notRun();
    entries.push(
      stageRunRow(call, "before", revision, run, compared(run, verdict(active, { action: "continue", arguments: input.arguments }))),
    );
  }
  if (work.after && revision.stages.includes("after")) {
    const { input, active } = work.after;
    const run = await metered("after", input);
    if (run.busy) return [...entries, busy("after")];
    if (run.unavailable) return notRun();
    entries.push(
      stageRunRow(call, "after", revision, run, compared(run, verdict(active, { action: "return", result: input.result as JsonValue }))),
    );
  }
  return entries;
}
