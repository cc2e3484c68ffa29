import { ErrorCode } from "@modelcontextprotocol/sdk/types.js";

/**
 * Protocol hygiene at the edge of /mcp, where the SDK transport is stricter or
 * looser than the spec: `Accept: *\/*`, batches per protocol version, and
 * protocol errors whose message goes on the wire exactly as written.
 */

/**
 * The request with `Accept: *\/*` spelled out as the two types the transport
 * checks for: a wildcard accepts both JSON and SSE (RFC 9110 §12.5.1), but the
 * SDK transport looks for the literal names and would answer 406.
 */
export function withWildcardAcceptSpelledOut(request: Request): Request {
  const accept = request.headers.get("accept");
  if (!accept || !accept.split(",").some((range) => range.split(";")[0]!.trim() === "*/*")) return request;
  const headers = new Headers(request.headers);
  headers.set("accept", `application/json, text/event-stream, ${accept}`);
  return new Request(request, { headers });
}

/** Protocol versions whose transport allows JSON-RPC batches: only 2025-03-26 (and the one before it); 2025-06-18 removed them. */
const BATCHING_VERSIONS = new Set(["2024-11-05", "2025-03-26"]);

/** The version a request speaks: its MCP-Protocol-Version header, or 2025-03-26 when absent, as the spec says a server assumes. */
function requestProtocolVersion(request: Request, batch: unknown[]): string {
  const header = request.headers.get("mcp-protocol-version");
  if (header) return header;
  // An initialize inside the batch asks for the version it is about to negotiate.
  const initialize = batch.find(
    (message): message is { method: "initialize"; params: { protocolVersion: unknown } } =>
      typeof message === "object" && message !== null && (message as { method?: unknown }).method === "initialize",
  );
  const asked = initialize?.params?.protocolVersion;
  return typeof asked === "string" ? asked : "2025-03-26";
}

/**
 * Why a JSON-RPC batch is refused in the protocol version it was sent with, or
 * null when the body is not a batch or the version allows batches.
 */
export function batchRefusal(request: Request, body: unknown): string | null {
  if (!Array.isArray(body)) return null;
  const version = requestProtocolVersion(request, body);
  if (BATCHING_VERSIONS.has(version)) return null;
  return `JSON-RPC batches are not part of MCP protocol version ${version} (only 2025-03-26 has them); send one message per request`;
}

/** JSON-RPC code of a refused batch: the request as a whole is not a valid one in this version. */
export const BATCH_REFUSAL_CODE = ErrorCode.InvalidRequest;

/**
 * A JSON-RPC error the gateway itself raises. The SDK server puts a thrown
 * error's `code` and `message` on the wire as they are; McpError would prefix
 * its message with "MCP error <code>:", and a client SDK prefixes it once more.
 */
export class ProtocolError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly data?: Record<string, unknown>,
  ) {
    super(message);
    this.name = "ProtocolError";
  }
}
