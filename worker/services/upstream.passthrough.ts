import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { adjacentJoined, appendBytes, ChunkReader, joinBytes, sliceBytes } from "./chunk-reader.ts";
import { SkeletonBuilder } from "./json-skeleton.ts";
import { framedResult } from "./passthrough.qualify.ts";
import { STUB_META_KEY, type RawResult, type RawResultCapture } from "./raw-result.ts";
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
 * gateway would not change (passthrough.qualify.ts), is valid UTF-8 and holds
 * no line break, which the SSE framing around it could not carry; in an SSE
 * answer, only from an event the MCP client reads (unnamed, or named
 * `message`). Anything else takes the parsed path, as before.
 *
 * The answer is read as it arrives (chunk-reader.ts) and decoded piece by
 * piece into a reduction of the message without its long strings
 * (json-skeleton.ts); no string the size of the result is ever built, as
 * allocating one costs a large result more than everything else here.
 */

/** Counts the bytes of an upstream answer as they arrive; throws once they pass the response bound. */
export type ByteCount = (bytes: number) => void;

const encoder = new TextEncoder();
const LF = 10;
/** What the SDK client gets instead of a diverted result: an empty one, which resolves its request, with the capture's token. */
const stubResult = (token: string) => `{"content":[],"_meta":{"${STUB_META_KEY}":"${token}"}}`;

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

const stubMessage = (id: number, capture: RawResultCapture) => `{"jsonrpc":"2.0","id":${id},"result":${stubResult(capture.stubToken)}}`;

/**
 * Decodes an answer as it arrives. The decoder replaces what is not UTF-8
 * with U+FFFD, and an answer holding U+FFFD is never diverted: the bytes of a
 * diverted result are then exactly the UTF-8 of the text that was checked. A
 * byte order mark is kept as a character, so characters and bytes stay in step.
 */
const newDecoder = () => new TextDecoder("utf-8", { fatal: false, ignoreBOM: true });
const REPLACEMENT = "\uFFFD";
/** Fatal: the whole-text fallback reads only valid UTF-8. */
const strictDecoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/**
 * A message that could not be reduced as it came (json-skeleton.ts says when)
 * is read whole, as before: its text, or null when the bytes are not UTF-8.
 */
function wholeText(chunks: readonly Uint8Array[]): string | null {
  try {
    return strictDecoder.decode(joinBytes(chunks));
  } catch {
    return null;
  }
}

/** The capture's record of a diverted result; Code Mode parses it from the bytes, and only then. */
const rawResult = (bytes: Uint8Array[]): RawResult => ({
  bytes,
  parse: () => JSON.parse(new TextDecoder().decode(joinBytes(bytes))) as CallToolResult,
});

/** A JSON answer is one message, read whole by the SDK anyway; its result qualifies or the message goes on unchanged. */
async function divertFromJson(response: Response, id: number, capture: RawResultCapture, count: ByteCount | null): Promise<Response> {
  const chunks: Uint8Array[] = [];
  let byteLength = 0;
  let decodable = true;
  const decoder = newDecoder();
  const skeleton = new SkeletonBuilder();
  const reader = new ChunkReader(response.body!);
  for (let chunk = await reader.read(); chunk; chunk = await reader.read()) {
    try {
      count?.(chunk.byteLength);
    } catch (error) {
      void reader.cancel(error);
      throw error;
    }
    appendBytes(chunks, chunk);
    byteLength += chunk.byteLength;
    const text = decodable ? decoder.decode(chunk, { stream: true }) : "";
    if (text.includes(REPLACEMENT)) decodable = false;
    else skeleton.push(text);
  }
  const headers = new Headers(response.headers);
  headers.delete("content-length");
  const unchanged = () => new Response(new Blob(chunks), { status: response.status, headers });
  if (!decodable || decoder.decode().includes(REPLACEMENT)) return unchanged();
  // A reduction holds no control character, so no line break; a whole text is checked for one.
  const reduced = skeleton.finish();
  const text = reduced ?? wholeText(chunks);
  const found = text === null ? null : framedResult(text, id);
  if (!found || (reduced === null && /[\r\n]/.test(text!))) return unchanged();
  capture.result = rawResult(sliceBytes(chunks, found.before, byteLength - found.after));
  return new Response(stubMessage(id, capture), { status: response.status, headers });
}

/** Lines an event may have and still hold the result (an event name, an id, a retry, the data line). */
const MAX_EVENT_LINES = 16;
/** The start of each line that is kept to tell what the line is: `data:`, or `event:` with a name. */
const LINE_HEAD_CHARS = 32;

/**
 * One SSE event as it arrives: its bytes, and what its lines say, read from
 * their text piece by piece. Only the one data line's value is kept, reduced
 * (json-skeleton.ts); for every other line its head is enough.
 */
class SseEvent {
  readonly chunks: Uint8Array[] = [];
  byteLength = 0;
  /** The data line: where it and its value start, where it ends (its line feed), and the value reduced. */
  data: { lineStart: number; valueStart: number; end: number; reduced: string | null } | null = null;
  /** False once the event cannot be the result to divert: it is then passed on as it came. */
  candidate = true;
  #lines = 0;
  #lineStart = 0;
  #lineChars = 0;
  #head = "";
  #value: { builder: SkeletonBuilder; start: number } | null = null;

  addBytes(bytes: Uint8Array): void {
    appendBytes(this.chunks, bytes);
    this.byteLength += bytes.byteLength;
  }

  /** Characters of the line being read (never a line feed). */
  addText(text: string): void {
    this.#lineChars += text.length;
    if (!this.candidate || !text) return;
    if (text.includes(REPLACEMENT)) {
      this.candidate = false;
      return;
    }
    if (this.#value) return this.#value.builder.push(text);
    if (this.#head.length >= LINE_HEAD_CHARS) return;
    const taken = LINE_HEAD_CHARS - this.#head.length;
    this.#head += text.slice(0, taken);
    // "data:" and the character after it (a space, or the value's first) decide where the value starts.
    if (this.#head.length > 5 && this.#head.startsWith("data:")) {
      this.#startValue();
      if (text.length > taken) this.#value!.builder.push(text.slice(taken));
    }
  }

  /** The line being read ended at the line feed at byte `lf` (of the event); true when it was the empty line that ends the event. */
  endLine(lf: number): boolean {
    const empty = this.#lineChars === 0;
    if (!empty && this.candidate) this.#closeLine(lf);
    this.#lineStart = lf + 1;
    this.#lineChars = 0;
    this.#head = "";
    this.#value = null;
    return empty;
  }

  #startValue(): void {
    const offset = this.#head.charCodeAt(5) === 0x20 ? 6 : 5;
    const builder = new SkeletonBuilder();
    builder.push(this.#head.slice(offset));
    // The field name and its space are ASCII: characters and bytes agree.
    this.#value = { builder, start: this.#lineStart + offset };
  }

  #closeLine(lf: number): void {
    if (++this.#lines > MAX_EVENT_LINES) {
      this.candidate = false;
    } else if (this.#head.startsWith("data:")) {
      // Several data lines join with line breaks, which a diverted result never holds.
      if (this.data) {
        this.candidate = false;
        return;
      }
      if (!this.#value) this.#startValue();
      const value = this.#value!;
      this.data = { lineStart: this.#lineStart, valueStart: value.start, end: lf, reduced: value.builder.finish() };
    } else if (this.#head.startsWith("event:")) {
      // A client ignores an event of another name: the result it reads comes in a later event, which is the one to divert.
      const whole = this.#lineChars <= LINE_HEAD_CHARS;
      if (!whole || !isMessageEventName(this.#head.slice(6))) this.candidate = false;
    }
  }
}

/** An SSE `event:` field's value (after the colon) that names the default event, as MCP clients read it. */
function isMessageEventName(value: string): boolean {
  const name = value.startsWith(" ") ? value.slice(1) : value;
  return name === "" || name === "message";
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
  let event = new SseEvent();
  let untouched = false;
  /** What one chunk of the source lets go on: whole events, or everything once nothing is left to divert. */
  const step = (value: Uint8Array): Uint8Array[] => {
    count?.(value.byteLength);
    const text = untouched || capture.result ? "" : decoder.decode(value, { stream: true });
    if (untouched || capture.result || text.includes("\r")) {
      // Nothing more to divert (or line endings this splitter does not follow): the rest goes as it comes.
      untouched = true;
      const out = [...event.chunks, value];
      event = new SseEvent();
      return out;
    }
    // The text is searched (a native search), and the chunk's line feeds are found in step with the
    // text's: the n-th of one is the n-th of the other.
    const out: Uint8Array[] = [];
    let byteStart = 0;
    let charStart = 0;
    let byteLf = -1;
    for (let charLf = text.indexOf("\n"); charLf >= 0; charLf = text.indexOf("\n", charLf + 1)) {
      byteLf = value.indexOf(LF, byteLf + 1);
      event.addText(text.slice(charStart, charLf));
      charStart = charLf + 1;
      if (!event.endLine(event.byteLength + byteLf - byteStart)) continue;
      event.addBytes(value.subarray(byteStart, byteLf + 1));
      // Not a spread: an event's chunks are the upstream's to multiply, and a spread puts each on the stack.
      for (const chunk of eventOut(event, id, capture)) out.push(chunk);
      event = new SseEvent();
      byteStart = byteLf + 1;
    }
    event.addText(text.slice(charStart));
    if (byteStart < value.byteLength) event.addBytes(value.subarray(byteStart));
    // Events that go on unchanged are views of the same read: one chunk each would let a read of empty
    // events cost the SDK's stream a trip per event.
    return adjacentJoined(out);
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

/** One whole SSE event as the SDK gets it: unchanged, or, for the diverted result, with a stub in its data line. */
function eventOut(event: SseEvent, id: number, capture: RawResultCapture): Uint8Array[] {
  // One result per call: a second one for the same id is the SDK's to reject, not the client's to receive.
  if (capture.result || !event.candidate || !event.data) return event.chunks;
  const { lineStart, valueStart, end, reduced } = event.data;
  const text = reduced ?? wholeText(sliceBytes(event.chunks, valueStart, end));
  const found = text === null ? null : framedResult(text, id);
  if (!found) return event.chunks;
  capture.result = rawResult(sliceBytes(event.chunks, valueStart + found.before, end - found.after));
  return [
    ...sliceBytes(event.chunks, 0, lineStart),
    encoder.encode(`data: ${stubMessage(id, capture)}\n`),
    ...sliceBytes(event.chunks, end + 1, event.byteLength),
  ];
}
