import { GATEWAY_META_PREFIX } from "../lib/gateway-meta.ts";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";

/** Where a refusal's machine-readable code travels in a tool result. */
export const ERROR_META_KEY = `${GATEWAY_META_PREFIX}error`;

/**
 * A refusal or failure the agent should see and can adapt to, as an `isError`
 * tool result: readable text for the model, and a stable code in `_meta`.
 */
export function refusal(code: string, message: string, details?: Record<string, unknown>): CallToolResult {
  return {
    isError: true,
    content: [{ type: "text", text: `${message} (${code})` }],
    _meta: { [ERROR_META_KEY]: { code, message, ...(details ? { details } : {}) } },
  };
}

/** The code of a gateway refusal (`refusal()`'s result); null for any other result. */
export function refusalCode(result: CallToolResult): string | null {
  const error = result._meta?.[ERROR_META_KEY] as { code?: unknown } | undefined;
  return result.isError && typeof error?.code === "string" ? error.code : null;
}
