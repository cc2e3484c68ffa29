import { AsyncLocalStorage } from "node:async_hooks";
import { Buffer } from "node:buffer";
import { GATEWAY_META_PREFIX } from "../calls/outcome.ts";

/**
 * Result pass-through. A tools/call result that the gateway would forward
 * unchanged (no `after` stage, no output validation, no projection) need not be
 * decoded, parsed, validated and serialised again: its bytes go from the
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
export class RawResultCapture {
  /** The upstream's `result` value, as the bytes it sent; null when the result took the parsed path. */
  bytes: Uint8Array | null = null;
}

const captures = new AsyncLocalStorage<RawResultCapture>();

/** Runs `work` (one upstream tools/call) so that the fetch it makes may divert its result into `capture`. */
export function capturingRawResult<T>(capture: RawResultCapture, work: () => Promise<T>): Promise<T> {
  return captures.run(capture, work);
}

const encoder = new TextEncoder();
const LF = 10;
const CR = 13;
/** What the SDK client gets instead of a diverted result: an empty one, which resolves its request. */
const STUB_RESULT = '{"content":[]}';

/**
 * The upstream's answer to a POST, with the result diverted when the POST is a
 * tools/call made under a capture and the result qualifies. Anything else is
 * returned as it is.
 */
export async function divertingResult(requestBody: string, response: Response): Promise<Response> {
  const capture = captures.getStore();
  if (!capture || !response.ok || !response.body) return response;
  const id = toolsCallId(requestBody);
  if (id === null) return response;
  const type = response.headers.get("content-type") ?? "";
  if (type.startsWith("text/event-stream")) return new Response(divertFromEvents(response.body, id, capture), response);
  if (!type.startsWith("application/json")) return response;
  // A JSON answer is one message, read whole by the SDK anyway.
  const bytes = new Uint8Array(await response.arrayBuffer());
  const result = resultBytes(bytes, id);
  const headers = new Headers(response.headers);
  headers.delete("content-length");
  if (!result) return new Response(bytes, { status: response.status, headers });
  capture.bytes = result;
  return new Response(stubMessage(id), { status: response.status, headers });
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

/**
 * The `result` value inside one JSON-RPC message, when the message is a result
 * for `id` in one of the two layouts servers write (`{"result":…,"jsonrpc":"2.0","id":N}`
 * from the TypeScript SDK, `{"jsonrpc":"2.0","id":N,"result":…}` from others) and the
 * value qualifies for pass-through. Null sends the message down the parsed path.
 */
function resultBytes(message: Uint8Array, id: number): Uint8Array | null {
  let result: Uint8Array | null = null;
  for (const [prefix, suffix] of [
    ['{"result":', `,"jsonrpc":"2.0","id":${id}}`],
    [`{"jsonrpc":"2.0","id":${id},"result":`, "}"],
  ] as const) {
    if (startsWith(message, prefix) && endsWith(message, suffix)) {
      result = message.subarray(prefix.length, message.byteLength - suffix.length);
      break;
    }
  }
  if (!result || result[0] !== 0x7b || result[result.byteLength - 1] !== 0x7d) return null;
  if (result.indexOf(LF) >= 0 || result.indexOf(CR) >= 0) return null;
  return qualifies(result) ? result : null;
}

/** Fatal: bytes that are not UTF-8 would reach the client as they are, though the gateway parsed their repair. */
const strictDecoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });
const PLAIN_CONTENT_TYPES = new Set(["text", "image", "audio"]);

/**
 * Whether the bytes parse as one tool-result object the gateway would forward
 * unchanged. Parsing is what makes the splice safe: the gateway never forwards
 * bytes it has not parsed, so an upstream cannot smuggle extra JSON-RPC members
 * or broken JSON past it by framing its answer cleverly. The native parse is
 * the cheap part of the parsed path; the SDK's schema walk and the
 * re-serialisation are what pass-through saves. Not forwarded unchanged, and so
 * left to the parsed path: `isError` (an upstream error is logged as one), the
 * gateway's own `dev.rayrun/*` metadata (dropped there), and any content block
 * but text, image or audio (resource URIs are mapped).
 */
function qualifies(bytes: Uint8Array): boolean {
  let value: unknown;
  try {
    value = JSON.parse(strictDecoder.decode(bytes));
  } catch {
    return false;
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) return false;
  if (mayHideAName(bytes) && repeatsAName(bytes, value)) return false;
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
 * them, in the bytes, no repeat can change what a client sees, and the
 * JavaScript walk over every byte and member below is skipped; the search for
 * the spellings is native.
 */
const SENSITIVE_SPELLINGS = ["dev.rayrun", '"resource', "\\u"].map((needle) => Buffer.from(needle));

function mayHideAName(bytes: Uint8Array): boolean {
  const scanned = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  return SENSITIVE_SPELLINGS.some((needle) => scanned.indexOf(needle) >= 0);
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COLON = 0x3a;

/**
 * Whether some object in the bytes holds a member name twice. JSON.parse keeps
 * the last one, a client's parser may keep the first (or refuse the answer):
 * a forged `"_meta":{"dev.rayrun/error":…}` followed by `"_meta":{}` would
 * pass the checks above and reach such a client. Every `:` outside a string
 * ends one member's name, so the bytes declare exactly as many members as the
 * parsed value has only when no name repeats.
 */
function repeatsAName(bytes: Uint8Array, value: object): boolean {
  let declared = 0;
  let inString = false;
  for (let i = 0; i < bytes.byteLength; i++) {
    const byte = bytes[i];
    if (inString) {
      if (byte === BACKSLASH) i++;
      else if (byte === QUOTE) inString = false;
    } else if (byte === QUOTE) inString = true;
    else if (byte === COLON) declared++;
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

function startsWith(bytes: Uint8Array, ascii: string): boolean {
  if (bytes.byteLength < ascii.length) return false;
  for (let i = 0; i < ascii.length; i++) if (bytes[i] !== ascii.charCodeAt(i)) return false;
  return true;
}

function endsWith(bytes: Uint8Array, ascii: string): boolean {
  const offset = bytes.byteLength - ascii.length;
  if (offset < 0) return false;
  for (let i = 0; i < ascii.length; i++) if (bytes[offset + i] !== ascii.charCodeAt(i)) return false;
  return true;
}

/**
 * An SSE answer split into events at the byte level (an event ends at an empty
 * line). Each event goes to the SDK as it came, except the result for `id`,
 * which is diverted when it qualifies. A stream with a CR anywhere (other line
 * endings) is passed through untouched from there on. Errors of the source,
 * such as the response-size bound, reach the SDK as they are.
 */
function divertFromEvents(source: ReadableStream<Uint8Array>, id: number, capture: RawResultCapture): ReadableStream<Uint8Array> {
  const reader = source.getReader();
  let pending: Uint8Array[] = [];
  let lastWasLf = false;
  let untouched = false;
  /** What one chunk of the source lets go on: whole events, or everything once nothing is left to divert. */
  const step = (value: Uint8Array): Uint8Array[] => {
    if (value.byteLength === 0) return [];
    if (untouched || capture.bytes || value.indexOf(CR) >= 0) {
      // Nothing more to divert (or line endings this splitter does not follow): the rest goes as it comes.
      untouched = true;
      const out = [...pending, value];
      pending = [];
      return out;
    }
    const out: Uint8Array[] = [];
    let start = 0;
    for (let lf = value.indexOf(LF); lf >= 0; lf = value.indexOf(LF, lf + 1)) {
      const endsEvent = lf === 0 ? lastWasLf : value[lf - 1] === LF;
      if (!endsEvent) continue;
      pending.push(value.subarray(start, lf + 1));
      out.push(...eventOut(concat(pending), id, capture));
      pending = [];
      start = lf + 1;
    }
    if (start < value.byteLength) pending.push(value.subarray(start));
    lastWasLf = value[value.byteLength - 1] === LF;
    return out;
  };
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      // A pull must enqueue or close, or the stream waits for ever: read on until an event is whole.
      for (;;) {
        const { done, value } = await reader.read();
        if (done) {
          for (const chunk of pending) controller.enqueue(chunk);
          controller.close();
          return;
        }
        const out = step(value);
        for (const chunk of out) controller.enqueue(chunk);
        if (out.length) return;
      }
    },
    cancel(reason) {
      return reader.cancel(reason);
    },
  });
}

function concat(chunks: Uint8Array[]): Uint8Array {
  if (chunks.length === 1) return chunks[0]!;
  const joined = new Uint8Array(chunks.reduce((sum, chunk) => sum + chunk.byteLength, 0));
  let offset = 0;
  for (const chunk of chunks) {
    joined.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return joined;
}

/** One whole SSE event as the SDK gets it: unchanged, or, for a diverted result, with a stub in its one data line. */
function eventOut(event: Uint8Array, id: number, capture: RawResultCapture): Uint8Array[] {
  let dataLine: { start: number; end: number } | null = null;
  for (let start = 0; start < event.byteLength;) {
    const end = event.indexOf(LF, start);
    // A client ignores an event of another name: the result it reads comes in a later event, which is the one to divert.
    if (startsWith(event.subarray(start, end), "event:") && !isMessageEventName(event.subarray(start + 6, end))) return [event];
    if (startsWith(event.subarray(start, end), "data:")) {
      // Several data lines join with line breaks, which a diverted result never holds.
      if (dataLine) return [event];
      dataLine = { start, end };
    }
    start = end + 1;
  }
  if (!dataLine) return [event];
  const valueStart = dataLine.start + (event[dataLine.start + 5] === 0x20 ? 6 : 5);
  const result = resultBytes(event.subarray(valueStart, dataLine.end), id);
  if (!result) return [event];
  capture.bytes = result;
  return [event.subarray(0, dataLine.start), encoder.encode(`data: ${stubMessage(id)}\n`), event.subarray(dataLine.end + 1)];
}

/** An SSE `event:` field's value (after the colon) that names the default event, as MCP clients read it. */
function isMessageEventName(value: Uint8Array): boolean {
  const name = value[0] === 0x20 ? value.subarray(1) : value;
  return name.byteLength === 0 || (name.byteLength === 7 && startsWith(name, "message"));
}
