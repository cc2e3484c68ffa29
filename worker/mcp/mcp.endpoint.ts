import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import {
  CallToolRequestSchema,
  ErrorCode,
  ListToolsRequestSchema,
  McpError,
  UrlElicitationRequiredError,
  type CallToolResult,
  type ClientCapabilities,
  type JSONRPCMessage,
} from "@modelcontextprotocol/sdk/types.js";
import { CfWorkerJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/cfworker-provider.js";
import { authenticateMcp } from "../auth/mcp-caller.ts";
import type { JsonObject } from "../../schema/hooks/contract.ts";
import { isolateCatalogs, loadCatalog, type Catalog } from "../calls/catalog.ts";
import { toolCallMessage } from "../calls/call-record.ts";
import { callLogMessage, gatewayCallRow, type CallActor } from "../calls/call-rows.ts";
import type { CallOutcome, ToolCallRun } from "../calls/outcome.ts";
import { runToolCall } from "../calls/pipeline.ts";
import { codeRunMessages } from "../codemode/codemode.record.ts";
import { callCodeModeTool, isCodeModeCall, isDirectCallOffered, RUN_CODE, toolsForDiscovery } from "../codemode/codemode.tools.ts";
import { LeaseUnavailable } from "../leases/holder.ts";
import { afterResponse, type WaitUntil } from "../lib/after-response.ts";
import { newId } from "../lib/ids.ts";
import type { CallRowOutcome } from "../logs/call-log.ts";
import { sendCallLogs } from "../logs/call-log.send.ts";
import { MAX_BODY_BYTES, readJsonBody } from "./mcp.body.ts";
import { CONTENT_CAPABILITIES, isInitialize, registerContentHandlers, withGatewayLinks } from "./mcp.content.ts";
import { BATCH_REFUSAL_CODE, batchRefusal, ProtocolError, withWildcardAcceptSpelledOut } from "./mcp.hygiene.ts";
import { gatewayInstructions } from "./mcp.instructions.ts";
import { registerLogLevelHandler } from "./mcp.logging.ts";
import { refusal, refusalCode } from "./mcp.results.ts";
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
  /** An OAuth caller's grant, named by the user who gave it; null for a key. */
  grantedBy: string | null;
  /** The API key or OAuth grant behind the call (mcp-caller.ts): relay routes are scoped by it. */
  credential: string;
  profileId: string | null;
  /** Whose upstream grants the caller's calls use on services authorized per user (mcp-caller.ts). */
  grantSubject: string;
  origin: string;
  /**
   * Whether the request's credentials still authenticate this same caller (not revoked, same profile): a Code
   * Mode run asks before each inner call, since a run lasts up to a minute and a key may be revoked meanwhile.
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
  try {
    return await serveMcp(env, request, ctx);
  } catch (error) {
    if (!(error instanceof LeaseUnavailable)) throw error;
    console.error("no lease for /mcp", error);
    return jsonRpcError(503, ErrorCode.InternalError, WORKSPACE_UNAVAILABLE, { "retry-after": "1" });
  }
}

const WORKSPACE_UNAVAILABLE = "The workspace's current policy could not be confirmed (its Durable Object did not answer); retry shortly";

async function serveMcp(env: Env, request: Request, ctx: ExecutionContext): Promise<Response> {
  const auth = await authenticateMcp(env, request, (promise) => ctx.waitUntil(promise));
  if (auth.kind === "refused") return jsonRpcError(auth.status, ErrorCode.InvalidRequest, auth.message, auth.headers);
  const caller: Caller = {
    workspaceId: auth.workspaceId,
    keyId: auth.actorId,
    actor: auth.actor,
    grantedBy: auth.grantedBy,
    credential: auth.credential,
    profileId: auth.profileId,
    grantSubject: auth.grantSubject,
    origin: new URL(request.url).origin,
    stillAuthorized: async () => {
      const again = await authenticateMcp(env, request, (promise) => ctx.waitUntil(promise));
      return (
        again.kind === "caller" &&
        again.workspaceId === auth.workspaceId &&
        again.actorId === auth.actorId &&
        again.credential === auth.credential &&
        again.profileId === auth.profileId
      );
    },
  };
  const body = await readJsonBody(withWildcardAcceptSpelledOut(request));
  const refusedBatch = batchRefusal(body.request, body.parsedBody);
  if (refusedBatch) return jsonRpcError(400, BATCH_REFUSAL_CODE, refusedBatch);
  const session = await resolveSession(env, request, caller, "parsedBody" in body ? body.parsedBody : undefined);
  if (session instanceof Response) return session;
  const routeKey = routeKeyOf(caller, session.routeSignature);
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
  // Inside a request handler a missing lease is that request's JSON-RPC error; the call handler refuses instead.
  const leasedCatalog = async (): Promise<Catalog> => {
    try {
      return await loadCatalog(env, caller.workspaceId, waitUntil);
    } catch (error) {
      if (!(error instanceof LeaseUnavailable)) throw error;
      console.error("no lease for an MCP request", error);
      throw new ProtocolError(ErrorCode.InternalError, WORKSPACE_UNAVAILABLE);
    }
  };
  registerContentHandlers(server, { env, ...caller, loadCatalog: leasedCatalog, waitUntil });
  registerLogLevelHandler(server, stream);

  server.setRequestHandler(ListToolsRequestSchema, async () => {
    const catalog = await leasedCatalog();
    return { tools: toolsForDiscovery(catalog, caller.profileId, stream.session?.capabilities) };
  });

  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const upstream = streamedCallOptions(request, extra, stream.route, stream.session, stream.disconnected);
    const name = request.params.name;
    const args = (request.params.arguments ?? {}) as JsonObject;
    const requestId = newId("req");
    const startedAt = Date.now();
    const actor = callActor(caller);
    // A call that ends before or outside the pipeline (Code Mode's own tools, a profile without direct tools, a
    // gateway failure) still gets its row.
    const gatewayCall = (answer: unknown, outcome: CallRowOutcome, code: string | null) =>
      afterResponse(waitUntil, "call log", () =>
        sendCallLogs(env, [
          callLogMessage(
            gatewayCallRow(actor, {
              requestId,
              callIndex: null,
              name,
              arguments: args,
              answer,
              startedAt,
              durationMs: Date.now() - startedAt,
              outcome,
              code,
            }),
            [],
            false,
          ),
        ]),
      );
    let run: ToolCallRun | undefined;
    try {
      let catalog: Catalog;
      try {
        catalog = await loadCatalog(env, caller.workspaceId, waitUntil);
      } catch (error) {
        if (!(error instanceof LeaseUnavailable)) throw error;
        console.error("no lease for a tools/call", error);
        const refused = unavailableCall(caller.workspaceId, name);
        gatewayCall(refused, "refused", refusalCode(refused));
        return refused;
      }
      const links = approvalLinks(env, caller.origin, caller.workspaceId);
      if (isCodeModeCall(catalog, caller.profileId, name)) {
        const { result, inner } = await callCodeModeTool(
          {
            env,
            catalog,
            loadCatalog: leasedCatalog,
            ...caller,
            requestId,
            approvalLinks: links,
            signal: upstream.signal,
          },
          name,
          args,
        );
        if (name === RUN_CODE) {
          const timing = { requestId, startedAt, durationMs: Date.now() - startedAt };
          afterResponse(waitUntil, "code run log", async () =>
            sendCallLogs(env, await codeRunMessages(actor, timing, args, result, inner)),
          );
        } else gatewayCall(result, result.isError ? "refused" : "ok", result.isError ? refusalCode(result) : null);
        return result;
      }
      // A profile in Code Mode only reaches tools through run_code.
      if (!isDirectCallOffered(catalog, caller.profileId)) {
        gatewayCall(null, "hidden", null);
        return toWire({ kind: "hidden" }, name, stream);
      }
      run = await runToolCall({
        env,
        catalog,
        publicName: name,
        workspaceId: caller.workspaceId,
        keyId: caller.keyId,
        profileId: caller.profileId,
        arguments: args,
        requestId,
        approvalLinks: links,
        upstream,
        clientCapabilities: stream.session?.capabilities,
        grantSubject: caller.grantSubject,
      });
      const finished = run;
      const raw = run.outcome.kind === "raw_result" ? run.outcome.raw.bytes : null;
      let wire: CallToolResult | null = null;
      try {
        wire = withGatewayLinks(toWire(run.outcome, name, stream), name);
        return wire;
      } finally {
        const recorded = { requestId, callIndex: null, name, arguments: args, answer: raw ?? wire };
        afterResponse(waitUntil, "call log", async () => sendCallLogs(env, [await toolCallMessage(actor, recorded, finished)]));
      }
    } catch (error) {
      // The pipeline itself broke (not a refusal: those are outcomes); the client gets the SDK's internal error.
      if (!run && !(error instanceof ProtocolError)) gatewayCall(null, "error", "internal_error");
      throw error;
    } finally {
      stream.route.leave(extra.requestId);
    }
  });
  return server;
}

/** Who made a call, as its call rows record it. */
const callActor = (caller: Caller): CallActor => ({
  workspaceId: caller.workspaceId,
  actor: caller.actor,
  keyId: caller.keyId,
  grantedBy: caller.grantedBy,
  profileId: caller.profileId,
});

/**
 * A tools/call with no lease to run under: fails closed, as `hook_unavailable`
 * for a tool this isolate last knew with a hook, else `workspace_unavailable`
 * (a block or a first deployment may be pending either way).
 */
function unavailableCall(workspaceId: string, name: string): CallToolResult {
  const known = isolateCatalogs.lastRead(workspaceId);
  const uid = known?.tools.get(name)?.uid;
  if (uid && known?.deployments.get(uid)?.active) {
    return refusal("hook_unavailable", "The tool's hook could not be confirmed current, so the call was stopped", {
      tool: echoedName(name),
    });
  }
  return refusal("workspace_unavailable", "The workspace's current policy could not be confirmed, so the call was stopped", {
    tool: echoedName(name),
  });
}

/** A call's outcome as MCP puts it on the wire. */
function toWire(outcome: CallOutcome, publicName: string, stream: Pick<CallStreaming, "passThroughs" | "session">): CallToolResult {
  switch (outcome.kind) {
    case "result":
      return outcome.result;
    case "raw_result":
      return stream.passThroughs.hold(outcome.raw.bytes);
    case "refused":
      if (outcome.code === "upstream_authorization_required") urlElicitation(outcome, stream.session?.capabilities);
      return refusal(outcome.code, outcome.message, outcome.details);
    case "hidden":
      // Unknown and blocked look the same, so a client learns nothing about tools its profile may not use.
      throw new ProtocolError(ErrorCode.InvalidParams, `Unknown tool: ${echoedName(publicName)}`);
    case "upstream_rpc_error":
      throw new UpstreamRpcError(outcome.error);
  }
}

/**
 * A caller who must authorize their own upstream grant, through a client that
 * declared URL-mode elicitation: the MCP spec's URLElicitationRequiredError
 * (-32042), whose URL the client shows the user. Other clients get the
 * refusal as an `isError` result with the URL in its details.
 */
function urlElicitation(outcome: Extract<CallOutcome, { kind: "refused" }>, capabilities: ClientCapabilities | undefined): void {
  const url = outcome.details.authorizationUrl;
  if (typeof url !== "string" || !capabilities?.elicitation?.url) return;
  throw new UrlElicitationRequiredError([{ mode: "url", elicitationId: newId("eli"), url, message: outcome.message }], outcome.message);
}

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
