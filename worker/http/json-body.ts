import type { MiddlewareHandler } from "hono";
import type { AppEnv } from "./app.ts";
import { ApiError } from "./errors.ts";

export const MAX_BODY_BYTES = 1024 * 1024;

export function payloadTooLarge(): ApiError {
  return new ApiError("payload_too_large", { message: `Request body exceeds ${MAX_BODY_BYTES} bytes` });
}

/**
 * Reads a body stream as UTF-8, counting bytes as they arrive and cancelling
 * the stream at the first byte over `maxBytes`. A Content-Length header cannot
 * be trusted to be there (`Transfer-Encoding: chunked`), so the count is the bound.
 */
export async function readBoundedText(body: ReadableStream<Uint8Array> | null, maxBytes: number): Promise<string> {
  if (!body) return "";
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let received = 0;
  let text = "";
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return text + decoder.decode();
    received += value.byteLength;
    if (received > maxBytes) {
      await reader.cancel().catch(() => undefined);
      throw payloadTooLarge();
    }
    text += decoder.decode(value, { stream: true });
  }
}

/**
 * Parses a JSON request body once, before route validation, so that malformed
 * JSON is its own error (`invalid_json`) instead of a generic schema failure.
 * The text is read under the byte bound, and the route's validator reads that
 * text, so nothing downstream can read past the bound.
 */
export function jsonBody(): MiddlewareHandler<AppEnv> {
  return async function jsonBody(c, next) {
    const method = c.req.method;
    if (method === "GET" || method === "HEAD" || method === "DELETE" || method === "OPTIONS") return next();
    // A declared length over the bound is refused before a byte is read.
    if (Number(c.req.header("content-length") ?? "0") > MAX_BODY_BYTES) throw payloadTooLarge();
    const type = c.req.header("content-type") ?? "";
    if (type && !/^application\/json\b/i.test(type)) {
      throw new ApiError("unsupported_media_type", { message: "Send the request body as application/json" });
    }
    const text = await readBoundedText(c.req.raw.body, MAX_BODY_BYTES);
    // The route reads this copy of the request, never the unbounded original stream.
    // An empty body stays empty: a "" body would gain a text/plain content type.
    c.req.raw = new Request(c.req.raw, { body: text || null });
    if (!type) {
      if (text.length === 0) return next();
      throw new ApiError("unsupported_media_type", { message: "Send the request body as application/json" });
    }
    try {
      JSON.parse(text);
    } catch {
      throw new ApiError("invalid_json", { message: "The request body is not valid JSON" });
    }
    return next();
  };
}
