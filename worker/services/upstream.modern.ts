import {
  Client as ModernClient,
  ProtocolError,
  SdkError,
  SdkErrorCode,
  StreamableHTTPClientTransport as ModernTransport,
  type ClientCapabilities as ModernCapabilities,
  type DiscoverResult,
} from "@modelcontextprotocol/client";
import { CfWorkerJsonSchemaValidator } from "@modelcontextprotocol/client/validators/cf-worker";
import type { RequestOptions } from "@modelcontextprotocol/sdk/shared/protocol.js";
import { McpError, type CallToolResult, type ClientCapabilities, type ServerRequest, type Tool } from "@modelcontextprotocol/sdk/types.js";
import { WeightedLru } from "../lib/lru.ts";
import { guardedFetch, UpstreamFailure, type UpstreamTarget } from "./upstream.fetch.ts";
import { boundMessages } from "./upstream.messages.ts";
import { withRequestScope } from "./upstream.scope.ts";
import { CallCancelled, CallDeadline, MAX_CALL_DURATION_MS, UpstreamTimeout, type UpstreamCallOptions } from "./upstream.call.ts";

/**
 * The gateway as a client of a 2026-07-28 upstream, on the v2 SDK's client.
 * Indexing asks the upstream `server/discover` once; an upstream that offers
 * 2026-07-28 is stored with its discover result (services.discover) and every
 * later request to it goes out in that revision, with no handshake and no
 * session: the stored result is handed to the client as a prior discovery
 * (zero round trips), and a client is reused for every call in the isolate.
 * Input the upstream asks for (an input-required result) is fulfilled by the
 * client's own request handlers, which forward to the calling client exactly
 * as a 2025-era upstream's server-to-client requests are forwarded, and the
 * upstream is retried with the answers.
 */

export const MODERN_REVISION = "2026-07-28";
const PROTOCOL_VERSION_META = "io.modelcontextprotocol/protocolVersion";
const CLIENT_CAPABILITIES_META = "io.modelcontextprotocol/clientCapabilities";
const SERVER_INFO_META = "io.modelcontextprotocol/serverInfo";
/** Each indexing request (server/discover, a tools/list page), as for a 2025-era upstream. */
const INDEX_TIMEOUT_MS = 15_000;
/** Instructions kept of a discover result, as of an `initialize` (indexing cuts them again for clients). */
const MAX_DISCOVER_INSTRUCTIONS_CHARS = 4096;
/** The discover result stored with the service (capabilities, server info, instructions), as JSON. */
export const MAX_DISCOVER_BYTES = 64 * 1024;

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value);

/**
 * Whether the upstream speaks 2026-07-28: its `server/discover` result when it offers that revision, null when it
 * answers anything else (a 2025-era server refuses the method, or the request without a session). The failures
 * that would end indexing anyway (the URL policy, a 401, no connection, an oversized answer) are thrown as they are.
 */
export async function discoverUpstream(target: UpstreamTarget): Promise<DiscoverResult | null> {
  const fetchUpstream = guardedFetch(target.allowList);
  let response: Response;
  try {
    response = await fetchUpstream(target.url, {
      method: "POST",
      headers: {
        ...target.headers,
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        "mcp-protocol-version": MODERN_REVISION,
        "mcp-method": "server/discover",
      },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "server/discover",
        params: { _meta: { [PROTOCOL_VERSION_META]: MODERN_REVISION, [CLIENT_CAPABILITIES_META]: {} } },
      }),
      signal: AbortSignal.timeout(INDEX_TIMEOUT_MS),
    });
  } catch (error) {
    if (error instanceof UpstreamFailure) throw error;
    throw new UpstreamFailure("upstream_unreachable", "The upstream did not answer server/discover in time");
  }
  if (!response.ok || !response.headers.get("content-type")?.includes("application/json")) {
    await response.body?.cancel();
    return null;
  }
  let message: unknown;
  try {
    message = JSON.parse(await response.text());
  } catch (error) {
    if (error instanceof UpstreamFailure) throw error;
    return null;
  }
  const result = isRecord(message) ? message.result : undefined;
  if (!isRecord(result) || !Array.isArray(result.supportedVersions) || !result.supportedVersions.includes(MODERN_REVISION)) return null;
  const instructions = typeof result.instructions === "string" ? result.instructions.slice(0, MAX_DISCOVER_INSTRUCTIONS_CHARS) : undefined;
  const serverInfo = isRecord(result._meta) ? result._meta[SERVER_INFO_META] : undefined;
  const discover = {
    supportedVersions: [MODERN_REVISION],
    capabilities: isRecord(result.capabilities) ? result.capabilities : {},
    ...(instructions ? { instructions } : {}),
    ...(isRecord(serverInfo) ? { _meta: { [SERVER_INFO_META]: serverInfo } } : {}),
  } as DiscoverResult;
  // It is stored with the service and read with every catalog: an upstream does not get to make that large.
  const bytes = new TextEncoder().encode(JSON.stringify(discover)).byteLength;
  if (bytes > MAX_DISCOVER_BYTES) {
    throw new UpstreamFailure(
      "upstream_protocol_error",
      `The upstream's server/discover result is ${bytes} bytes, over the ${MAX_DISCOVER_BYTES} the gateway keeps`,
    );
  }
  return discover;
}

/** The upstream requests a relay forwards, by the method a 2026-07-28 input request names. */
const RELAYED_METHODS = { sampling: "sampling/createMessage", elicitation: "elicitation/create", roots: "roots/list" } as const;

/** A client of the upstream in 2026-07-28, from its stored discover result: no round trip to connect. */
async function connectModern(target: UpstreamTarget, capabilities: ClientCapabilities, relay?: Relay): Promise<ModernClient> {
  const client = new ModernClient(
    { name: "rayrun-gateway", version: "0.1.0" },
    // The same JSON either SDK parses; the v2 types spell its open members differently.
    { capabilities: capabilities as ModernCapabilities, jsonSchemaValidator: new CfWorkerJsonSchemaValidator() },
  );
  if (relay) {
    for (const [capability, method] of Object.entries(RELAYED_METHODS)) {
      if (!capabilities[capability as keyof typeof RELAYED_METHODS]) continue;
      client.setRequestHandler(method, (request, ctx) => relay.forward(request as ServerRequest, ctx.mcpReq.signal) as never);
    }
  }
  const transport = new ModernTransport(new URL(target.url), {
    fetch: guardedFetch(target.allowList),
    requestInit: { headers: target.headers },
  });
  try {
    await client.connect(transport, { prior: { kind: "modern", discover: target.discover! } });
  } catch (error) {
    throw asModernFailure(error);
  }
  boundMessages(transport, false);
  return client;
}

interface Relay {
  forward: (request: ServerRequest, signal: AbortSignal) => Promise<unknown>;
}

/**
 * 2026-07-28 upstream clients one isolate keeps for reuse, as many as the 2025-era session pool. A target's cache
 * key changes with every change of its URL or headers (the sealed headers' random IV included) and per OAuth grant
 * subject, so tenants decide how many keys there are: unbounded, each header change left a client behind for the
 * isolate's lifetime.
 */
export const MAX_MODERN_CLIENTS = 128;

/**
 * Clients of 2026-07-28 upstreams, reused across calls in this isolate: there is no session to keep or end, so
 * one client per target serves every call that answers no input request. Only connected clients are kept (never
 * a pending promise, which would tie one request's work to another's); the least recently used goes first, and a
 * call already holding it finishes with it (there is nothing upstream to end).
 */
const clients = new WeightedLru<{ client: ModernClient; credential: string | undefined }>(MAX_MODERN_CLIENTS, MAX_MODERN_CLIENTS);

/** How many clients this isolate keeps now (tests). */
export const keptModernClients = () => clients.size;

export async function sharedModernClient(target: UpstreamTarget): Promise<ModernClient> {
  const cached = clients.get(target.cacheKey);
  if (cached && cached.credential === target.credential) return cached.client;
  const client = await connectModern(target, {});
  clients.set(target.cacheKey, { client, credential: target.credential }, 1);
  return client;
}

/** What the v2 client throws, in the gateway's terms: the upstream's JSON-RPC error as McpError, the rest as failures. */
export function asModernFailure(error: unknown): unknown {
  if (error instanceof UpstreamFailure || error instanceof McpError) return error;
  if (error instanceof ProtocolError) return new McpError(error.code, error.message, error.data);
  if (error instanceof SdkError && error.code === SdkErrorCode.RequestTimeout) {
    return new UpstreamFailure("upstream_unreachable", "The upstream did not answer in time");
  }
  const message = error instanceof Error ? error.message : String(error);
  return new UpstreamFailure("upstream_protocol_error", `The upstream did not answer as an MCP server: ${message}`);
}

/** Every tool a client declaring `capabilities` is listed, following cursors (bounds: the caller's). */
export async function listModernTools(
  target: UpstreamTarget,
  capabilities: ClientCapabilities,
  onPage: (tools: Tool[]) => void,
  maxPages: number,
): Promise<{ serverInfo: unknown; instructions: string | undefined }> {
  const client = await connectModern(target, capabilities);
  try {
    let cursor: string | undefined;
    for (let page = 0; page < maxPages; page++) {
      const result = await client
        .listTools(cursor ? { cursor } : {}, { cacheMode: "bypass", timeout: INDEX_TIMEOUT_MS })
        .catch((error: unknown) => {
          throw asModernFailure(error);
        });
      onPage(result.tools as Tool[]);
      cursor = result.nextCursor;
      if (!cursor) return { serverInfo: client.getServerVersion() ?? null, instructions: client.getInstructions() };
    }
    throw new UpstreamFailure("upstream_protocol_error", `tools/list did not finish within ${maxPages} pages`);
  } finally {
    await client.close().catch(() => {});
  }
}

/**
 * Any other request (a prompt, a resource) to a 2026-07-28 upstream for a client that answers input requests: a
 * client of its own declaring the client's capabilities fulfils the upstream's input-required rounds through the
 * relay, under the call's clocks (the idle clock held while the client answers).
 */
export async function requestModernRelayed<T>(
  target: UpstreamTarget,
  relay: NonNullable<UpstreamCallOptions["relay"]>,
  signal: AbortSignal | undefined,
  send: (client: ModernClient, options: RequestOptions) => Promise<T>,
): Promise<T> {
  const deadline = new CallDeadline(signal);
  try {
    const client = await connectModern(target, relay.capabilities, {
      forward: (request, requestSignal) => deadline.hold(() => relay.forward(request, requestSignal)),
    });
    try {
      const options = { signal: deadline.signal, timeout: MAX_CALL_DURATION_MS + 1_000, cacheMode: "bypass" } as RequestOptions;
      return await withRequestScope({ fail: (error: Error) => deadline.fail(error) }, () => send(client, options));
    } catch (error) {
      if (deadline.failure) throw deadline.failure;
      if (deadline.tripped) throw new UpstreamTimeout(deadline.tripped);
      if (signal?.aborted) throw new CallCancelled(String(signal.reason ?? "cancelled"));
      throw asModernFailure(error);
    } finally {
      void client.close().catch(() => {});
    }
  } finally {
    deadline.dispose();
  }
}

/**
 * One tools/call to a 2026-07-28 upstream, under the same clocks as a 2025-era one. A client that answers input
 * requests gets a client of its own declaring its capabilities, whose handlers forward each input request the
 * upstream's answer carries; the v2 client then retries the call with the answers, as many rounds as it takes.
 */
export async function callModernTool(
  target: UpstreamTarget,
  name: string,
  args: Record<string, unknown>,
  options: UpstreamCallOptions,
): Promise<CallToolResult> {
  const deadline = new CallDeadline(options.signal);
  const relay = options.relay;
  try {
    const client = relay
      ? await connectModern(target, relay.capabilities, {
          forward: (request, signal) => deadline.hold(() => relay.forward(request, signal)),
        })
      : await sharedModernClient(target);
    await options.beforeSend?.();
    try {
      const call = () =>
        client.callTool(
          { name, arguments: args },
          {
            signal: deadline.signal,
            timeout: MAX_CALL_DURATION_MS + 1_000,
            onprogress: (progress) => {
              deadline.touch();
              options.onProgress?.(progress);
            },
          },
        );
      return (await withRequestScope({ fail: (error: Error) => deadline.fail(error) }, call)) as CallToolResult;
    } catch (error) {
      if (deadline.failure) throw deadline.failure;
      if (deadline.tripped) throw new UpstreamTimeout(deadline.tripped);
      if (options.signal?.aborted) throw new CallCancelled(String(options.signal.reason ?? "cancelled"));
      throw asModernFailure(error);
    } finally {
      if (relay) void client.close().catch(() => {});
    }
  } finally {
    deadline.dispose();
  }
}
