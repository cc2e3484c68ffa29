import { isJsonContentType } from "@modelcontextprotocol/sdk/shared/mediaType.js";
import {
  CallToolRequestSchema,
  CallToolResultSchema,
  ErrorCode,
  JSONRPCRequestSchema,
  McpError,
  SUPPORTED_PROTOCOL_VERSIONS,
  type CallToolRequest,
  type JSONRPCMessage,
  type RequestId,
} from "@modelcontextprotocol/sdk/types.js";
import type { JsonObject } from "../../schema/hooks/contract.ts";
import { methodOf } from "./mcp.body.ts";
import type { GatewayCore } from "./mcp.caller.ts";
import { callTool } from "./mcp.core.ts";
import { PassThroughs } from "./mcp.passthrough.ts";
import type { CallRoute } from "./mcp.relay.ts";
import type { GatewaySession } from "./mcp.session.ts";
import { callOptions, wantsEventStream } from "./mcp.streaming.ts";

/** A lone tools/call this module answers, as the SDK's server would have parsed it, and its JSON-RPC id. */
export type DirectCall = CallToolRequest & { id: RequestId };

/**
 * The request most clients send most: one 2025-era `tools/call`, answered as plain JSON (no progress asked for, a
 * session that answers no server-to-client requests). The v1 SDK would build a transport and a server for it, with
 * a dozen handlers, parse the call twice and the result once, and serialise an answer that is then searched for a
 * passed-through result: about 0.3 ms of a no-hook call's time on the bench's machine, against the gateway's own
 * 0.5 ms target. Here the same answer is written directly.
 *
 * Only a request the SDK's transport and server would take as it is comes here: every check they make that could
 * refuse it (Accept, Content-Type, the protocol version header, the JSON-RPC envelope, the call's params) is made
 * first, and a request that fails any of them goes the SDK's way, which answers with its own error. What the SDK does
 * with an accepted call is done the same way here: the same handler arguments, the result validated against
 * `CallToolResultSchema` (its defaults filled in), and a thrown error answered as the SDK's protocol layer does.
 */
export function directToolCall(request: Request, parsedBody: unknown, session: GatewaySession | null): DirectCall | undefined {
  // Every other request (initialize, lists, notifications, batches) is told apart by a plain look, before any parse.
  if (methodOf(parsedBody) !== "tools/call") return undefined;
  const accept = request.headers.get("accept");
  if (!accept?.includes("application/json") || !accept.includes("text/event-stream")) return undefined;
  if (!isJsonContentType(request.headers.get("content-type"))) return undefined;
  const version = request.headers.get("mcp-protocol-version");
  if (version !== null && !SUPPORTED_PROTOCOL_VERSIONS.includes(version)) return undefined;
  const envelope = JSONRPCRequestSchema.safeParse(parsedBody);
  if (!envelope.success) return undefined;
  // A call answered on an SSE stream (it asked for progress, or its session answers the upstream's requests) and a
  // task-augmented call stay with the SDK.
  if (wantsEventStream(request, parsedBody, session)) return undefined;
  const call = CallToolRequestSchema.safeParse(parsedBody);
  return call.success && call.data.params.task === undefined ? { ...call.data, id: envelope.data.id } : undefined;
}

/** Runs the call `directToolCall` admitted and answers it: the response the SDK's JSON mode would send. */
export async function answerToolCall(
  core: GatewayCore,
  request: Request,
  call: DirectCall,
  stream: { session: GatewaySession | null; route: CallRoute },
): Promise<Response> {
  const disconnected = new AbortController();
  // A client that goes away before the answer (`enable_request_signal`) cancels the upstream request too.
  request.signal.addEventListener("abort", () => disconnected.abort("the client disconnected"), { once: true });
  const passThroughs = new PassThroughs();
  let message: JSONRPCMessage;
  try {
    const result = await callTool(core, {
      name: call.params.name,
      arguments: (call.params.arguments ?? {}) as JsonObject,
      upstream: callOptions(call.id, stream.route, disconnected.signal),
      clientCapabilities: stream.session?.capabilities,
      passThroughs,
      urlElicitationError: true,
    });
    const validated = CallToolResultSchema.safeParse(result);
    if (!validated.success) throw new McpError(ErrorCode.InvalidParams, `Invalid tools/call result: ${validated.error.message}`);
    message = { result: validated.data, jsonrpc: "2.0", id: call.id };
  } catch (error) {
    message = { jsonrpc: "2.0", id: call.id, error: protocolError(error) };
  } finally {
    stream.route.leave(call.id);
  }
  return new Response(passThroughs.bodyOf(message), { status: 200, headers: { "Content-Type": "application/json" } });
}

/** A thrown error as the SDK's protocol layer answers it: its numeric code (else InternalError), message and data. */
function protocolError(error: unknown): { code: number; message: string; data?: unknown } {
  const { code, message, data } = (typeof error === "object" && error !== null ? error : {}) as {
    code?: unknown;
    message?: unknown;
    data?: unknown;
  };
  return {
    code: Number.isSafeInteger(code) ? (code as number) : ErrorCode.InternalError,
    message: typeof message === "string" ? message : "Internal error",
    ...(data !== undefined && { data }),
  };
}
