import type { McpError } from "@modelcontextprotocol/sdk/types.js";

/**
 * The JSON-RPC errors every revision's layer answers with. Both SDK servers (v1
 * for 2025-era traffic, v2 for 2026-07-28) put a thrown error's `code`,
 * `message` and `data` on the wire as they are; McpError would prefix the
 * message with "MCP error <code>:", and a client SDK prefixes it once more.
 */

/** How much of a client-supplied name an error repeats: enough to recognise it, never the client's megabyte back. */
export const ECHOED_NAME_CHARS = 128;

export function echoedName(name: string): string {
  if (name.length <= ECHOED_NAME_CHARS) return name;
  // Never end on half of a surrogate pair.
  const end = /[\uD800-\uDBFF]/.test(name.charAt(ECHOED_NAME_CHARS - 1)) ? ECHOED_NAME_CHARS - 1 : ECHOED_NAME_CHARS;
  return `${name.slice(0, end)}…`;
}

/**
 * The upstream's own JSON-RPC error, passed on with its code and message and
 * marked as the upstream's.
 */
export class UpstreamRpcError extends Error {
  readonly code: number;
  readonly data: Record<string, unknown>;

  constructor(upstream: Pick<McpError, "code" | "message" | "data">) {
    super(upstream.message.replace(/^MCP error -?\d+: /, ""));
    this.code = upstream.code;
    // The gateway's marker comes last: an upstream cannot send `upstream: false` to pass as the gateway.
    this.data = { ...(isRecord(upstream.data) ? upstream.data : {}), upstream: true };
  }
}

export const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/** An error answer the endpoint writes itself, before any SDK server runs. */
export function jsonRpcError(
  status: number,
  code: number,
  message: string,
  headers: Record<string, string> = {},
  id: string | number | null = null,
  data?: Record<string, unknown>,
): Response {
  return new Response(JSON.stringify({ jsonrpc: "2.0", error: { code, message, ...(data ? { data } : {}) }, id }), {
    status,
    headers: { "content-type": "application/json", ...headers },
  });
}
