import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { RequestOptions } from "@modelcontextprotocol/sdk/shared/protocol.js";
import { StreamableHTTPClientTransport, StreamableHTTPError } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { CallToolResult, ClientCapabilities, ServerRequest, Tool } from "@modelcontextprotocol/sdk/types.js";
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  ErrorCode,
  isJSONRPCNotification,
  ListRootsRequestSchema,
  LoggingMessageNotificationSchema,
  McpError,
} from "@modelcontextprotocol/sdk/types.js";
import { CfWorkerJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/cfworker-provider.js";
import { isStaleSession, resumesStream } from "./upstream-resilience.ts";
import { divertingResult, type ByteCount } from "./upstream.passthrough.ts";
import { failingFast, requestScope, withRequestScope } from "./upstream.scope.ts";
import {
  abortingCall,
  CallCancelled,
  CallDeadline,
  MAX_CALL_DURATION_MS,
  UpstreamTimeout,
  type UpstreamCallOptions,
} from "./upstream.call.ts";
import { SessionPool, type HeldSession } from "./upstream.sessions.ts";
import { checkUpstreamUrl } from "./url-guard.ts";

/** Why talking to an upstream failed, in the terms the API and MCP endpoint report. */
export type UpstreamFailureCode =
  | "url_not_allowed"
  | "upstream_unreachable"
  /** The upstream answered 401: the credentials sent (none, secret headers or an OAuth token) were refused. */
  | "upstream_unauthorized"
  | "upstream_protocol_error"
  | "upstream_response_too_large"
  | "too_many_tools"
  | "tool_list_too_large";

export class UpstreamFailure extends Error {
  constructor(
    readonly code: UpstreamFailureCode,
    message: string,
    /** With `upstream_unauthorized`: the upstream's `WWW-Authenticate` challenge, where OAuth discovery starts. */
    readonly challenge: string | null = null,
  ) {
    super(message);
    this.name = "UpstreamFailure";
  }
}

/** What the gateway needs to reach one upstream. Headers are already decrypted. */
export interface UpstreamTarget {
  /** Cache key: changes whenever URL or headers change (and, for OAuth, per grant subject). */
  cacheKey: string;
  url: string;
  headers: Record<string, string>;
  /** Names the per-call credential in `headers` (an OAuth token's version); a session is kept only while it is the same. */
  credential?: string;
  allowList: ReadonlySet<string>;
}

export const MAX_TOOLS_PER_SERVICE = 1000;
/**
 * Bytes of one upstream HTTP response (a tool result, a tools/list page). Counted
 * while the body streams in, so an oversized answer is cut off before it is
 * held in memory whole.
 */
export const MAX_UPSTREAM_RESPONSE_BYTES = 8 * 1024 * 1024;
/** Bytes of all tool definitions of one service, as stored and served by discovery. */
export const MAX_TOOL_LIST_BYTES = 4 * 1024 * 1024;
const MAX_LIST_PAGES = 200;
const MAX_REDIRECTS = 5;
const INDEX_TIMEOUT_MS = 15_000;
/** Resources, prompts and completion: one answer, no progress, so one plain timeout. */
const REQUEST_TIMEOUT_MS = 30_000;

/**
 * fetch for upstream traffic: every redirect hop is checked against the URL
 * policy, and connection failures become `upstream_unreachable`. The optional
 * standalone SSE stream (GET without Last-Event-ID) is declined locally on
 * shared sessions, whose server-initiated messages belong to no one call; a
 * call's own relay session opens it (`standalone`), because upstreams (the
 * conformance suite's reference server among them) send sampling and
 * elicitation there rather than on the call's stream. A GET that resumes a
 * call's stream (Last-Event-ID: the upstream closed it to be polled, as the
 * 2025-11-25 spec allows) goes out under the same policy as the call.
 *
 * The SDK client transport calls it with a URL and a JSON string body. Both are
 * used as they are on every hop (a string can be sent again after a redirect),
 * which spares a Request copy and a body read on every call.
 */
function guardedFetch(allowList: ReadonlySet<string>, standalone?: StandaloneStream): typeof fetch {
  return async (input, init) => {
    if (input instanceof Request || (init?.body != null && typeof init.body !== "string")) {
      throw new TypeError("guardedFetch takes a URL and a string body, as the SDK transport sends them");
    }
    const method = (init?.method ?? "GET").toUpperCase();
    if (method === "GET" && !resumesStream(init?.headers)) {
      if (!standalone) return new Response(null, { status: 405 });
      // Whatever the upstream answers (a stream, 405, nothing), the call need not wait any longer.
      return guarded(input, init, method).finally(standalone.settled);
    }
    return guarded(input, init, method);
  };

  async function guarded(input: string | URL, init: RequestInit | undefined, method: string): Promise<Response> {
    let url = new URL(input).href;
    const request = { method, headers: init?.headers, body: init?.body ?? undefined };
    const refuseUnless = (candidate: string) => {
      const verdict = checkUpstreamUrl(candidate, allowList);
      if (!verdict.ok) throw new UpstreamFailure("url_not_allowed", `Upstream URL refused: ${verdict.reason}`);
    };
    refuseUnless(url);
    for (let hop = 0; hop <= MAX_REDIRECTS; hop++) {
      let response: Response;
      try {
        response = await fetch(url, { ...request, redirect: "manual", signal: init?.signal });
      } catch (error) {
        if (init?.signal?.aborted) throw error;
        throw new UpstreamFailure("upstream_unreachable", `Could not connect to the upstream: ${(error as Error).message}`);
      }
      if (response.status === 401) {
        await response.body?.cancel();
        // Refused before it was processed: the request may be sent again with other credentials.
        throw new UpstreamFailure(
          "upstream_unauthorized",
          "The upstream answered 401 Unauthorized",
          response.headers.get("www-authenticate"),
        );
      }
      const location = response.headers.get("location");
      if (response.status < 300 || response.status >= 400 || !location) {
        const count = responseBound(response);
        const diverted = method === "POST" && typeof request.body === "string" ? divertingResult(request.body, response, count) : null;
        return diverted ?? (count ? counted(response, count) : response);
      }
      await response.body?.cancel();
      const next = new URL(location, url);
      refuseUnless(next.toString());
      // The request carries the service's secret headers and the call itself: never to another origin.
      if (next.origin !== new URL(url).origin) {
        throw new UpstreamFailure("url_not_allowed", `Upstream URL refused: it redirects to another origin (${next.origin})`);
      }
      // 301/302/303 would turn the POST into a GET and drop the call; only 307/308 keep it.
      if (response.status !== 307 && response.status !== 308) {
        throw new UpstreamFailure(
          "upstream_protocol_error",
          `The upstream answered ${response.status}; only 307/308 redirects are followed`,
        );
      }
      url = next.toString();
    }
    throw new UpstreamFailure("upstream_protocol_error", `The upstream redirected more than ${MAX_REDIRECTS} times`);
  }
}

/** A relay session's standalone SSE stream: `settled` is called once the upstream has answered its GET, however. */
interface StandaloneStream {
  settled: () => void;
}

/**
 * The bound on a response's body: MAX_UPSTREAM_RESPONSE_BYTES. A declared
 * length over it is refused before reading. Otherwise the body must be
 * counted as it streams (the count throws at the first byte past the bound);
 * null when there is nothing to count, as the runtime never delivers more
 * than the declared length of a body it does not decode.
 */
function responseBound(response: Response): ByteCount | null {
  const tooLarge = () =>
    new UpstreamFailure("upstream_response_too_large", `The upstream's response is larger than ${MAX_UPSTREAM_RESPONSE_BYTES} bytes`);
  const declared = response.headers.get("content-length");
  if (declared !== null && Number(declared) > MAX_UPSTREAM_RESPONSE_BYTES) {
    void response.body?.cancel();
    throw tooLarge();
  }
  // The runtime decodes a compressed body, and the declared length is the encoded one: gzip turns 8 MiB
  // into gigabytes. Only an unencoded body's declared length bounds what is read.
  const encoding = response.headers.get("content-encoding");
  if (declared !== null && (encoding === null || encoding === "identity")) return null;
  if (!response.body) return null;
  // Read by the SDK in the background, an SSE answer's error would not end the request: the scope does.
  const scope = requestScope();
  let received = 0;
  return (bytes) => {
    received += bytes;
    if (received <= MAX_UPSTREAM_RESPONSE_BYTES) return;
    const error = tooLarge();
    scope?.fail(error);
    throw error;
  };
}

/** The response with `count` applied to its body as it streams; its error ends the stream. */
function counted(response: Response, count: ByteCount): Response {
  const counter = new TransformStream<Uint8Array, Uint8Array>({
    transform(chunk, controller) {
      count(chunk.byteLength);
      controller.enqueue(chunk);
    },
  });
  return new Response(response.body!.pipeThrough(counter), response);
}

async function connect(target: UpstreamTarget, capabilities: ClientCapabilities = {}, standalone?: StandaloneStream): Promise<Client> {
  const transport = new StreamableHTTPClientTransport(new URL(target.url), {
    fetch: guardedFetch(target.allowList, standalone),
    requestInit: { headers: target.headers },
  });
  const client = new Client(
    { name: "rayrun-gateway", version: "0.1.0" },
    { capabilities, jsonSchemaValidator: new CfWorkerJsonSchemaValidator() },
  );
  trackCancellations(transport);
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
  return client;
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
export const upstreamSessions = new SessionPool<Client>(MAX_UPSTREAM_SESSIONS);

const session = (target: UpstreamTarget) => upstreamSessions.acquire(target.cacheKey, target.credential, () => connect(target));

/**
 * Lists every tool, following cursors, refusing upstreams over the tool count or byte caps. Uses a fresh session,
 * as a client declaring `capabilities` (an upstream may list some tools only to clients that declare them).
 */
export async function listUpstreamTools(
  target: UpstreamTarget,
  capabilities: ClientCapabilities = {},
): Promise<{ tools: Tool[]; serverInfo: unknown; instructions: string | undefined }> {
  const client = await connect(target, capabilities);
  try {
    const tools: Tool[] = [];
    let listBytes = 0;
    let cursor: string | undefined;
    for (let page = 0; page < MAX_LIST_PAGES; page++) {
      const result = await failingFast(INDEX_TIMEOUT_MS, (options) => client.listTools(cursor ? { cursor } : {}, options)).catch(
        (error: unknown) => {
          throw asUpstreamFailure(error);
        },
      );
      tools.push(...result.tools);
      if (tools.length > MAX_TOOLS_PER_SERVICE) {
        throw new UpstreamFailure("too_many_tools", `The upstream lists more than ${MAX_TOOLS_PER_SERVICE} tools`);
      }
      listBytes += result.tools.reduce((sum, tool) => sum + JSON.stringify(tool).length, 0);
      if (listBytes > MAX_TOOL_LIST_BYTES) {
        throw new UpstreamFailure("tool_list_too_large", `The upstream's tool definitions exceed ${MAX_TOOL_LIST_BYTES} bytes`);
      }
      cursor = result.nextCursor;
      if (!cursor) return { tools, serverInfo: client.getServerVersion() ?? null, instructions: client.getInstructions() };
    }
    throw new UpstreamFailure("upstream_protocol_error", `tools/list did not finish within ${MAX_LIST_PAGES} pages`);
  } finally {
    await client.close().catch(() => {});
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
  const deadline = new CallDeadline(options.signal);
  try {
    for (let attempt = 0; ; attempt++) {
      const relay = options.relay;
      let held: HeldSession<Client> | undefined;
      let client: Client;
      if (relay) client = await relaySession(target, relay, deadline);
      else {
        held = await session(target);
        client = held.session;
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
        else void client.close().catch(() => {});
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
  const forward = (request: ServerRequest, extra: { signal: AbortSignal }) => deadline.hold(() => relay.forward(request, extra.signal));
  if (relay.capabilities.sampling) client.setRequestHandler(CreateMessageRequestSchema, forward);
  if (relay.capabilities.elicitation) client.setRequestHandler(ElicitRequestSchema, forward);
  if (relay.capabilities.roots) client.setRequestHandler(ListRootsRequestSchema, forward);
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

/**
 * Any other request (resources, prompts, completion) over the same reused
 * sessions, with the same one re-establishment of a session the upstream no
 * longer knows. `send` gets the client and the call timeout.
 */
export async function requestUpstream<T>(
  target: UpstreamTarget,
  send: (client: Client, options: RequestOptions) => Promise<T>,
): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    const held = await session(target);
    try {
      return await failingFast(REQUEST_TIMEOUT_MS, (options) => send(held.session, options));
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
