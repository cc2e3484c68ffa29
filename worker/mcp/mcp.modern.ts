import {
  CLIENT_CAPABILITIES_META_KEY,
  classifyInboundRequest,
  createMcpHandler,
  PROTOCOL_VERSION_META_KEY,
  ProtocolError,
  Server,
  type ServerContext,
} from "@modelcontextprotocol/server";
import type { CallToolResult, ClientCapabilities } from "@modelcontextprotocol/sdk/types.js";
import type { JsonObject } from "../../schema/hooks/contract.ts";
import type { UpstreamCallOptions } from "../services/upstream.call.ts";
import { MAX_BODY_BYTES, methodOf } from "./mcp.body.ts";
import {
  bridgedCall,
  isApprovalState,
  resumedApproval,
  resumedCall,
  verifyRequestState,
  withApprovalInBand,
  type BridgeState,
} from "./mcp.bridge.ts";
import { relayedCapabilities } from "./mcp.capabilities.ts";
import { CONTENT_CAPABILITIES, registerContentHandlers } from "./mcp.content.ts";
import { modernContentRequests } from "./mcp.content.modern.ts";
import type { GatewayCore } from "./mcp.caller.ts";
import { callTool, coreCatalog, listTools } from "./mcp.core.ts";
import { isRecord } from "./mcp.errors.ts";
import { gatewayInstructions } from "./mcp.instructions.ts";
import { PassThroughs } from "./mcp.passthrough.ts";
import { answerOut } from "./mcp.streaming.ts";
import {
  declaresTasks,
  registerModernTaskHandlers,
  TASKS_EXTENSION_CAPABILITY,
  withoutContentOnTask,
  withTaskFlattened,
} from "./mcp.tasks.modern.ts";

/**
 * The 2026-07-28 layer: stateless, one JSON-RPC request per POST, with the
 * protocol version and the client's capabilities in each request's `_meta`.
 * The v2 SDK's HTTP entry (`createMcpHandler`) runs the revision's validation
 * ladder (envelope, MCP-Protocol-Version / Mcp-Method / Mcp-Name against the
 * body, -32022 for a revision it does not serve), answers `server/discover`,
 * stamps `resultType` and the caching hints, and hands each request to the
 * handlers below, which call the same request core as the 2025-era layer.
 */

/**
 * How long a client may reuse a `tools/list` (and the other lists). `private`: the list is the caller's
 * profile's, shown to the caller's own credential, so no cache may serve it to anyone else.
 */
export const LIST_CACHE_TTL_MS = 30_000;
/** `subscriptions/listen` streams one isolate holds open at most (the gateway sends no list changes on them). */
export const MAX_LISTEN_STREAMS = 256;

/** The first revision of the per-request envelope; the SDK's classifier compares versions as strings the same way. */
const FIRST_MODERN_REVISION = "2026-07-28";

/**
 * Whether a message can be 2026-07-28 traffic at all. The SDK's classifier reaches "modern", or a refusal by that
 * revision's rules, only for a single message whose `params._meta` claims a protocol version, or one sent with an
 * MCP-Protocol-Version header naming 2026-07-28 or later (after stripping spaces and tabs, as it does); a batch never.
 * Everything else is decided here, because the classifier validates the whole message against up to three schemas
 * first, which on the no-hook call path cost more than all the other routing of a call.
 */
function mayBeModern(request: Request, parsedBody: unknown): boolean {
  if (!isRecord(parsedBody)) return false;
  const header = request.headers.get("mcp-protocol-version")?.replace(/^[\t ]+|[\t ]+$/g, "");
  if (header !== undefined && header >= FIRST_MODERN_REVISION) return true;
  const params = parsedBody.params;
  return isRecord(params) && isRecord(params._meta) && PROTOCOL_VERSION_META_KEY in params._meta;
}

/** Whether this POST is 2026-07-28 traffic (or claims to be, and is refused by that revision's rules). */
export function isModernRequest(request: Request, parsedBody: unknown): boolean {
  if (parsedBody === undefined || !mayBeModern(request, parsedBody)) return false;
  const outcome = classifyInboundRequest({
    httpMethod: request.method,
    protocolVersionHeader: request.headers.get("mcp-protocol-version") ?? undefined,
    mcpMethodHeader: request.headers.get("mcp-method") ?? undefined,
    mcpNameHeader: request.headers.get("mcp-name") ?? undefined,
    body: parsedBody,
  });
  // A body that is no JSON-RPC message at all belongs to neither revision: the 2025-era transport answers it as before.
  return outcome.kind === "modern" || (outcome.kind === "reject" && outcome.rung !== "jsonrpc-shape");
}

/** One POST's caller and answer state, found by the SDK's server factory through the request it serves. */
interface ModernExchange {
  core: GatewayCore;
  instructions: string | undefined;
  passThroughs: PassThroughs;
  disconnected: AbortSignal;
}

const exchanges = new WeakMap<Request, ModernExchange>();

const handler = createMcpHandler(
  ({ requestInfo }) => {
    const exchange = requestInfo && exchanges.get(requestInfo);
    if (!exchange) throw new Error("A 2026-07-28 request reached the SDK without its exchange");
    return modernServer(exchange);
  },
  {
    legacy: "reject",
    maxRequestBodySize: MAX_BODY_BYTES,
    maxSubscriptions: MAX_LISTEN_STREAMS,
    // A request the revision's rules refuse is answered with its error; only the gateway's own failures are worth a line.
    onerror: (error) => {
      if (!(error instanceof ProtocolError) && !error.message.startsWith("Rejected inbound request"))
        console.error("2026-07-28 request failed", error);
    },
  },
);

export async function serveModern(core: GatewayCore, request: Request, parsedBody: unknown): Promise<Response> {
  const disconnected = new AbortController();
  request.signal.addEventListener("abort", () => disconnected.abort("the client disconnected"), { once: true });
  // Only server/discover carries instructions, so only it reads the catalog before the SDK server exists.
  const instructions =
    methodOf(parsedBody) === "server/discover" ? gatewayInstructions(await coreCatalog(core), core.caller.profileId) : undefined;
  const exchange: ModernExchange = { core, instructions, passThroughs: new PassThroughs(true), disconnected: disconnected.signal };
  exchanges.set(request, exchange);
  const response = await handler.fetch(request, { parsedBody });
  return answerOut(response, disconnected, exchange.passThroughs);
}

function modernServer(exchange: ModernExchange): Server {
  const { core, passThroughs } = exchange;
  const server = new Server(
    { name: "rayrun", version: "0.1.0" },
    {
      capabilities: { tools: {}, ...CONTENT_CAPABILITIES, extensions: TASKS_EXTENSION_CAPABILITY },
      instructions: exchange.instructions,
      requestState: { verify: verifyRequestState(core.env.SECRETS_KEY) },
      cacheHints: {
        "tools/list": { ttlMs: LIST_CACHE_TTL_MS, cacheScope: "private" },
        "prompts/list": { ttlMs: LIST_CACHE_TTL_MS, cacheScope: "private" },
        "resources/list": { ttlMs: LIST_CACHE_TTL_MS, cacheScope: "private" },
        "resources/templates/list": { ttlMs: LIST_CACHE_TTL_MS, cacheScope: "private" },
        "server/discover": { ttlMs: LIST_CACHE_TTL_MS, cacheScope: "private" },
      },
    },
  );
  // The answer's result passes through as the upstream's bytes: the outgoing message carries a placeholder.
  const connect = server.connect.bind(server);
  server.connect = async (transport) => {
    const send = transport.send.bind(transport);
    transport.send = (message, options) => send(withoutContentOnTask(passThroughs.outgoing(message)), options);
    return connect(transport);
  };
  registerContentHandlers(modernContentRequests(server, core, declaredCapabilities), {
    env: core.env,
    ...core.caller,
    loadCatalog: () => coreCatalog(core),
    waitUntil: core.waitUntil,
  });

  server.setRequestHandler("tools/list", async (_request, ctx) => ({
    tools: (await listTools(core, declaredCapabilities(ctx))) as never,
  }));
  registerModernTaskHandlers(server, core, declaredCapabilities);

  server.setRequestHandler("tools/call", async (request, ctx) => {
    const name = request.params.name;
    const args = (request.params.arguments ?? {}) as JsonObject;
    const declared = declaredCapabilities(ctx);
    const state = ctx.mcpReq.requestState<BridgeState>();
    const acceptsTask = declaresTasks(declared);
    const call = async (upstream: UpstreamCallOptions, held: PassThroughs) =>
      withTaskFlattened(
        await callTool(core, {
          name,
          arguments: args,
          upstream,
          clientCapabilities: declared,
          passThroughs: held,
          urlElicitationError: false,
          acceptsTask,
        }),
      ) as CallToolResult;
    // Progress goes out before the result: an upstream that sends both at once must not see its progress dropped.
    const streamed = (upstream: ProgressOptions, held: PassThroughs) =>
      call(upstream.options, held).finally(() => Promise.all(upstream.notifying));
    const asked = { method: "tools/call" as const, name, arguments: args, capabilities: declared };
    if (state !== undefined && isApprovalState(state)) {
      return (await resumedApproval(core, asked, state, ctx.mcpReq.inputResponses, () =>
        streamed(callOptions(ctx, exchange.disconnected), passThroughs),
      )) as never;
    }
    const progress = callOptions(ctx, exchange.disconnected);
    const delivered = () => Promise.all(progress.notifying);
    // A retry: its answers go to the call waiting for them, wherever it runs, and the call's progress comes back.
    if (state !== undefined) {
      return (await resumedCall(core, asked, state, ctx.mcpReq.inputResponses, progress.options.onProgress).finally(delivered)) as never;
    }
    const bridged = relayedCapabilities(declared);
    if (!Object.keys(bridged).length) return (await streamed(progress, passThroughs)) as never;
    // The upstream may ask for input mid-call: the call runs with a relay that turns each request into a round. It
    // may outlive this POST, so nothing of this POST's (its signal, its answer's bytes) is tied to it; its progress
    // reaches this POST's client in the first round and each retry's in the rounds after (mcp.bridge.ts).
    const result = await bridgedCall(core, { ...asked, capabilities: bridged }, progress.options.onProgress, (relay, onProgress, signal) =>
      call({ relay, onProgress, signal }, PassThroughs.parsing()),
    ).finally(delivered);
    return (await withApprovalInBand(core, asked, result)) as never;
  });
  return server;
}

/** What this request's `_meta` declares the client answers (never what an earlier request declared). */
function declaredCapabilities(ctx: ServerContext): ClientCapabilities {
  // The SDK types the envelope as an empty object; its members are the reserved keys the request carried.
  const envelope = ctx.mcpReq.envelope as Record<string, unknown> | undefined;
  const declared = envelope?.[CLIENT_CAPABILITIES_META_KEY];
  return (isRecord(declared) ? declared : {}) as ClientCapabilities;
}

/** A call's upstream options, and the progress notifications on their way to the client. */
interface ProgressOptions {
  options: UpstreamCallOptions;
  notifying: Promise<void>[];
}

/** The upstream request's progress (under the client's token) and cancellation (the client going away). */
function callOptions(ctx: ServerContext, disconnected: AbortSignal): ProgressOptions {
  const options: UpstreamCallOptions = { signal: AbortSignal.any([ctx.mcpReq.signal, disconnected]) };
  const notifying: Promise<void>[] = [];
  const progressToken = ctx.mcpReq._meta?.progressToken;
  if (progressToken !== undefined) {
    options.onProgress = (progress) =>
      void notifying.push(
        ctx.mcpReq
          .notify({ method: "notifications/progress", params: { ...progress, progressToken } })
          .catch((error: unknown) => console.error("progress not delivered", error)),
      );
  }
  return { options, notifying };
}
