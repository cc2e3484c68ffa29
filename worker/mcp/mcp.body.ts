import { joinBytes } from "../services/chunk-reader.ts";

/** The largest request body the endpoint accepts: the SDK transport's default, passed to it explicitly so both agree. */
export const MAX_BODY_BYTES = 4 * 1024 * 1024;

const decoder = new TextDecoder();

/** The request to hand the SDK transport, and its body already parsed when that was possible. */
export type ReadBody = { request: Request; parsedBody?: unknown };

/**
 * Reads and parses a JSON body of at most MAX_BODY_BYTES, so the transport can
 * skip its chunk-by-chunk reader (measurably cheaper on every call) and the
 * endpoint sees every batch before the transport runs it. A body without a
 * Content-Length (`Transfer-Encoding: chunked`) is read the same way, up to one
 * byte past the bound. Everything else (declared too large, over the bound, not
 * JSON) reaches the transport with its bytes intact, so its own 413 and
 * parse-error answers stay exactly as they are.
 */
export async function readJsonBody(request: Request): Promise<ReadBody> {
  const declared = request.headers.get("content-length");
  if (!request.body || (declared !== null && !(Number(declared) <= MAX_BODY_BYTES))) return { request };
  const bytes = await readAtMost(request.body, MAX_BODY_BYTES + 1);
  if (bytes.byteLength <= MAX_BODY_BYTES) {
    try {
      // The transport decodes the same way (UTF-8, BOM dropped), then parses.
      return { request, parsedBody: JSON.parse(decoder.decode(bytes)) as unknown };
    } catch {
      // Not JSON: the transport reads the same bytes and answers with its parse error.
    }
  }
  // Over the bound despite the declared length: one byte past it is enough for the transport's 413.
  return { request: new Request(request, { body: bytes }) };
}

/** The stream's first `limit` bytes (all of it when shorter); the rest is cancelled, never read. */
async function readAtMost(body: ReadableStream<Uint8Array>, limit: number): Promise<Uint8Array> {
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let received = 0;
  while (received < limit) {
    const { done, value } = await reader.read();
    if (done) break;
    chunks.push(value.byteLength > limit - received ? value.subarray(0, limit - received) : value);
    received += Math.min(value.byteLength, limit - received);
  }
  if (received >= limit) await reader.cancel().catch(() => undefined);
  return joinBytes(chunks);
}

/**
 * A parsed message's `method` when it has a string one, read without the SDK's
 * schema guards: those parse the whole message with Zod, which on the no-hook
 * call path cost more than the routing decisions they were guarding.
 */
export function methodOf(message: unknown): string | undefined {
  if (typeof message !== "object" || message === null) return undefined;
  const method = (message as { method?: unknown }).method;
  return typeof method === "string" ? method : undefined;
}

/** A message with a method and an id, i.e. a request rather than a notification, checked as cheaply as `methodOf`. */
export function isRequestShaped(message: unknown): message is { method: string; id: string | number; params?: Record<string, unknown> } {
  if (methodOf(message) === undefined) return false;
  const id = (message as { id?: unknown }).id;
  return typeof id === "string" || typeof id === "number";
}
