import type { StageRun } from "../hooks/isolate/index.ts";
import type { StageCall } from "../hooks/stage-call.ts";
import type { CallLogEntry } from "../logs/logs.store.ts";
import type { DeployedRevision } from "./deployment.ts";
import { logEntry } from "./outcome.ts";

/**
 * The row of one stage run, active or shadow. Its details (the hook's reason and
 * message, the error text, the hook's logs) are kept only where payload capture allows.
 */
export function stageRunLog(
  call: StageCall,
  stage: "before" | "after",
  revision: DeployedRevision,
  run: StageRun,
  channel: "active" | "shadow" = "active",
  shadowDiffered: boolean | null = null,
): CallLogEntry {
  const value = run.value as { reason?: string; message?: string } | undefined;
  return logEntry(
    { toolUid: call.tool.uid, requestId: call.requestId },
    {
      stage,
      channel,
      outcome: run.outcome,
      code: run.error?.code ?? null,
      durationMs: run.usage.durationMs,
      revisionId: revision.revisionId,
      shadowDiffered,
      details: {
        ...(value?.reason ? { reason: value.reason } : {}),
        ...(value?.message ? { message: value.message } : {}),
        ...(run.error ? { error: run.error.message } : {}),
        ...(run.logs.length ? { logs: run.logs } : {}),
      },
    },
  );
}
