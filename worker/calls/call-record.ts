import type { CallLogMessage, StageRow } from "../logs/call-log.ts";
import { callLogMessage, toolCallRow, type CallActor, type RecordedToolCall } from "./call-rows.ts";
import type { StageMeter } from "../hooks/isolate/index.ts";
import { runShadow } from "./shadow.ts";

/**
 * A tools/call's queue message, built after the response: the shadow revision runs first (best-effort, on the
 * inputs active saw), so the one message holds the call row, the live stage rows and the shadow's rows. A Code Mode
 * inner call's shadow is charged to `meter` (shadow.ts).
 */
export async function toolCallMessage(caller: CallActor, call: RecordedToolCall, meter?: StageMeter): Promise<CallLogMessage> {
  const { run } = call;
  let shadowRows: StageRow[] = [];
  if (run.shadow) {
    try {
      shadowRows = await runShadow(run.shadow, meter);
    } catch (error) {
      // The live call's rows still go: a broken shadow run costs only its own rows.
      console.error("shadow run failed", error);
    }
  }
  const stages = [...run.logs, ...shadowRows].map((row) => (call.callIndex === null ? row : { ...row, callIndex: call.callIndex }));
  return callLogMessage(toolCallRow(caller, call, stages), stages, run.captureDetails);
}
