import {
  type LoggingLevel,
  isJSONRPCErrorResponse,
  isJSONRPCNotification,
  isJSONRPCResultResponse,
  type JSONRPCMessage,
  type RequestId,
} from "@modelcontextprotocol/sdk/types.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import { isRequestShaped, methodOf } from "./mcp.body.ts";
import type { RelayTarget } from "./call-relay.do.ts";

/**
 * A call starts listening for routed messages once it has run this long, or at
 * once when it relays a request to the client. Quick calls never touch the
 * relay object; a cancellation sent meanwhile is held there until they listen.
 */
export const ROUTE_AFTER_MS = 1_000;

/** The ids the gateway gives the requests it relays to the client: `rr-{callToken}-{n}`, so an answer finds its call. */
const RELAYED_ID = /^rr-([0-9a-f-]{36})-(\d+)$/;

/**
 * Where a caller's messages are routed: its MCP session, or its credential (API key or OAuth grant) when it has
 * none, always inside its workspace. One OAuth client holds grants in several workspaces; keyed by the client
 * alone, one workspace's token could cancel or answer another's calls.
 */
export const routeKeyOf = (caller: { workspaceId: string; credential: string }, sessionSignature: string | null) =>
  `${caller.workspaceId}/${caller.credential}${sessionSignature ? `/session:${sessionSignature}` : ""}`;

const requestKey = (id: RequestId) => JSON.stringify(id);

/**
 * The route of one HTTP request's tools/calls: how a cancellation or a relayed
 * answer that arrives in another POST (maybe in another isolate) reaches them.
 */
export class CallRoute {
  readonly callToken = crypto.randomUUID();
  readonly #cancels = new Map<string, AbortController>();
  #timer: ReturnType<typeof setTimeout> | undefined;
  #listening: ReadableStreamDefaultReader<Uint8Array> | null = null;
  #closed = false;

  /** `transport`, when the calls on this route may relay requests to the client: the answers find them by id. */
  constructor(
    private readonly env: Env,
    private readonly routeKey: string,
    private readonly transport?: Transport,
  ) {
    if (!transport) return;
    // Requests relayed to the client carry this route's token in their id.
    const send = transport.send.bind(transport);
    transport.send = (message, options) =>
      send(isRequestShaped(message) ? { ...message, id: `rr-${this.callToken}-${message.id}` } : message, options);
  }

  /** A call starts; its signal aborts when the client cancels it. */
  enter(requestId: RequestId): AbortSignal {
    const controller = new AbortController();
    this.#cancels.set(requestKey(requestId), controller);
    this.#timer ??= setTimeout(() => this.listen(), ROUTE_AFTER_MS);
    return controller.signal;
  }

  leave(requestId: RequestId): void {
    this.#cancels.delete(requestKey(requestId));
    if (this.#cancels.size === 0) this.close();
  }

  /** Starts listening now (the call is about to wait for the client). */
  listen(): void {
    clearTimeout(this.#timer);
    if (this.#listening || this.#closed) return;
    const stub = this.env.CALL_RELAY.getByName(this.routeKey);
    const opened = stub.listen(this.callToken, [...this.#cancels.keys()]).then((stream) => {
      const reader = stream.getReader();
      if (this.#closed) void reader.cancel();
      else this.#listening = reader;
      return reader;
    });
    void opened
      .then((reader) => this.#read(reader))
      .catch((error: unknown) => {
        // Closing cancels the stream on purpose; anything else means this call cannot be cancelled or answered.
        if (!this.#closed) console.error("call relay listen failed", error);
      });
  }

  /** Keeps the client's `logging/setLevel` for its session (this route). */
  setLogLevel(level: LoggingLevel): Promise<void> {
    return this.env.CALL_RELAY.getByName(this.routeKey).setLogLevel(level);
  }

  /** The session's minimum level for relayed upstream log messages (null: every level). */
  logLevel(): Promise<LoggingLevel | null> {
    return this.env.CALL_RELAY.getByName(this.routeKey).logLevel();
  }

  close(): void {
    this.#closed = true;
    clearTimeout(this.#timer);
    void this.#listening?.cancel().catch(() => {});
  }

  async #read(reader: ReadableStreamDefaultReader<Uint8Array>): Promise<void> {
    const decoder = new TextDecoder();
    let buffered = "";
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      buffered += decoder.decode(value, { stream: true });
      let newline: number;
      while ((newline = buffered.indexOf("\n")) >= 0) {
        this.#receive(JSON.parse(buffered.slice(0, newline)) as JSONRPCMessage);
        buffered = buffered.slice(newline + 1);
      }
    }
  }

  #receive(message: JSONRPCMessage): void {
    if (isJSONRPCNotification(message)) {
      const params = message.params as { requestId?: RequestId; reason?: string } | undefined;
      if (params?.requestId === undefined) return;
      this.#cancels.get(requestKey(params.requestId))?.abort(params.reason ?? "the client cancelled the call");
      return;
    }
    if (isJSONRPCResultResponse(message) || isJSONRPCErrorResponse(message)) {
      const relayed = RELAYED_ID.exec(String(message.id));
      if (relayed?.[1] !== this.callToken) return;
      // Back under the number the SDK server sent it with, so its pending request resolves.
      this.transport?.onmessage?.({ ...message, id: Number(relayed[2]) });
    }
  }
}

/**
 * Sends the client's cancellations and answers to relayed requests to the
 * calls waiting for them. Returns the messages that are neither.
 */
export async function routeClientMessages(env: Env, routeKey: string, messages: JSONRPCMessage[]): Promise<JSONRPCMessage[]> {
  const rest: JSONRPCMessage[] = [];
  const deliveries: Promise<void>[] = [];
  const relay = () => env.CALL_RELAY.getByName(routeKey);
  for (const message of messages) {
    const target = targetOf(message);
    if (target) deliveries.push(relay().deliver(target, message));
    else rest.push(message);
  }
  await Promise.all(deliveries);
  return rest;
}

function targetOf(message: JSONRPCMessage): RelayTarget | null {
  // Requests (every tools/call) are neither; a cheap look at `method` spares them the SDK's schema parses.
  const method = methodOf(message);
  if (method !== undefined && method !== "notifications/cancelled") return null;
  if (method === "notifications/cancelled" && isJSONRPCNotification(message)) {
    const requestId = (message.params as { requestId?: RequestId } | undefined)?.requestId;
    return requestId === undefined ? null : { requestId: requestKey(requestId) };
  }
  if (isJSONRPCResultResponse(message) || isJSONRPCErrorResponse(message)) {
    const callToken = RELAYED_ID.exec(String(message.id))?.[1];
    return callToken ? { callToken } : null;
  }
  return null;
}
