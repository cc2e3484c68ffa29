import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { RequestOptions } from "@modelcontextprotocol/sdk/shared/protocol.js";
import { StreamableHTTPClientTransport, StreamableHTTPError } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type {
  CallToolResult,
  ClientCapabilities,
  CreateTaskResult,
  Result,
  ServerRequest,
  TaskCreationParams,
  Tool,
} from "@modelcontextprotocol/sdk/types.js";
import {
  CreateMessageRequestSchema,
  CreateTaskResultSchema,
  ElicitRequestSchema,
  ErrorCode,
  isJSONRPCNotification,
  ListRootsRequestSchema,
  LoggingMessageNotificationSchema,
  McpError,
} from "@modelcontextprotocol/sdk/types.js";
import { CfWorkerJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/cfworker-provider.js";
import { waitUntil } from "cloudflare:workers";
import type { Client as ModernClient } from "@modelcontextprotocol/client";
import { isStaleSession } from "./upstream-resilience.ts";
import { guardedFetch, UpstreamFailure, type StandaloneStream, type UpstreamTarget } from "./upstream.fetch.ts";
import { asModernFailure, callModernTool, listModernTools, requestModernRelayed, sharedModernClient } from "./upstream.modern.ts";
import { boundMessages } from "./upstream.messages.ts";
import { failingFast, withRequestScope } from "./upstream.scope.ts";
import {
  abortingCall,
  CallCancelled,
  CallDeadline,
  MAX_CALL_DURATION_MS,
  UpstreamTimeout,
  type UpstreamCallOptions,
} from "./upstream.call.ts";
import { SessionPool, type HeldSession } from "./upstream.sessions.ts";

export { MAX_UPSTREAM_RESPONSE_BYTES, UpstreamFailure, type UpstreamFailureCode, type UpstreamTarget } from "./upstream.fetch.ts";
export { discoverUpstream } from "./upstream.modern.ts";

/** A client of one upstream: the v1 SDK's for a 2025-era upstream, the v2 SDK's for a 2026-07-28 one. */
export type UpstreamClient = Client | ModernClient;

export const MAX_TOOLS_PER_SERVICE = 1000;
/** Bytes of all tool definitions of one service, as stored and served by discovery. */
export const MAX_TOOL_LIST_BYTES = 4 * 1024 * 1024;
const MAX_LIST_PAGES = 200;
const INDEX_TIMEOUT_MS = 15_000;
/** Resources, prompts and completion: one answer, no progress, so one plain timeout. */
const REQUEST_TIMEOUT_MS = 30_000;

async function connect(
  target: UpstreamTarget,
  capabilities: ClientCapabilities = {},
  standalone?: StandaloneStream,
  sessionId?: string,
): Promise<Client> {
  const transport = new StreamableHTTPClientTransport(new URL(target.url), {
    fetch: guardedFetch(target.allowList, standalone),
    requestInit: { headers: target.headers },
    // An existing session (a task's): the SDK client sends no initialize on it.
    ...(sessionId ? { sessionId } : {}),
  });
  const client = new Client(
    { name: "rayrun-gateway", version: "0.1.0" },
    { capabilities, jsonSchemaValidator: new CfWorkerJsonSchemaValidator() },
  );
  trackCancellations(transport);
  transports.set(client, transport);
  // A request the client did not declare a capability for is refused at once, saying why, instead of
  // waiting for an answer that cannot come.
  client.fallbackRequestHandler = async (request) => {
    throw new UndeclaredCapability(request.method);
  };
  try {
    await client.connect(transport, { timeout: INDEX_TIMEOUT_MS });
  } catch (error) {
    await client.close().catch(() => {});
    throw asUpstreamFailure(error);
  }
  boundMessages(transport, standalone !== undefined);
  return client;
}

/** The transport of each client `connect` made, for the DELETE that ends its session. */
const transports = new WeakMap<Client, StreamableHTTPClientTransport>();

/**
 * Ends a session the gateway opened: a DELETE naming it (the 2025-era spec's way; an upstream that does not
 * allow it answers 405, which is fine), then the client. Without it every session stays open upstream, with
 * whatever it started (a logging timer, a subscription) still running. Kept alive past the response, which
 * need not wait for it.
 */
function endSession(client: Client): Promise<void> {
  const ended = (async () => {
    await transports
      .get(client)
      ?.terminateSession()
      .catch(() => {});
    await client.close().catch(() => {});
  })();
  waitUntil(ended);
  return ended;
}

/** How long a timed-out call waits for the upstream to be told before it answers anyway. */
const CANCELLATION_SEND_WAIT_MS = 2_000;

/**
 * The SDK client sends `notifications/cancelled` without waiting for it, and rejects the call at once; a timed-out
 * call's answer could then end the Worker's request, and with it that POST, before the upstream was told. Each send
 * is kept by the call whose own abort started it (CallDeadline.cancellations), never in a set shared by the
 * session's calls: a session outlives its requests, and a send of a request that has ended never settles in another.
 */
function trackCancellations(transport: StreamableHTTPClientTransport): void {
  const send = transport.send.bind(transport);
  transport.send = (message, options) => {
    const sent = send(message, options);
    const call = abortingCall();
    if (call && isJSONRPCNotification(message) && message.method === "notifications/cancelled") {
      const settled = sent.then(
        () => {},
        () => {},
      );
      call.cancellations.add(settled);
      void settled.then(() => call.cancellations.delete(settled));
    }
    return sent;
  };
}

/** Waits (briefly) until the call's own cancellations have gone out. */
async function cancellationsSent(call: CallDeadline): Promise<void> {
  const inFlight = [...call.cancellations];
  if (!inFlight.length) return;
  let waited: ReturnType<typeof setTimeout> | undefined;
  await Promise.race([Promise.all(inFlight), new Promise<void>((resolve) => (waited = setTimeout(resolve, CANCELLATION_SEND_WAIT_MS)))]);
  clearTimeout(waited);
}

/** The SDK answers with a thrown error's own `code` and `message` (McpError would prefix the message with "MCP error"). */
class UndeclaredCapability extends Error {
  readonly code = ErrorCode.MethodNotFound;
  constructor(method: string) {
    super(`The client calling through the Rayrun gateway did not declare the capability for ${method}, so the request is refused`);
  }
}

/** Maps anything the SDK throws into our two upstream failure codes (or passes McpError through). */
function asUpstreamFailure(error: unknown): unknown {
  if (error instanceof UpstreamFailure) return error;
  if (error instanceof McpError) {
    if (error.code === ErrorCode.RequestTimeout) return new UpstreamFailure("upstream_unreachable", "The upstream did not answer in time");
    return error;
  }
  if (error instanceof StreamableHTTPError || error instanceof SyntaxError || error instanceof Error) {
    return new UpstreamFailure("upstream_protocol_error", `The upstream did not answer as an MCP server: ${error.message}`);
  }
  return new UpstreamFailure("upstream_protocol_error", "The upstream did not answer as an MCP server");
}

/**
 * Upstream sessions this isolate keeps (see SessionPool). A session costs an open upstream connection and the
 * SDK client's state; past this many, the least recently used is closed once its calls are done.
 */
export const MAX_UPSTREAM_SESSIONS = 128;
/** A pooled session: closing it ends it upstream (DELETE), as every session the gateway opens is ended. */
interface PooledSession {
  client: Client;
  close(): Promise<void>;
}
export const upstreamSessions = new SessionPool<PooledSession>(MAX_UPSTREAM_SESSIONS);

const session = (target: UpstreamTarget) =>
  upstreamSessions.acquire(target.cacheKey, target.credential, async () => {
    const client = await connect(target);
    return { client, close: () => endSession(client) };
  });

/**
 * Lists every tool, following cursors, refusing upstreams over the tool count or byte caps. Uses a fresh session,
 * as a client declaring `capabilities` (an upstream may list some tools only to clients that declare them).
 */
export async function listUpstreamTools(
  target: UpstreamTarget,
  capabilities: ClientCapabilities = {},
): Promise<{ tools: Tool[]; serverInfo: unknown; instructions: string | undefined }> {
  const tools: Tool[] = [];
  let listBytes = 0;
  const onPage = (page: Tool[]) => {
    tools.push(...page);
    if (tools.length > MAX_TOOLS_PER_SERVICE) {
      throw new UpstreamFailure("too_many_tools", `The upstream lists more than ${MAX_TOOLS_PER_SERVICE} tools`);
    }
    listBytes += page.reduce((sum, tool) => sum + JSON.stringify(tool).length, 0);
    if (listBytes > MAX_TOOL_LIST_BYTES) {
      throw new UpstreamFailure("tool_list_too_large", `The upstream's tool definitions exceed ${MAX_TOOL_LIST_BYTES} bytes`);
    }
  };
  if (target.discover) return { tools, ...(await listModernTools(target, capabilities, onPage, MAX_LIST_PAGES)) };
  const client = await connect(target, capabilities);
  try {
    let cursor: string | undefined;
    for (let page = 0; page < MAX_LIST_PAGES; page++) {
      const result = await failingFast(INDEX_TIMEOUT_MS, (options) => client.listTools(cursor ? { cursor } : {}, options)).catch(
        (error: unknown) => {
          throw asUpstreamFailure(error);
        },
      );
      onPage(result.tools);
      cursor = result.nextCursor;
      if (!cursor) return { tools, serverInfo: client.getServerVersion() ?? null, instructions: client.getInstructions() };
    }
    throw new UpstreamFailure("upstream_protocol_error", `tools/list did not finish within ${MAX_LIST_PAGES} pages`);
  } finally {
    await endSession(client);
  }
}

/**
 * One upstream tools/call. Over the isolate's reused session, or, when the
 * client answers server-to-client requests, over a session of its own that
 * declares the client's capabilities and is closed after the call. A session
 * the upstream no longer knows (404, or 400 naming the session) is re-established once: the upstream
 * never processed that request, so retrying cannot repeat a side effect.
 */
export async function callUpstreamTool(
  target: UpstreamTarget,
  name: string,
  args: Record<string, unknown>,
  options: UpstreamCallOptions = {},
): Promise<CallToolResult> {
  if (target.discover) return callModernTool(target, name, args, options);
  const deadline = new CallDeadline(options.signal);
  try {
    for (let attempt = 0; ; attempt++) {
      const relay = options.relay;
      let held: HeldSession<PooledSession> | undefined;
      let client: Client;
      if (relay) client = await relaySession(target, relay, deadline);
      else {
        held = await session(target);
        client = held.session.client;
      }
      let sent = false;
      try {
        await options.beforeSend?.();
        sent = true;
        const call = () =>
          client.callTool({ name, arguments: args }, undefined, {
            signal: deadline.signal,
            // The gateway's own clocks decide; the SDK's request timeout only backs them up.
            timeout: MAX_CALL_DURATION_MS + 1_000,
            onprogress: (progress) => {
              deadline.touch();
              options.onProgress?.(progress);
            },
          });
        const failure = (error: Error) => deadline.fail(error);
        return (await withRequestScope({ fail: failure, rawResult: options.rawResult }, call)) as CallToolResult;
      } catch (error) {
        if (!sent) throw error;
        // The client still waits for this answer; one that cancelled or went away does not, and its request may be gone.
        if (deadline.tripped || deadline.failure) await cancellationsSent(deadline);
        if (deadline.failure) throw deadline.failure;
        if (deadline.tripped) throw new UpstreamTimeout(deadline.tripped);
        if (options.signal?.aborted) throw new CallCancelled(String(options.signal.reason ?? "cancelled"));
        const staleSession = attempt === 0 && isStaleSession(error);
        if (!(error instanceof McpError)) held?.drop();
        if (staleSession) continue;
        throw asUpstreamFailure(error);
      } finally {
        if (held) held.release();
        else void endSession(client);
      }
    }
  } finally {
    deadline.dispose();
  }
}

/**
 * How long a call waits for its relay session's standalone stream to open before it is sent anyway. An
 * upstream answers that GET at once (a stream or 405); one that sits on it only loses what it sends there.
 */
export const STANDALONE_STREAM_WAIT_MS = 2_000;

/**
 * A fresh session for one call, answering the upstream's sampling, elicitation and roots requests through
 * the client, and passing its log messages on. Its standalone stream is open before the call goes out: the SDK server sends a request made
 * without naming the call (`server.createMessage(…)`, `server.elicitInput(…)`) there, and drops it when no
 * such stream exists.
 */
async function relaySession(
  target: UpstreamTarget,
  relay: NonNullable<UpstreamCallOptions["relay"]>,
  deadline: CallDeadline,
): Promise<Client> {
  let settled!: () => void;
  const standaloneOpened = new Promise<void>((resolve) => (settled = resolve));
  const [client] = await Promise.all([connect(target, relay.capabilities, { settled }), relay.ready]);
  answerRequests(client, relay, (work) => deadline.hold(work));
  client.setNotificationHandler(LoggingMessageNotificationSchema, (notification) => {
    // A log line is the upstream showing life, like progress.
    deadline.touch();
    relay.log(notification.params);
  });
  let waited: ReturnType<typeof setTimeout> | undefined;
  await Promise.race([standaloneOpened, new Promise<void>((resolve) => (waited = setTimeout(resolve, STANDALONE_STREAM_WAIT_MS)))]);
  clearTimeout(waited);
  return client;
}

/** Each upstream request the client declared a capability for goes to the relay, with `hold` around the wait for it. */
function answerRequests(
  client: Client,
  relay: NonNullable<UpstreamCallOptions["relay"]>,
  hold: (work: () => Promise<Result>) => Promise<Result>,
): void {
  const forward = (request: ServerRequest, extra: { signal: AbortSignal }) => hold(() => relay.forward(request, extra.signal));
  if (relay.capabilities.sampling) client.setRequestHandler(CreateMessageRequestSchema, forward);
  if (relay.capabilities.elicitation) client.setRequestHandler(ElicitRequestSchema, forward);
  if (relay.capabilities.roots) client.setRequestHandler(ListRootsRequestSchema, forward);
}

/**
 * Any other request (resources, prompts, completion) over the same reused
 * sessions, with the same one re-establishment of a session the upstream no
 * longer knows. `send` gets the client and the call timeout. A request whose
 * client answers input requests (`relayed.relay`) goes as a call does: over a
 * session (or, in 2026-07-28, a client) of its own declaring the client's
 * capabilities, each upstream request forwarded, under the call's clocks.
 */
export async function requestUpstream<T>(
  target: UpstreamTarget,
  send: (client: UpstreamClient, options: RequestOptions) => Promise<T>,
  relayed: Pick<UpstreamCallOptions, "relay" | "signal"> = {},
): Promise<T> {
  if (relayed.relay) return requestRelayed(target, relayed.relay, relayed.signal, send);
  if (target.discover) {
    const client = await sharedModernClient(target);
    // The gateway caches nothing of an upstream's answers: each request goes out.
    return failingFast(REQUEST_TIMEOUT_MS, (options) => send(client, { ...options, cacheMode: "bypass" } as RequestOptions)).catch(
      (error: unknown) => {
        throw asModernFailure(error);
      },
    );
  }
  for (let attempt = 0; ; attempt++) {
    const held = await session(target);
    try {
      return await failingFast(REQUEST_TIMEOUT_MS, (options) => send(held.session.client, options));
    } catch (error) {
      const staleSession = attempt === 0 && isStaleSession(error);
      if (!(error instanceof McpError)) held.drop();
      if (staleSession) continue;
      throw asUpstreamFailure(error);
    } finally {
      held.release();
    }
  }
}

/** One request over a relay: the idle clock held while the client answers, the session (or client) its own. */
async function requestRelayed<T>(
  target: UpstreamTarget,
  relay: NonNullable<UpstreamCallOptions["relay"]>,
  signal: AbortSignal | undefined,
  send: (client: UpstreamClient, options: RequestOptions) => Promise<T>,
): Promise<T> {
  if (target.discover) return requestModernRelayed(target, relay, signal, send);
  const deadline = new CallDeadline(signal);
  try {
    const client = await relaySession(target, relay, deadline);
    try {
      const options = { signal: deadline.signal, timeout: MAX_CALL_DURATION_MS + 1_000 };
      return await withRequestScope({ fail: (error: Error) => deadline.fail(error) }, () => send(client, options));
    } catch (error) {
      if (deadline.tripped || deadline.failure) await cancellationsSent(deadline);
      if (deadline.failure) throw deadline.failure;
      if (deadline.tripped) throw new UpstreamTimeout(deadline.tripped);
      if (signal?.aborted) throw new CallCancelled(String(signal.reason ?? "cancelled"));
      throw asUpstreamFailure(error);
    } finally {
      void endSession(client);
    }
  } finally {
    deadline.dispose();
  }
}

/**
 * A task-augmented tools/call (the 2025-11-25 experimental form): the upstream answers with a task at once and
 * runs the call in the background. A task lives in the upstream session that created it, so the call goes over a
 * session of its own, left open: its id comes back with the task, for the requests that follow it
 * (`upstreamTaskRequest`) and for the DELETE that ends it once the task is done (`endTaskSession`). The session
 * declares the `capabilities` of the client that asked for the task, so the upstream may ask it for input during
 * the task (delivered on `tasks/result`); none is answered during the creation itself.
 */
export async function createUpstreamTask(
  target: UpstreamTarget,
  name: string,
  args: Record<string, unknown>,
  task: TaskCreationParams,
  options: Pick<UpstreamCallOptions, "signal" | "beforeSend"> & { capabilities?: ClientCapabilities },
): Promise<{ created: CreateTaskResult; session: string | undefined }> {
  const client = await connect(target, options.capabilities ?? {});
  try {
    await options.beforeSend?.();
    const created = await failingFast(REQUEST_TIMEOUT_MS, (requestOptions) =>
      client.request({ method: "tools/call", params: { name, arguments: args, task } }, CreateTaskResultSchema, {
        ...requestOptions,
        ...(options.signal ? { signal: AbortSignal.any([options.signal, requestOptions.signal!]) } : {}),
      }),
    );
    const session = transports.get(client)?.sessionId;
    await client.close().catch(() => {});
    return { created, session };
  } catch (error) {
    void endSession(client);
    throw asUpstreamFailure(error);
  }
}

/**
 * One request about a task, over the upstream session it lives in (none: the upstream keeps no sessions). With a
 * relay (a `tasks/result`, on which the upstream delivers the requests its task makes of the client), each upstream
 * request the relay's capabilities cover goes to it, and the rest are refused at once.
 */
export async function upstreamTaskRequest<T>(
  target: UpstreamTarget,
  session: string | undefined,
  timeoutMs: number,
  send: (client: Client, options: RequestOptions) => Promise<T>,
  relayed: Pick<UpstreamCallOptions, "relay" | "signal"> = {},
): Promise<T> {
  const client = await connect(target, relayed.relay?.capabilities ?? {}, undefined, session);
  if (relayed.relay) answerRequests(client, relayed.relay, (work) => work());
  try {
    return await failingFast(timeoutMs, (options) =>
      send(client, relayed.signal ? { ...options, signal: AbortSignal.any([options.signal!, relayed.signal]) } : options),
    );
  } catch (error) {
    throw asUpstreamFailure(error);
  } finally {
    await client.close().catch(() => {});
  }
}

/** The task is done with: the session it lived in is ended upstream (DELETE). */
export async function endTaskSession(target: UpstreamTarget, session: string | undefined): Promise<void> {
  if (!session) return;
  const client = await connect(target, {}, undefined, session).catch(() => null);
  if (client) await endSession(client);
}
