import type { Server, ServerContext } from "@modelcontextprotocol/server";
import type { ClientCapabilities } from "@modelcontextprotocol/sdk/types.js";
import { withInputRounds, type BridgedRequest, type BridgeState } from "./mcp.bridge.ts";
import type { GatewayCore } from "./mcp.caller.ts";
import type { ContentMethods, OnContentRequest } from "./mcp.content.ts";
import { isRecord } from "./mcp.errors.ts";

/**
 * The content handlers on the 2026-07-28 server, under their method names. `prompts/get` and `resources/read` may
 * answer input-required (the revision's multi-round-trip requests): each runs with the input rounds of a call, bound
 * to its prompt name and arguments or its resource URI (mcp.bridge.ts). The lists and completion take no input.
 */
export const modernContentRequests =
  (server: Server, core: GatewayCore, declared: (ctx: ServerContext) => ClientCapabilities): OnContentRequest =>
  (method, contentHandler) =>
    // The v2 SDK parses each request with its own schemas; the handlers read the same members.
    server.setRequestHandler(method, (request, ctx) => {
      const bridged = bridgedTarget(method, request.params as Record<string, unknown>);
      if (!bridged) return contentHandler(request as never, {}) as never;
      const asked = {
        capabilities: declared(ctx),
        state: ctx.mcpReq.requestState<BridgeState>(),
        inputResponses: ctx.mcpReq.inputResponses,
      };
      // A request that waits for input may outlive this POST: nothing of the POST's (its signal) is tied to it.
      return withInputRounds(core, bridged, asked, (relay, signal) => contentHandler(request as never, { relay, signal })) as never;
    });

/** What the signed state of a prompts/get or resources/read binds: the prompt and its arguments, or the URI. */
function bridgedTarget(method: keyof ContentMethods, params: Record<string, unknown>): BridgedRequest | null {
  if (method === "prompts/get") {
    return { method, name: String(params.name), arguments: isRecord(params.arguments) ? params.arguments : {} };
  }
  if (method === "resources/read") return { method, name: String(params.uri), arguments: {} };
  return null;
}
