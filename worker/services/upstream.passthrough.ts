import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { GATEWAY_META_PREFIX } from "../calls/outcome.ts";
import { withoutLongStrings } from "./json-skeleton.ts";
import { requestScope } from "./upstream.scope.ts";

/**
 * Result pass-through. A tools/call result that the gateway would forward
 * unchanged (no `after` stage, no output validation, no projection) need not
 * go through the SDK's schemas and be serialised again: its bytes go from the
 * upstream's answer to the client's. The upstream fetch diverts the answer's
 * `result` value into a capture and hands the SDK client a stub in its place,
 * so the SDK still runs the session, progress, cancellation and relayed
 * requests, and only the payload skips it.
 *
 * A result is diverted only when it parses as one tool-result object that the
 * gateway would not change (see `qualifies`), is valid UTF-8 and holds no line
 * break, which the SSE framing around it could not carry; in an SSE answer,
 * only from an event the MCP client reads (unnamed, or named `message`).
 * Anything else takes the parsed path, as before.
 */

/** A diverted result. */
export interface RawResult {
  /** The upstream's `result` value as the bytes it sent, in the pieces they arrived in. */
  bytes: readonly Uint8Array[];
  /** The same value, parsed for a reader inside the gateway such as Code Mode (the MCP answer never needs it). */
  parse: () => CallToolResult;
}

export class RawResultCapture {
  /** Null when the result took the parsed path. */
  result: RawResult | null = null;
}

/** Counts the bytes of an upstream answer as they arrive; throws once they pass the response bound. */
export type ByteCount = (bytes: number) => void;

const encoder = new TextEncoder();
const LF = 10;
/** What the SDK client gets instead of a diverted result: an empty one, which resolves its request. */
const STUB_RESULT = '{"content":[]}';

/**
 * The upstream's answer to a POST, with the result diverted when the POST is a
 * tools/call made under a capture and the result qualifies; null when nothing
 * can be diverted, and the answer goes to the SDK as it is. `count` (the
 * response bound) sees every byte read here.
 */
export function divertingResult(requestBody: string, response: Response, count: ByteCount | null): Promise<Response> | Response | null {
  const capture = requestScope()?.rawResult;
  if (!capture || !response.ok || !response.body) return null;
  const id = toolsCallId(requestBody);
  if (id === null) return null;
  const type = response.headers.get("content-type") ?? "";
  if (type.startsWith("text/event-stream")) return new Response(divertFromEvents(response.body, id, capture, count), response);
  if (type.startsWith("application/json")) return divertFromJson(response, id, capture, count);
  return null;
}

/** The JSON-RPC id of a tools/call request body (a number, as the SDK client numbers its requests), or null. */
function toolsCallId(body: string): number | null {
  try {
    const message = JSON.parse(body) as { method?: unknown; id?: unknown };
    return message.method === "tools/call" && typeof message.id === "number" ? message.id : null;
  } catch {
    return null;
  }
}

const stubMessage = (id: number) => `{"jsonrpc":"2.0","id":${id},"result":${STUB_RESULT}}`;

/** Bytes read at most per read of an upstream answer. */
const READ_BYTES = 64 * 1024;

/**
 * An upstream answer read in reads of up to READ_BYTES. Read with a default
 * reader, a runtime stream yields one network chunk (about 4 KiB) at a time,
 * and every read is a trip through JavaScript: for a large result that trip,
 * not the bytes, is the cost. A read still returns as soon as any bytes are
 * there, so nothing waits for more. A read that fills less than half its
 * buffer is copied out and the buffer reused, so an upstream sending a trickle
 * of small writes cannot make each one hold a whole buffer.
 */
class ChunkReader {
  readonly #byob: ReadableStreamBYOBReader | null;
  readonly #reader: ReadableStreamBYOBReader | ReadableStreamDefaultReader<Uint8Array>;
  #spare: ArrayBuffer | null = null;

  constructor(source: ReadableStream<Uint8Array>) {
    let byob: ReadableStreamBYOBReader | null = null;
    try {
      byob = source.getReader({ mode: "byob" });
    } catch {
      // Not a byte stream: one chunk per read, as it comes.
    }
    this.#byob = byob;
    this.#reader = byob ?? source.getReader();
  }

  /** The next bytes, or null at the end. */
  async read(): Promise<Uint8Array | null> {
    if (!this.#byob) {
      const { done, value } = await (this.#reader as ReadableStreamDefaultReader<Uint8Array>).read();
      return done ? null : value;
    }
    const { done, value } = await this.#byob.read(new Uint8Array(this.#spare ?? new ArrayBuffer(READ_BYTES)));
    this.#spare = null;
    if (done || !value) return null;
    if (value.byteLength * 2 >= READ_BYTES) return value;
    this.#spare = value.buffer as ArrayBuffer;
    return value.slice();
  }

  cancel(reason: unknown): Promise<void> {
    return this.#reader.cancel(reason);
  }
}

/**
 * Decodes an answer as it arrives, while the upstream is still sending, so
 * only the parse waits for the last byte. The decoder replaces what is not
 * UTF-8 with U+FFFD, and a text holding U+FFFD is never diverted: the bytes
 * of a diverted result are then exactly the UTF-8 of the text that was parsed.
 * A byte order mark is kept as a character, so characters and bytes stay in
 * step.
 */
const newDecoder = () => new TextDecoder("utf-8", { fatal: false, ignoreBOM: true });
const REPLACEMENT = "\uFFFD";

/** One stretch of an answer (a JSON answer, or one SSE event): its bytes, and their text, piece by piece. */
class Stretch {
  readonly chunks: Uint8Array[] = [];
  readonly #pieces: string[] = [];
  byteLength = 0;

  add(bytes: Uint8Array, text: string): void {
    if (bytes.byteLength) this.chunks.push(bytes);
    this.byteLength += bytes.byteLength;
    this.#pieces.push(text);
  }

  /** The whole text, or null when it may not be the UTF-8 of its bytes (it holds U+FFFD). */
  text(): string | null {
    const text = this.#pieces.join("");
    return text.includes(REPLACEMENT) ? null : text;
  }
}

/** A JSON answer is one message, read whole by the SDK anyway; its result qualifies or the message goes on unchanged. */
async function divertFromJson(response: Response, id: number, capture: RawResultCapture, count: ByteCount | null): Promise<Response> {
  const body = new Stretch();
  const decoder = newDecoder();
  const reader = new ChunkReader(response.body!);
  for (let chunk = await reader.read(); chunk; chunk = await reader.read()) {
    try {
      count?.(chunk.byteLength);
    } catch (error) {
      void reader.cancel(error);
      throw error;
    }
    body.add(chunk, decoder.decode(chunk, { stream: true }));
  }
  body.add(new Uint8Array(0), decoder.decode());
  const headers = new Headers(response.headers);
  headers.delete("content-length");
  const text = body.text();
  const found = text === null ? null : resultIn(text, 0, text.length, id);
  // The result's bytes go into an SSE data line when the client streams: a line break would end it.
  if (!found || /[\r\n]/.test(text!.slice(found.start, found.end))) {
    return new Response(new Blob(body.chunks), { status: response.status, headers });
  }
  // The framing around the result is ASCII, so its characters are its bytes.
  capture.result = { bytes: sliceBytes(body.chunks, found.start, body.byteLength - (text!.length - found.end)), parse: found.parse };
  return new Response(stubMessage(id), { status: response.status, headers });
}

/**
 * Where the `result` value sits in the JSON-RPC message `text[from, to)`, when
 * the message is a result for `id` in one of the two layouts servers write
 * (`{"result":…,"jsonrpc":"2.0","id":N}` from the TypeScript SDK,
 * `{"jsonrpc":"2.0","id":N,"result":…}` from others) and the value qualifies
 * for pass-through. Null sends the message down the parsed path.
 */
function resultIn(text: string, from: number, to: number, id: number): { start: number; end: number; parse: () => CallToolResult } | null {
  for (const [prefix, suffix] of [
    ['{"result":', `,"jsonrpc":"2.0","id":${id}}`],
    [`{"jsonrpc":"2.0","id":${id},"result":`, "}"],
  ] as const) {
    const start = from + prefix.length;
    const end = to - suffix.length;
    if (end <= start || !text.startsWith(prefix, from) || !text.startsWith(suffix, end)) continue;
    if (text.charCodeAt(start) !== 0x7b || text.charCodeAt(end - 1) !== 0x7d) return null;
    const result = text.slice(start, end);
    return qualifies(result) ? { start, end, parse: () => JSON.parse(result) as CallToolResult } : null;
  }
  return null;
}

const PLAIN_CONTENT_TYPES = new Set(["text", "image", "audio"]);

/**
 * Whether the text parses as one tool-result object the gateway would forward
 * unchanged. Parsing is what makes the splice safe:
 * the gateway never forwards bytes it has not parsed, so an upstream cannot
 * smuggle extra JSON-RPC members or broken JSON past it by framing its answer
 * cleverly. The native parse is the cheap part of the parsed path; the SDK's
 * schema walk and the re-serialisation are what pass-through saves. Not
 * forwarded unchanged, and so left to the parsed path: `isError` (an upstream
 * error is logged as one), the gateway's own `dev.rayrun/*` metadata (dropped
 * there), and any content block but text, image or audio (resource URIs are
 * mapped). What is parsed is the text without its long string values
 * (json-skeleton.ts): every check below reads member names and content types,
 * never a long value.
 */
function qualifies(text: string): boolean {
  const reduced = withoutLongStrings(text) ?? text;
  let value: unknown;
  try {
    value = JSON.parse(reduced);
  } catch {
    return false;
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) return false;
  if (mayHideAName(reduced) && repeatsAName(reduced, value)) return false;
  const result = value as { content?: unknown; isError?: unknown; _meta?: unknown };
  if ("isError" in result) return false;
  if (typeof result._meta === "object" && result._meta !== null) {
    if (Object.keys(result._meta).some((key) => key.startsWith(GATEWAY_META_PREFIX))) return false;
  }
  return (
    Array.isArray(result.content) &&
    result.content.every(
      (block) => typeof block === "object" && block !== null && PLAIN_CONTENT_TYPES.has((block as { type?: unknown }).type as string),
    )
  );
}

/**
 * A repeated member name only matters where the gateway looks: its own
 * `dev.rayrun/*` metadata and a content block's type (a resource's URI would
 * go out unmapped). Without these spellings, or a `\u` escape that could spell
 * them, in the text, no repeat can change what a client sees, and the
 * JavaScript walk over every character and member below is skipped; the
 * search for the spellings is native.
 */
const SENSITIVE_SPELLINGS = ["dev.rayrun", '"resource', "\\u"];

const mayHideAName = (text: string) => SENSITIVE_SPELLINGS.some((spelling) => text.includes(spelling));

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COLON = 0x3a;

/**
 * Whether some object in the text holds a member name twice. JSON.parse keeps
 * the last one, a client's parser may keep the first (or refuse the answer):
 * a forged `"_meta":{"dev.rayrun/error":…}` followed by `"_meta":{}` would
 * pass the checks above and reach such a client. Every `:` outside a string
 * ends one member's name, so the text declares exactly as many members as the
 * parsed value has only when no name repeats.
 */
function repeatsAName(text: string, value: object): boolean {
  let declared = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const char = text.charCodeAt(i);
    if (inString) {
      if (char === BACKSLASH) i++;
      else if (char === QUOTE) inString = false;
    } else if (char === QUOTE) inString = true;
    else if (char === COLON) declared++;
  }
  let parsed = 0;
  // A stack, not recursion: the nesting is the upstream's to choose.
  const pending: unknown[] = [value];
  while (pending.length) {
    const next = pending.pop();
    if (typeof next !== "object" || next === null) continue;
    if (Array.isArray(next)) {
      for (const item of next) pending.push(item);
      continue;
    }
    for (const [, member] of Object.entries(next)) {
      parsed++;
      pending.push(member);
    }
  }
  return declared !== parsed;
}

/**
 * An SSE answer split into events (an event ends at an empty line). Each event
 * goes to the SDK as it came, except the result for `id`, which is diverted
 * when it qualifies. A stream with a CR anywhere (other line endings) is
 * passed through untouched from there on, as is everything after the diverted
 * result. `count` sees every byte, and its error (the response bound) ends the
 * stream the SDK reads.
 */
function divertFromEvents(
  source: ReadableStream<Uint8Array>,
  id: number,
  capture: RawResultCapture,
  count: ByteCount | null,
): ReadableStream<Uint8Array> {
  const reader = new ChunkReader(source);
  const decoder = newDecoder();
  let event = new Stretch();
  let lastWasLf = false;
  let untouched = false;
  /** What one chunk of the source lets go on: whole events, or everything once nothing is left to divert. */
  const step = (value: Uint8Array): Uint8Array[] => {
    count?.(value.byteLength);
    const text = untouched || capture.result ? "" : decoder.decode(value, { stream: true });
    if (untouched || capture.result || text.includes("\r")) {
      // Nothing more to divert (or line endings this splitter does not follow): the rest goes as it comes.
      untouched = true;
      const out = [...event.chunks, value];
      event = new Stretch();
      return out;
    }
    // Events end at a line feed after a line feed. The text is searched (a native search), and the
    // chunk's line feeds are found in step with the text's: the n-th of one is the n-th of the other.
    const out: Uint8Array[] = [];
    let byteStart = 0;
    let charStart = 0;
    let byteLf = -1;
    for (let charLf = text.indexOf("\n"); charLf >= 0; charLf = text.indexOf("\n", charLf + 1)) {
      byteLf = value.indexOf(LF, byteLf + 1);
      const endsEvent = charLf === 0 ? lastWasLf : text.charCodeAt(charLf - 1) === LF;
      if (!endsEvent) continue;
      event.add(value.subarray(byteStart, byteLf + 1), text.slice(charStart, charLf + 1));
      out.push(...eventOut(event, id, capture));
      event = new Stretch();
      byteStart = byteLf + 1;
      charStart = charLf + 1;
    }
    event.add(value.subarray(byteStart), text.slice(charStart));
    lastWasLf = value[value.byteLength - 1] === LF;
    return out;
  };
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      // A pull must enqueue or close, or the stream waits for ever: read on until an event is whole.
      for (;;) {
        const value = await reader.read();
        if (!value) {
          for (const chunk of event.chunks) controller.enqueue(chunk);
          controller.close();
          return;
        }
        let out: Uint8Array[];
        try {
          out = step(value);
        } catch (error) {
          controller.error(error);
          void reader.cancel(error);
          return;
        }
        for (const chunk of out) controller.enqueue(chunk);
        if (out.length) return;
      }
    },
    cancel(reason) {
      return reader.cancel(reason);
    },
  });
}

/**
 * One whole SSE event as the SDK gets it: unchanged, or, for the diverted
 * result, with a stub in its one data line. The event's text decides; its
 * bytes are cut where that text's characters fall.
 */
function eventOut(event: Stretch, id: number, capture: RawResultCapture): Uint8Array[] {
  // One result per call: a second one for the same id is the SDK's to reject, not the client's to receive.
  if (capture.result) return event.chunks;
  const text = event.text();
  if (text === null) return event.chunks;
  let dataLine: { start: number; end: number } | null = null;
  for (let start = 0; start < text.length;) {
    const end = text.indexOf("\n", start);
    // A client ignores an event of another name: the result it reads comes in a later event, which is the one to divert.
    if (text.startsWith("event:", start) && !isMessageEventName(text.slice(start + 6, end))) return event.chunks;
    if (text.startsWith("data:", start)) {
      // Several data lines join with line breaks, which a diverted result never holds.
      if (dataLine) return event.chunks;
      dataLine = { start, end };
    }
    start = end + 1;
  }
  if (!dataLine) return event.chunks;
  const valueStart = dataLine.start + (text.charCodeAt(dataLine.start + 5) === 0x20 ? 6 : 5);
  const found = resultIn(text, valueStart, dataLine.end, id);
  if (!found) return event.chunks;
  const byteAt = (char: number) => utf8Length(text, 0, char);
  const byteFromEnd = (char: number) => event.byteLength - utf8Length(text, char, text.length);
  capture.result = { bytes: sliceBytes(event.chunks, byteAt(found.start), byteFromEnd(found.end)), parse: found.parse };
  return [
    ...sliceBytes(event.chunks, 0, byteAt(dataLine.start)),
    encoder.encode(`data: ${stubMessage(id)}\n`),
    ...sliceBytes(event.chunks, byteFromEnd(dataLine.end + 1), event.byteLength),
  ];
}

/** An SSE `event:` field's value (after the colon) that names the default event, as MCP clients read it. */
function isMessageEventName(value: string): boolean {
  const name = value.startsWith(" ") ? value.slice(1) : value;
  return name === "" || name === "message";
}

/** The UTF-8 length of `text[from, to)`; the text came from valid UTF-8, so its surrogates are all in pairs. */
function utf8Length(text: string, from: number, to: number): number {
  let bytes = to - from;
  for (let i = from; i < to; i++) {
    const unit = text.charCodeAt(i);
    if (unit < 0x80) continue;
    // Two bytes for U+0080–U+07FF, three for the rest of the BMP, four for a surrogate pair (two units).
    bytes += unit < 0x800 || (unit >= 0xd800 && unit <= 0xdfff) ? 1 : 2;
  }
  return bytes;
}

/** The bytes `[from, to)` of the chunks laid end to end, as views into them. */
function sliceBytes(chunks: readonly Uint8Array[], from: number, to: number): Uint8Array[] {
  const out: Uint8Array[] = [];
  let offset = 0;
  for (const chunk of chunks) {
    const start = Math.max(from - offset, 0);
    const end = Math.min(to - offset, chunk.byteLength);
    if (start < end) out.push(chunk.subarray(start, end));
    offset += chunk.byteLength;
  }
  return out;
}
