import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import type { JsonObject } from "../../schema/hooks/contract.ts";
import { utf8Length } from "../hooks/isolate/isolate.text.ts";
import { sha256Hex } from "../lib/crypto.ts";
import type { CodeRunEntry } from "../logs/code-runs.store.ts";
import { ERROR_META_KEY } from "../mcp/mcp.results.ts";

/**
 * The `code_runs` row of one run_code, from its arguments and its answer: how
 * it ended and with which code, how many tool calls it made, and the program
 * as a digest and a size (its text may hold anything, so it is never stored).
 */
export async function codeRunEntry(
  caller: { keyId: string; actor: string; requestId: string },
  args: JsonObject,
  result: CallToolResult,
  innerCalls: number,
  durationMs: number,
): Promise<CodeRunEntry> {
  const error = result._meta?.[ERROR_META_KEY] as { code?: unknown } | undefined;
  const program = typeof args.code === "string" ? args.code : null;
  return {
    ...caller,
    outcome: result.isError ? "error" : "ok",
    code: result.isError && typeof error?.code === "string" ? error.code : null,
    innerCalls,
    program: program === null ? null : { sha256: await sha256Hex(program), bytes: utf8Length(program) },
    durationMs,
  };
}
