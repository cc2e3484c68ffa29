import type { CallLogMessage } from "../logs/call-log.ts";
import { callLogMessage, toolCallRow, type CallActor } from "./call-rows.ts";
import type { ToolCallRun } from "./outcome.ts";
import { runShadow } from "./shadow.ts";

/**
 * A tools/call's queue message, built after the response: the shadow revision runs first (best-effort, on the
 * inputs active saw), so the one message holds the call row, the live stage rows and the shadow's rows.
 */
export async function toolCallMessage(
  caller: CallActor,
  call: { requestId: string; callIndex: number | null; name: string; arguments: unknown; answer: unknown },
  run: ToolCallRun,
): Promise<CallLogMessage> {
  let shadowRows: ToolCallRun["logs"] = [];
  if (run.shadow) {
    try {
      shadowRows = await runShadow(run.shadow);
    } catch (error) {
      // The live call's rows still go: a broken shadow run costs only its own rows.
      console.error("shadow run failed", error);
    }
  }
  const stages = [...run.logs, ...shadowRows].map((row) => (call.callIndex === null ? row : { ...row, callIndex: call.callIndex }));
  return callLogMessage(toolCallRow(caller, call, run, stages), stages, run.captureDetails);
}
