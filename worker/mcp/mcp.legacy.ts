import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import {
  CallToolRequestSchema,
  CancelTaskRequestSchema,
  GetTaskPayloadRequestSchema,
  GetTaskRequestSchema,
  CompleteRequestSchema,
  GetPromptRequestSchema,
  ListPromptsRequestSchema,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  ReadResourceRequestSchema,
  SetLevelRequestSchema,
  type JSONRPCMessage,
} from "@modelcontextprotocol/sdk/types.js";
import { CfWorkerJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/cfworker-provider.js";
import type { JsonObject } from "../../schema/hooks/contract.ts";
import { MAX_BODY_BYTES, type ReadBody } from "./mcp.body.ts";
import { CONTENT_CAPABILITIES, isInitialize, registerContentHandlers, type OnContentRequest } from "./mcp.content.ts";
import type { GatewayCore } from "./mcp.caller.ts";
import { callTool, coreCatalog, listTools, taskResult } from "./mcp.core.ts";
import { answerToolCall, directToolCall } from "./mcp.direct-call.ts";
import { gatewayInstructions } from "./mcp.instructions.ts";
import { PassThroughs } from "./mcp.passthrough.ts";
import { cancelTask, getTask, TASK_CAPABILITIES } from "./mcp.tasks.ts";
import { relayTaskInputOnPoll } from "./mcp.tasks.input.ts";
import { CallRoute, routeClientMessages, routeKeyOf } from "./mcp.relay.ts";
import { resolveSession } from "./mcp.session.ts";
import { answerOut, streamedCallOptions, wantsEventStream, type CallStreaming } from "./mcp.streaming.ts";

/**
 * The 2025-era layer (2025-11-25, 2025-06-18, 2025-03-26): the v1 SDK server
 * over its web-standard Streamable HTTP transport, with the gateway's signed
 * session ids carrying what `initialize` declared, and cancellations and
 * answers to relayed server-to-client requests routed through CallRelayDO.
 */
export async function serveLegacy(core: GatewayCore, request: Request, body: ReadBody): Promise<Response> {
  const { env, caller } = core;
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
  const direct = parsedBody === undefined ? undefined : directToolCall(body.request, parsedBody, session.session);
  if (direct) return answerToolCall(core, request, direct, { session: session.session, route: new CallRoute(env, routeKey) });
  const issued = session.issued;
  // Only initialize carries instructions, so only it reads the catalog before the SDK server exists.
  const instructions = isInitialize(body) ? gatewayInstructions(await coreCatalog(core), caller.profileId) : undefined;
  const transport = new WebStandardStreamableHTTPServerTransport({
    sessionIdGenerator: issued ? () => issued : undefined,
    enableJsonResponse: !wantsEventStream(body.request, parsedBody, session.session),
    maxRequestBodySize: MAX_BODY_BYTES,
  });
  const disconnected = new AbortController();
  // A client that goes away before a JSON answer (`enable_request_signal`); a streamed call also sees its stream cancelled.
  request.signal.addEventListener("abort", () => disconnected.abort("the client disconnected"), { once: true });
  const passThroughs = PassThroughs.on(transport);
  const server = legacyServer(core, instructions, {
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

function legacyServer(core: GatewayCore, instructions: string | undefined, stream: CallStreaming): Server {
  const server = new Server(
    { name: "rayrun", version: "0.1.0" },
    {
      capabilities: { tools: { listChanged: false }, ...CONTENT_CAPABILITIES, tasks: TASK_CAPABILITIES },
      jsonSchemaValidator: new CfWorkerJsonSchemaValidator(),
      instructions,
    },
  );
  registerContentHandlers(onContentRequest(server, stream), {
    env: core.env,
    ...core.caller,
    loadCatalog: () => coreCatalog(core),
    waitUntil: core.waitUntil,
  });
  registerLogLevelHandler(server, stream);

  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: await listTools(core, stream.session?.capabilities) }));

  // Tasks the gateway created for this caller (mcp.tasks.ts); `tasks/list` is not offered.
  // A task waiting for input has its requests relayed on the poll's stream, for a session that answers them.
  server.setRequestHandler(GetTaskRequestSchema, async (request, extra) => {
    const relayed = streamedCallOptions(request, extra, stream.route, stream.session, stream.disconnected);
    const catalog = await coreCatalog(core);
    try {
      return await getTask(core, catalog, request.params.taskId, (task) => relayTaskInputOnPoll(core, catalog, task, relayed));
    } finally {
      stream.route.leave(extra.requestId);
    }
  });
  // The upstream delivers the requests its task makes of the client on tasks/result: relayed on this request's stream.
  server.setRequestHandler(GetTaskPayloadRequestSchema, async (request, extra) => {
    const { relay, signal } = streamedCallOptions(request, extra, stream.route, stream.session, stream.disconnected);
    try {
      return await taskResult(core, request.params.taskId, { relay, signal });
    } finally {
      stream.route.leave(extra.requestId);
    }
  });
  server.setRequestHandler(CancelTaskRequestSchema, async (request) => cancelTask(core, await coreCatalog(core), request.params.taskId));

  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const upstream = streamedCallOptions(request, extra, stream.route, stream.session, stream.disconnected);
    try {
      const call = {
        name: request.params.name,
        arguments: (request.params.arguments ?? {}) as JsonObject,
        upstream,
        clientCapabilities: stream.session?.capabilities,
        passThroughs: stream.passThroughs,
        urlElicitationError: true,
      };
      const task = request.params.task;
      return task ? await callTool(core, { ...call, task }) : await callTool(core, call);
    } finally {
      stream.route.leave(extra.requestId);
    }
  });
  return server;
}

const CONTENT_SCHEMAS = {
  "resources/list": ListResourcesRequestSchema,
  "resources/templates/list": ListResourceTemplatesRequestSchema,
  "prompts/list": ListPromptsRequestSchema,
  "resources/read": ReadResourceRequestSchema,
  "prompts/get": GetPromptRequestSchema,
  "completion/complete": CompleteRequestSchema,
} as const;

/**
 * The content handlers on the v1 server, each under its request schema. A prompt or a resource read of a session
 * that answers input requests relays the upstream's requests on its own stream, as a call does.
 */
const onContentRequest =
  (server: Server, stream: CallStreaming): OnContentRequest =>
  (method, handler) =>
    // The map pairs each method with its own schema; TypeScript cannot follow the pairing through the generic.
    server.setRequestHandler(CONTENT_SCHEMAS[method] as typeof ReadResourceRequestSchema, async (request, extra) => {
      if (method !== "prompts/get" && method !== "resources/read") return handler(request as never, {}) as never;
      const { relay, signal } = streamedCallOptions(request, extra, stream.route, stream.session, stream.disconnected);
      try {
        return (await handler(request as never, { relay, signal })) as never;
      } finally {
        stream.route.leave(extra.requestId);
      }
    });

/**
 * `logging/setLevel` is kept for the client's session: the gateway is stateless,
 * so the level goes to the session's call relay object, where a call that
 * relays upstream log messages reads it. Without a session there is nothing to
 * keep it for (each POST stands alone): it is answered and every level relayed.
 */
function registerLogLevelHandler(server: Server, stream: CallStreaming): void {
  server.setRequestHandler(SetLevelRequestSchema, async (request) => {
    if (stream.session) await stream.route.setLogLevel(request.params.level);
    return {};
  });
}
