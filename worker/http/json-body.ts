import type { MiddlewareHandler } from "hono";
import type { AppEnv } from "./app.ts";
import { ApiError } from "./errors.ts";

const MAX_BODY_BYTES = 1024 * 1024;

/**
 * Parses a JSON request body once, before route validation, so that malformed
 * JSON is its own error (`invalid_json`) instead of a generic schema failure.
 * Hono caches the parsed body, so the route's validator reuses it.
 */
export function jsonBody(): MiddlewareHandler<AppEnv> {
  return async function jsonBody(c, next) {
    const method = c.req.method;
    if (method === "GET" || method === "HEAD" || method === "DELETE" || method === "OPTIONS") return next();
    const length = Number(c.req.header("content-length") ?? "0");
    if (length > MAX_BODY_BYTES) {
      throw new ApiError("payload_too_large", { message: `Request body exceeds ${MAX_BODY_BYTES} bytes` });
    }
    const type = c.req.header("content-type") ?? "";
    if (!type) {
      const text = await c.req.text();
      if (text.length === 0) return next();
      throw new ApiError("unsupported_media_type", { message: "Send the request body as application/json" });
    }
    if (!/^application\/json\b/i.test(type)) {
      throw new ApiError("unsupported_media_type", { message: "Send the request body as application/json" });
    }
    try {
      await c.req.json();
    } catch {
      throw new ApiError("invalid_json", { message: "The request body is not valid JSON" });
    }
    return next();
  };
}
