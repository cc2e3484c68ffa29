import type { RequestHandlerExtra } from "@modelcontextprotocol/sdk/shared/protocol.js";
import {
  CreateMessageResultSchema,
  ElicitResultSchema,
  ListRootsResultSchema,
  type ProgressToken,
  type LoggingLevel,
  type RequestId,
  type ServerNotification,
  type ServerRequest,
} from "@modelcontextprotocol/sdk/types.js";
import { MAX_CALL_DURATION_MS, type UpstreamCallOptions } from "../services/upstream.call.ts";
import { isRequestShaped } from "./mcp.body.ts";
import { relayedCapabilities } from "./mcp.capabilities.ts";
import { passesLogLevel } from "./mcp.logging.ts";
import type { PassThroughs } from "./mcp.passthrough.ts";
import type { CallRoute } from "./mcp.relay.ts";
import type { GatewaySession } from "./mcp.session.ts";

/** What each tools/call of one POST needs to stream: the caller's session, its call route, and the disconnect signal. */
export interface CallStreaming {
  session: GatewaySession | null;
  route: CallRoute;
  disconnected: AbortSignal;
  /** Results this POST's answer carries as the upstream's bytes. */
  passThroughs: PassThroughs;
}

const answersRequests = (session: GatewaySession | null) => Object.keys(relayedCapabilities(session?.capabilities)).length > 0;

/**
 * The requests whose upstream may ask the client for input mid-request, relayed on the request's own stream
 * (`tasks/result`, and `tasks/get` of a task waiting for input: a 2025-11-25 upstream delivers its task's requests on
 * the former, and the gateway passes them on either).
 */
const RELAYING_METHODS = new Set(["tools/call", "prompts/get", "resources/read", "tasks/result", "tasks/get"]);

/**
 * Whether this POST is answered as an SSE stream: only when the client accepts
 * one and a request in it needs one (a call that asked for progress, or a call,
 * prompt, resource read or task poll whose session answers server-to-client requests).
 * Everything else stays plain JSON.
 */
export function wantsEventStream(request: Request, parsedBody: unknown, session: GatewaySession | null): boolean {
  const accept = request.headers.get("accept") ?? "";
  if (!accept.includes("text/event-stream")) return false;
  const messages = Array.isArray(parsedBody) ? parsedBody : [parsedBody];
  return messages.some((message) => {
    if (!isRequestShaped(message) || !RELAYING_METHODS.has(message.method)) return false;
    const meta = message.params?._meta as { progressToken?: unknown } | undefined;
    return (message.method === "tools/call" && meta?.progressToken !== undefined) || answersRequests(session);
  });
}

/**
 * The answer as the client gets it: passed-through results in their
 * placeholders' place, and, for an SSE answer, a client going away aborts
 * `disconnected`, so the upstream request is cancelled too (the SDK transport
 * only forgets the stream).
 */
export async function answerOut(response: Response, disconnected: AbortController, passThroughs: PassThroughs): Promise<Response> {
  if (!response.body || !response.headers.get("content-type")?.startsWith("text/event-stream")) return passThroughs.jsonOut(response);
  const reader = response.body.getReader();
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      const { done, value } = await reader.read();
      if (done) controller.close();
      else for (const chunk of passThroughs.chunkOut(value)) controller.enqueue(chunk);
    },
    cancel(reason) {
      disconnected.abort("the client disconnected");
      return reader.cancel(reason);
    },
  });
  return new Response(body, response);
}

type CallExtra = RequestHandlerExtra<ServerRequest, ServerNotification>;

/**
 * What every tools/call hands its upstream request: cancellation, by the client (a `notifications/cancelled`
 * routed to `route`) or by its going away (`disconnected`), or by whatever else `signals` stand for.
 */
export function callOptions(
  requestId: RequestId,
  route: CallRoute,
  disconnected: AbortSignal,
  ...signals: AbortSignal[]
): UpstreamCallOptions {
  return { signal: AbortSignal.any([route.enter(requestId), disconnected, ...signals]) };
}

/**
 * What a streamed tools/call (or prompts/get, resources/read) hands the upstream request: the client's progress
 * under its own token, cancellation from the client (a routed
 * `notifications/cancelled` or a dropped connection), and, for a session that
 * declared sampling, elicitation or roots, each upstream request and log
 * message relayed to the client on this call's stream.
 */
export function streamedCallOptions(
  request: { params?: { _meta?: { progressToken?: ProgressToken } } },
  extra: CallExtra,
  route: CallRoute,
  session: GatewaySession | null,
  disconnected: AbortSignal,
): UpstreamCallOptions {
  const progressToken = request.params?._meta?.progressToken;
  const options = callOptions(extra.requestId, route, disconnected, extra.signal);
  if (progressToken !== undefined) {
    options.onProgress = (progress) =>
      void extra
        .sendNotification({ method: "notifications/progress", params: { ...progress, progressToken } })
        .catch((error: unknown) => console.error("progress not delivered", error));
  }
  const capabilities = relayedCapabilities(session?.capabilities);
  if (Object.keys(capabilities).length) {
    let minimumLogLevel: LoggingLevel | null = null;
    options.relay = {
      capabilities,
      forward: (relayed, signal) => {
        route.listen();
        const schema =
          relayed.method === "sampling/createMessage"
            ? CreateMessageResultSchema
            : relayed.method === "elicitation/create"
              ? ElicitResultSchema
              : ListRootsResultSchema;
        return extra.sendRequest(relayed, schema, { signal, timeout: MAX_CALL_DURATION_MS });
      },
      // At or above the session's `logging/setLevel`, read while the call's upstream session opens.
      ready: route.logLevel().then(
        (level) => void (minimumLogLevel = level),
        (error: unknown) => console.error("log level not read; relaying every level", error),
      ),
      log: (params) => {
        if (!passesLogLevel(params.level, minimumLogLevel)) return;
        void extra
          .sendNotification({ method: "notifications/message", params })
          .catch((error: unknown) => console.error("log message not delivered", error));
      },
    };
  }
  return options;
}
