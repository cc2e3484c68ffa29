import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import type { JsonObject } from "../../schema/hooks/contract.ts";
import { toolCallMessage } from "../calls/call-record.ts";
import { callLogMessage, codeRunRow, gatewayCallRow, type CallActor } from "../calls/call-rows.ts";
import { utf8Length } from "../hooks/isolate/isolate.text.ts";
import { sha256Hex } from "../lib/crypto.ts";
import type { CallLogMessage } from "../logs/call-log.ts";
import { refusalCode } from "../mcp/mcp.results.ts";
import { allowanceMeter } from "./codemode.sandbox.ts";
import type { InnerCall } from "./codemode.tools.ts";

/**
 * The queue messages of one run_code, built after the response: a call row for each inner call (under the run's
 * request id, with its index) and the run's own row, which says how it ended and with which code, how many tool
 * calls it made, and the program as a digest and a size (its text may hold anything, so it is never stored).
 */
export async function codeRunMessages(
  caller: CallActor,
  run: { requestId: string; startedAt: number; durationMs: number },
  args: JsonObject,
  result: CallToolResult,
  inner: InnerCall[],
): Promise<CallLogMessage[]> {
  const messages: CallLogMessage[] = [];
  // The calls' shadow stages are the workspace's Code Mode compute, as their live ones are.
  const meter = allowanceMeter(caller.workspaceId);
  for (const call of inner) {
    const { recorded } = call;
    if ("run" in recorded) messages.push(await toolCallMessage(caller, recorded, meter));
    else {
      // No tool by that name (hidden, as on /mcp), or the caller's key went during the run (refused).
      const unknown = call.code === "unknown_tool";
      const row = gatewayCallRow(caller, {
        requestId: run.requestId,
        callIndex: call.index,
        name: call.tool,
        ...recorded,
        startedAt: call.startedAt,
        durationMs: call.durationMs,
        outcome: unknown ? "hidden" : "refused",
        code: unknown ? null : call.code,
      });
      messages.push(callLogMessage(row, [], false));
    }
  }
  const program = typeof args.code === "string" ? args.code : null;
  const code = refusalCode(result);
  const row = codeRunRow(caller, {
    ...run,
    outcome: runOutcome(result.isError === true, code),
    code,
    innerCalls: inner.length,
    program: program === null ? null : { sha256: await sha256Hex(program), bytes: utf8Length(program) },
    arguments: args,
    answer: result,
  });
  messages.push(callLogMessage(row, [], false));
  return messages;
}

/** How a run ended, as its row records it: a run its client cancelled or that ran out of wall time is no program failure. */
function runOutcome(failed: boolean, code: string | null): "ok" | "error" | "cancelled" | "timed_out" {
  if (!failed) return "ok";
  if (code === "cancelled") return "cancelled";
  if (code === "wall_time_exceeded") return "timed_out";
  return "error";
}
