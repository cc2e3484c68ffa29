import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { GATEWAY_META_PREFIX } from "../lib/gateway-meta.ts";
import { joinBytes } from "../services/chunk-reader.ts";

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

  /**
   * `resultType` is the 2026-07-28 discriminator every result carries; an answer on that revision gets it
   * written in front of the upstream's members (a 2025-era upstream's result has none).
   */
  constructor(
    private readonly stampResultType = false,
    private readonly parseHeld = false,
  ) {}

  /** For an answer that leaves in another request than this one (a bridged call's): results are parsed, never held. */
  static parsing(): PassThroughs {
    return new PassThroughs(false, true);
  }

  /** The v1 SDK transport's outgoing messages go through `outgoing`. */
  static on(transport: Transport): PassThroughs {
    const passThroughs = new PassThroughs();
    const send = transport.send.bind(transport);
    transport.send = (message, options) => send(passThroughs.outgoing(message), options);
    return passThroughs;
  }

  /**
   * A message on its way out. The SDK server re-validates a handler's result into a copy; its key order is
   * its own. The message that goes out carries the placeholder alone, in the one spelling the body is
   * searched for.
   */
  outgoing<Message extends object>(message: Message): Message {
    if (!("result" in message) || !("id" in message)) return message;
    const result = message.result as { _meta?: Record<string, unknown> } | undefined;
    const token = result?._meta?.[PLACEHOLDER_KEY];
    if (typeof token === "string" && this.#held.has(token)) return { ...message, result: { [PLACEHOLDER_KEY]: token } };
    return message;
  }

  /** What the tools/call handler answers with for a result that passes through. */
  hold(bytes: readonly Uint8Array[]): CallToolResult {
    if (this.parseHeld) return JSON.parse(new TextDecoder().decode(joinBytes([...bytes]))) as CallToolResult;
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

  /** A JSON answer's body, written here rather than by a transport: the message, with a placeholder replaced. */
  bodyOf(message: object): BodyInit {
    const text = JSON.stringify(this.outgoing(message));
    const parts = this.#held.size === 0 ? null : this.#replace(text);
    return parts ? new Blob(parts) : text;
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
      for (const piece of this.stampResultType ? withResultType(place.bytes) : place.bytes) parts.push(piece);
      from = place.at + place.placeholder.length;
      this.#held.delete(place.token);
    }
    parts.push(encoder.encode(text.slice(from)));
    return parts;
  }
}

const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const isJsonSpace = (byte: number) => byte === 0x20 || byte === 0x09 || byte === 0x0a || byte === 0x0d;

/** A result object's bytes with `"resultType":"complete"` as its first member (the object is known to start with `{`). */
function withResultType(bytes: readonly Uint8Array[]): Uint8Array[] {
  const pieces = bytes.filter((piece) => piece.byteLength > 0);
  const first = pieces[0];
  if (!first || first[0] !== OPEN_BRACE) return [...bytes];
  // The first member after the brace, across pieces: an empty object takes no comma.
  let next: number | undefined;
  let offset = 1;
  for (const piece of pieces) {
    for (; offset < piece.byteLength; offset++) if (!isJsonSpace(piece[offset]!)) break;
    if (offset < piece.byteLength) {
      next = piece[offset];
      break;
    }
    offset = 0;
  }
  const stamp = encoder.encode(next === CLOSE_BRACE ? '{"resultType":"complete"' : '{"resultType":"complete",');
  return [stamp, first.subarray(1), ...pieces.slice(1)];
}
