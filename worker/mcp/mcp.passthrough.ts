import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import { isJSONRPCResultResponse, type CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { GATEWAY_META_PREFIX } from "../lib/gateway-meta.ts";

const PLACEHOLDER_KEY = `${GATEWAY_META_PREFIX}passthrough`;
/** A placeholder is written in one small SSE event; bigger chunks are never searched. */
const MAX_PLACEHOLDER_CHUNK_BYTES = 4096;

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/**
 * The results of one POST that pass through as the upstream's bytes
 * (services/upstream.passthrough.ts). The SDK server answers each with a
 * placeholder result naming a token, written as `{"dev.rayrun/passthrough":"<token>"}`;
 * the answer's body gets the upstream's result bytes in that exact text's
 * place, so the client receives the SDK server's own message around the
 * upstream's result, with the client's id. A placeholder never reaches a client
 * with anything of the upstream's in it: at worst it is an empty result.
 */
export class PassThroughs {
  readonly #held = new Map<string, readonly Uint8Array[]>();

  constructor(transport: Transport) {
    // The SDK server re-validates a handler's result into a copy; its key order is its own. The message
    // that goes out carries the placeholder alone, in the one spelling the body is searched for.
    const send = transport.send.bind(transport);
    transport.send = (message, options) => {
      if (isJSONRPCResultResponse(message)) {
        const token = (message.result._meta as Record<string, unknown> | undefined)?.[PLACEHOLDER_KEY];
        if (typeof token === "string" && this.#held.has(token)) return send({ ...message, result: { [PLACEHOLDER_KEY]: token } }, options);
      }
      return send(message, options);
    };
  }

  /** What the tools/call handler answers with for a result that passes through. */
  hold(bytes: readonly Uint8Array[]): CallToolResult {
    const token = crypto.randomUUID();
    this.#held.set(token, bytes);
    return { content: [], _meta: { [PLACEHOLDER_KEY]: token } };
  }

  /** One chunk of an SSE answer, with a placeholder in it replaced by the bytes it stands for. */
  chunkOut(chunk: Uint8Array): Uint8Array[] {
    if (this.#held.size === 0 || chunk.byteLength > MAX_PLACEHOLDER_CHUNK_BYTES) return [chunk];
    const parts = this.#replace(decoder.decode(chunk));
    return parts ?? [chunk];
  }

  /** A JSON answer (one message or a batch), with every placeholder replaced. */
  async jsonOut(response: Response): Promise<Response> {
    if (this.#held.size === 0 || !response.body) return response;
    const text = await response.text();
    const parts = this.#replace(text);
    const headers = new Headers(response.headers);
    headers.delete("content-length");
    return new Response(parts ? new Blob(parts) : text, { status: response.status, headers });
  }

  /** The text split around each placeholder it holds, with the held bytes in between; null when it holds none. */
  #replace(text: string): Uint8Array[] | null {
    const found = [...this.#held]
      .map(([token, bytes]) => {
        const placeholder = JSON.stringify({ [PLACEHOLDER_KEY]: token });
        return { token, bytes, placeholder, at: text.indexOf(placeholder) };
      })
      .filter((place) => place.at >= 0)
      .sort((a, b) => a.at - b.at);
    if (!found.length) return null;
    const parts: Uint8Array[] = [];
    let from = 0;
    for (const place of found) {
      parts.push(encoder.encode(text.slice(from, place.at)));
      // Not a spread: the upstream decides how many pieces its result arrives in.
      for (const piece of place.bytes) parts.push(piece);
      from = place.at + place.placeholder.length;
      this.#held.delete(place.token);
    }
    parts.push(encoder.encode(text.slice(from)));
    return parts;
  }
}
