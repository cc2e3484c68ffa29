import { DurableObject } from "cloudflare:workers";
import type { LoggingLevel } from "@modelcontextprotocol/sdk/types.js";
import { MAX_SESSION_AGE_MS } from "./mcp.session.ts";

/** Which waiting call a routed message is for: by the relayed request's call token, or by the client's tools/call id. */
export type RelayTarget = { callToken: string } | { requestId: string };

/** How long a message waits for a call that has not started listening yet (it may still be starting). */
export const RELAY_HOLD_MS = 60_000;
/** Messages held per route at most; the oldest go first. */
const MAX_HELD = 256;
/**
 * Bytes of held messages per route at most; the oldest go first, but the newest is always kept (a call's result on
 * its way to the retry that waits for it may be as large as an upstream's answer). A message is as large as the
 * client's POST (4 MiB), so counted by number alone, one key's 256 answers to relayed requests no call waited for
 * held a gigabyte in the object's isolate, which other routes' objects may share, for as long as the object lived.
 */
export const MAX_HELD_BYTES = 8 * 1024 * 1024;

interface Listener {
  requestIds: ReadonlySet<string>;
  writer: WritableStreamDefaultWriter<Uint8Array>;
}

/**
 * Routes client messages to the call that waits for them, across isolates.
 * The gateway is stateless, so a client's `notifications/cancelled` and its
 * answer to a relayed sampling or elicitation request arrive as new POSTs,
 * maybe in another isolate than the call's. One instance per route (an MCP
 * session, or an API key for clients without one). Messages are never
 * stored: a call listens on a stream for as long as it runs, and a message
 * that arrives before its call listens is held briefly in memory. The one
 * stored value is a session's `logging/setLevel`, deleted when the session
 * id expires.
 */
export class CallRelayDO extends DurableObject<Env> {
  readonly #listeners = new Map<string, Listener>();
  #held: { target: RelayTarget; line: Uint8Array; at: number }[] = [];

  /** The messages for one in-flight HTTP request's calls, one JSON line each, until the caller cancels the stream. */
  listen(callToken: string, requestIds: string[]): ReadableStream<Uint8Array> {
    const { readable, writable } = new TransformStream<Uint8Array, Uint8Array>();
    const listener: Listener = { requestIds: new Set(requestIds), writer: writable.getWriter() };
    this.#listeners.set(callToken, listener);
    // The caller cancelling its end closes ours; the listener goes with it.
    listener.writer.closed.then(
      () => this.#forget(callToken, listener),
      () => this.#forget(callToken, listener),
    );
    const now = Date.now();
    this.#held = this.#held.filter((held) => {
      if (now - held.at > RELAY_HOLD_MS) return false;
      if (!matches(callToken, listener, held.target)) return true;
      void listener.writer.write(held.line).catch(() => {});
      return false;
    });
    return readable;
  }

  /** Passes one message to the listening call, or holds it for a call still starting. */
  deliver(target: RelayTarget, message: unknown): void {
    const line = new TextEncoder().encode(`${JSON.stringify(message)}\n`);
    let delivered = false;
    for (const [callToken, listener] of this.#listeners) {
      if (!matches(callToken, listener, target)) continue;
      delivered = true;
      void listener.writer.write(line).catch(() => this.#forget(callToken, listener));
    }
    if (delivered) return;
    const now = Date.now();
    this.#held = this.#held.filter((held) => now - held.at <= RELAY_HOLD_MS);
    this.#held.push({ target, line, at: now });
    let bytes = this.#held.reduce((sum, held) => sum + held.line.byteLength, 0);
    while (this.#held.length > 1 && (this.#held.length > MAX_HELD || bytes > MAX_HELD_BYTES)) {
      bytes -= this.#held.shift()!.line.byteLength;
    }
  }

  /** The session's minimum level for relayed upstream log messages, kept as long as its id is honoured. */
  async setLogLevel(level: LoggingLevel): Promise<void> {
    await this.ctx.storage.put("logLevel", level);
    await this.ctx.storage.setAlarm(Date.now() + MAX_SESSION_AGE_MS);
  }

  async logLevel(): Promise<LoggingLevel | null> {
    return (await this.ctx.storage.get<LoggingLevel>("logLevel")) ?? null;
  }

  /** The session id has expired: nothing is left to use the level. */
  override async alarm(): Promise<void> {
    await this.ctx.storage.deleteAll();
  }

  #forget(callToken: string, listener: Listener): void {
    if (this.#listeners.get(callToken) === listener) this.#listeners.delete(callToken);
  }
}

function matches(callToken: string, listener: Listener, target: RelayTarget): boolean {
  return "callToken" in target ? target.callToken === callToken : listener.requestIds.has(target.requestId);
}
