import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import {
  CallToolRequestSchema,
  ErrorCode,
  ListToolsRequestSchema,
  McpError,
  type CallToolResult,
  type JSONRPCMessage,
} from "@modelcontextprotocol/sdk/types.js";
import { CfWorkerJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/cfworker-provider.js";
import { authenticateMcp } from "../auth/mcp-caller.ts";
import type { JsonObject } from "../../schema/hooks/contract.ts";
import { loadCatalog } from "../calls/catalog.ts";
import type { CallOutcome, ToolCallRun } from "../calls/outcome.ts";
import { runToolCall } from "../calls/pipeline.ts";
import { runShadow } from "../calls/shadow.ts";
import { codeRunEntry } from "../codemode/codemode.record.ts";
import { callCodeModeTool, isCodeModeCall, isDirectCallOffered, RUN_CODE, toolsForDiscovery } from "../codemode/codemode.tools.ts";
import { afterResponse, type WaitUntil } from "../lib/after-response.ts";
import { newId } from "../lib/ids.ts";
import { writeCodeRun } from "../logs/code-runs.store.ts";
import { insertLogStatements, type CallLogEntry } from "../logs/logs.store.ts";
import { MAX_BODY_BYTES, readJsonBody } from "./mcp.body.ts";
import { CONTENT_CAPABILITIES, isInitialize, registerContentHandlers, withGatewayLinks } from "./mcp.content.ts";
import { BATCH_REFUSAL_CODE, batchRefusal, ProtocolError, withWildcardAcceptSpelledOut } from "./mcp.hygiene.ts";
import { gatewayInstructions } from "./mcp.instructions.ts";
import { registerLogLevelHandler } from "./mcp.logging.ts";
import { refusal } from "./mcp.results.ts";
import { CallRoute, routeClientMessages, routeKeyOf } from "./mcp.relay.ts";
import { resolveSession } from "./mcp.session.ts";
import { PassThroughs } from "./mcp.passthrough.ts";
import { answerOut, streamedCallOptions, wantsEventStream, type CallStreaming } from "./mcp.streaming.ts";
import { approvalLinks } from "../approvals/approval-links.ts";

/** Who is calling /mcp: an API key with tools:call or an OAuth grant, bound to one workspace and profile. */
interface Caller {
  workspaceId: string;
  keyId: string;
  /** Who made the call, as its log rows record it: `key:<key id>` or `oauth:<client_id>`. */
  actor: string;
  profileId: string | null;
  origin: string;
  /**
   * Whether the request's credentials still authenticate this same caller (not revoked, same profile): a Code
   * Mode run asks before each inner call, since a run outlives the key cache's 2 s by up to a minute.
   */
  stillAuthorized: () => Promise<boolean>;
}

/**
 * The client endpoint. Stateless Streamable HTTP with JSON responses: each POST
 * carries complete JSON-RPC messages, so any edge can answer any request.
 */
export async function handleMcpRequest(env: Env, request: Request, ctx: ExecutionContext): Promise<Response> {
  if (request.method !== "POST") {
    return jsonRpcError(405, ErrorCode.ConnectionClosed, "Use POST: this endpoint does not open server-initiated streams", {
      allow: "POST",
    });
  }
  const auth = await authenticateMcp(env, request, (promise) => ctx.waitUntil(promise));
  if (auth.kind === "refused") return jsonRpcError(auth.status, ErrorCode.InvalidRequest, auth.message, auth.headers);
  const caller: Caller = {
    workspaceId: auth.workspaceId,
    keyId: auth.actorId,
    actor: auth.actor,
    profileId: auth.profileId,
    origin: new URL(request.url).origin,
    stillAuthorized: async () => {
      const again = await authenticateMcp(env, request, (promise) => ctx.waitUntil(promise));
      return (
        again.kind === "caller" &&
        again.workspaceId === auth.workspaceId &&
        again.actorId === auth.actorId &&
        again.profileId === auth.profileId
      );
    },
  };
  const body = await readJsonBody(withWildcardAcceptSpelledOut(request));
  const refusedBatch = batchRefusal(body.request, body.parsedBody);
  if (refusedBatch) return jsonRpcError(400, BATCH_REFUSAL_CODE, refusedBatch);
  const session = await resolveSession(env, request, caller, "parsedBody" in body ? body.parsedBody : undefined);
  if (session instanceof Response) return session;
  const routeKey = routeKeyOf(caller.keyId, session.routeSignature);
  let parsedBody = "parsedBody" in body ? body.parsedBody : undefined;
  if (parsedBody !== undefined) {
    // Cancellations and answers to relayed requests go to the call waiting for them, wherever it runs.
    const messages = (Array.isArray(parsedBody) ? parsedBody : [parsedBody]) as JSONRPCMessage[];
    const rest = await routeClientMessages(env, routeKey, messages);
    if (!rest.length) return new Response(null, { status: 202 });
    if (rest.length < messages.length) parsedBody = rest;
  }
  const issued = session.issued;
  // Only initialize carries instructions, so only it reads the catalog before the SDK server exists.
  const instructions = isInitialize(body)
    ? gatewayInstructions(await loadCatalog(env, caller.workspaceId, (promise) => ctx.waitUntil(promise)), caller.profileId)
    : undefined;
  const transport = new WebStandardStreamableHTTPServerTransport({
    sessionIdGenerator: issued ? () => issued : undefined,
    enableJsonResponse: !wantsEventStream(body.request, parsedBody, session.session),
    maxRequestBodySize: MAX_BODY_BYTES,
  });
  const disconnected = new AbortController();
  // A client that goes away before a JSON answer (`enable_request_signal`); a streamed call also sees its stream cancelled.
  request.signal.addEventListener("abort", () => disconnected.abort("the client disconnected"), { once: true });
  const passThroughs = new PassThroughs(transport);
  const server = createGatewayServer(env, ctx, caller, instructions, {
    session: session.session,
    route: new CallRoute(env, routeKey, transport),
    disconnected: disconnected.signal,
    passThroughs,
  });
  await server.connect(transport);
  // No server.close(): with JSON responses, handleRequest resolves only once every response is
  // written, and an SSE stream closes after its last response, so nothing is left open. close()
  // would only abort the finished handler's signal and build a "Connection closed" error, on every
  // call; both objects are dropped with the request.
  const response = await transport.handleRequest(body.request, parsedBody !== undefined ? { parsedBody } : undefined);
  return answerOut(response, disconnected, passThroughs);
}

function createGatewayServer(
  env: Env,
  ctx: ExecutionContext,
  caller: Caller,
  instructions: string | undefined,
  stream: CallStreaming,
): Server {
  const waitUntil = (promise: Promise<unknown>) => ctx.waitUntil(promise);
  const server = new Server(
    { name: "rayrun", version: "0.1.0" },
    {
      capabilities: { tools: { listChanged: false }, ...CONTENT_CAPABILITIES },
      jsonSchemaValidator: new CfWorkerJsonSchemaValidator(),
      instructions,
    },
  );
  registerContentHandlers(server, { env, ...caller, loadCatalog: () => loadCatalog(env, caller.workspaceId, waitUntil), waitUntil });
  registerLogLevelHandler(server, stream);

  server.setRequestHandler(ListToolsRequestSchema, async () => {
    const catalog = await loadCatalog(env, caller.workspaceId, waitUntil);
    return { tools: toolsForDiscovery(catalog, caller.profileId, stream.session?.capabilities) };
  });

  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const upstream = streamedCallOptions(request, extra, stream.route, stream.session, stream.disconnected);
    try {
      const catalog = await loadCatalog(env, caller.workspaceId, waitUntil);
      const name = request.params.name;
      const args = (request.params.arguments ?? {}) as JsonObject;
      const links = approvalLinks(env, caller.origin, caller.workspaceId);
      if (isCodeModeCall(catalog, caller.profileId, name)) {
        const requestId = newId("req");
        const started = Date.now();
        const { result, inner } = await callCodeModeTool(
          {
            env,
            catalog,
            loadCatalog: () => loadCatalog(env, caller.workspaceId, waitUntil),
            ...caller,
            requestId,
            approvalLinks: links,
            signal: upstream.signal,
          },
          name,
          args,
        );
        for (const call of inner) if (call.run) scheduleAfterResponse(env, waitUntil, caller, call.run, call.index);
        if (name === RUN_CODE) {
          const run = { keyId: caller.keyId, actor: caller.actor, requestId };
          const durationMs = Date.now() - started;
          afterResponse(waitUntil, "code run log write", async () =>
            writeCodeRun(env.DB, caller.workspaceId, await codeRunEntry(run, args, result, inner.length, durationMs)),
          );
        }
        return result;
      }
      // A profile in Code Mode only reaches tools through run_code.
      if (!isDirectCallOffered(catalog, caller.profileId)) return toWire({ kind: "hidden" }, name, stream.passThroughs);
      const run = await runToolCall({
        env,
        catalog,
        publicName: name,
        workspaceId: caller.workspaceId,
        keyId: caller.keyId,
        profileId: caller.profileId,
        arguments: args,
        requestId: newId("req"),
        approvalLinks: links,
        upstream,
        clientCapabilities: stream.session?.capabilities,
      });
      scheduleAfterResponse(env, waitUntil, caller, run);
      return withGatewayLinks(toWire(run.outcome, name, stream.passThroughs), name);
    } finally {
      stream.route.leave(extra.requestId);
    }
  });
  return server;
}

/**
 * The one place a call's deferred work starts: its log rows, and the shadow
 * revision's run with its own rows. Both wait for the response to go out,
 * because a local D1 write or a QuickJS run would otherwise hold the thread.
 */
function scheduleAfterResponse(env: Env, waitUntil: WaitUntil, caller: Caller, run: ToolCallRun, callIndex?: number): void {
  const write = (entries: CallLogEntry[]) => writeLogs(env, caller, run.captureDetails, entries);
  if (run.logs.length) afterResponse(waitUntil, "call log write", () => write(run.logs));
  const shadow = run.shadow;
  if (shadow) {
    // A Code Mode inner call's shadow rows carry its index, like its live rows.
    afterResponse(waitUntil, "shadow run", async () => write((await runShadow(shadow)).map((entry) => ({ ...entry, callIndex }))));
  }
}

/** A call's outcome as MCP puts it on the wire. */
function toWire(outcome: CallOutcome, publicName: string, passThroughs: PassThroughs): CallToolResult {
  switch (outcome.kind) {
    case "result":
      return outcome.result;
    case "raw_result":
      return passThroughs.hold(outcome.raw.bytes);
    case "refused":
      return refusal(outcome.code, outcome.message, outcome.details);
    case "hidden":
      // Unknown and blocked look the same, so a client learns nothing about tools its profile may not use.
      throw new ProtocolError(ErrorCode.InvalidParams, `Unknown tool: ${echoedName(publicName)}`);
    case "upstream_rpc_error":
      throw new UpstreamRpcError(outcome.error);
  }
}

/** How much of a client-supplied name an error repeats: enough to recognise it, never the client's megabyte back. */
export const ECHOED_NAME_CHARS = 128;

export function echoedName(name: string): string {
  if (name.length <= ECHOED_NAME_CHARS) return name;
  // Never end on half of a surrogate pair.
  const end = /[\uD800-\uDBFF]/.test(name.charAt(ECHOED_NAME_CHARS - 1)) ? ECHOED_NAME_CHARS - 1 : ECHOED_NAME_CHARS;
  return `${name.slice(0, end)}…`;
}

async function writeLogs(env: Env, caller: Caller, captureDetails: boolean, entries: CallLogEntry[]): Promise<void> {
  if (!entries.length) return;
  await env.DB.batch(insertLogStatements(env.DB, caller.workspaceId, caller.actor, entries, captureDetails, new Date().toISOString()));
}

/**
 * The upstream's own JSON-RPC error, passed on with its code and message and
 * marked as the upstream's. The SDK server sends a thrown error's `code`,
 * `message` and `data` as they are; McpError would prefix the message again.
 */
export class UpstreamRpcError extends Error {
  readonly code: number;
  readonly data: Record<string, unknown>;

  constructor(upstream: McpError) {
    super(upstream.message.replace(/^MCP error -?\d+: /, ""));
    this.code = upstream.code;
    // The gateway's marker comes last: an upstream cannot send `upstream: false` to pass as the gateway.
    this.data = { ...(isRecord(upstream.data) ? upstream.data : {}), upstream: true };
  }
}

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value);

function jsonRpcError(status: number, code: number, message: string, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify({ jsonrpc: "2.0", error: { code, message }, id: null }), {
    status,
    headers: { "content-type": "application/json", ...headers },
  });
}
