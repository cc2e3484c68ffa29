import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { GATEWAY_META_PREFIX } from "../lib/gateway-meta.ts";

/**
 * What a diverted tool result is, and the capture one upstream request fills (upstream.passthrough.ts diverts;
 * the call path and the request scope hold a capture). Below both, so neither imports the other.
 */

/** Where the stub the SDK client gets in a diverted result's place carries the capture's token. */
export const STUB_META_KEY = `${GATEWAY_META_PREFIX}diverted`;

/** A diverted result. */
export interface RawResult {
  /** The upstream's `result` value as the bytes it sent, in the pieces they arrived in. */
  bytes: readonly Uint8Array[];
  /** The same value, parsed for a reader inside the gateway such as Code Mode (the MCP answer never needs it). */
  parse: () => CallToolResult;
}

export class RawResultCapture {
  /** Null when the result took the parsed path. */
  result: RawResult | null = null;
  /** Marks the stub the SDK client gets in the diverted result's place; the upstream never sees it. */
  readonly stubToken = crypto.randomUUID();

  /**
   * The diverted result, when it is the answer the SDK client resolved the call with, else null. An SSE
   * answer can hold several results for one id, and the SDK takes the first: one that was not diverted
   * (an `isError`, an event the splitter passed on as it came) and a later one that was must not answer
   * the call with the later one's bytes.
   */
  taken(resolved: CallToolResult): RawResult | null {
    return resolved._meta?.[STUB_META_KEY] === this.stubToken ? this.result : null;
  }
}
