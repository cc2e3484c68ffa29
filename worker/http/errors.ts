import type { Context } from "hono";
import { HTTPException } from "hono/http-exception";
import type { ContentfulStatusCode } from "hono/utils/http-status";

/**
 * Every stable error code the REST API returns. The README lists them; clients
 * may branch on them, so a code is never renamed or reused for something else.
 */
export type ErrorCode =
  | "unauthorized"
  | "forbidden"
  | "not_found"
  | "invalid_json"
  | "invalid_request"
  | "unsupported_media_type"
  | "conflict"
  | "url_not_allowed"
  | "upstream_unreachable"
  | "upstream_protocol_error"
  | "too_many_tools"
  | "payload_too_large"
  | "service_has_tools_in_use"
  | "hook_history_exists"
  | "internal_error";

export interface ErrorBody {
  error: { code: ErrorCode | string; message: string; details?: Record<string, unknown> };
}

/** An error meant for the client: status, stable code, message, optional details. */
export class ApiError extends Error {
  constructor(
    readonly status: ContentfulStatusCode,
    readonly code: ErrorCode | string,
    message: string,
    readonly details?: Record<string, unknown>,
    readonly headers?: Record<string, string>,
  ) {
    super(message);
    this.name = "ApiError";
  }

  toBody(): ErrorBody {
    return { error: { code: this.code, message: this.message, ...(this.details ? { details: this.details } : {}) } };
  }
}

export const notFound = (what: string) => new ApiError(404, "not_found", `${what} not found`);

/** The one place thrown errors become the wire shape; internal detail stays in logs. */
export function handleError(error: Error, c: Context): Response {
  if (error instanceof ApiError) {
    return c.json(error.toBody(), error.status, error.headers);
  }
  if (error instanceof HTTPException) {
    const code = error.status === 401 ? "unauthorized" : error.status === 404 ? "not_found" : "invalid_request";
    return c.json({ error: { code, message: error.message || "Request failed" } }, error.status);
  }
  console.error("unhandled error", error);
  return c.json({ error: { code: "internal_error", message: "Internal error" } }, 500);
}
