import type { Context } from "hono";
import { HTTPException } from "hono/http-exception";
import { ERROR_STATUS, type ErrorCode, type ErrorStatus } from "../../schema/api/errors.ts";
import { LeaseUnavailable } from "../leases/holder.ts";

export type { ErrorCode } from "../../schema/api/errors.ts";

export interface ErrorBody {
  error: { code: ErrorCode; message: string; details?: Record<string, unknown> };
}

export interface ApiErrorOptions {
  message: string;
  details?: Record<string, unknown>;
  headers?: Record<string, string>;
  /** What failed underneath: written to the Worker log, never sent to the client. */
  cause?: unknown;
}

/** An error meant for the client: a stable code (its status comes from `ERROR_STATUS`), message, optional details. */
export class ApiError extends Error {
  readonly code: ErrorCode;
  readonly status: ErrorStatus;
  readonly details?: Record<string, unknown>;
  readonly headers?: Record<string, string>;

  constructor(code: ErrorCode, { message, details, headers, cause }: ApiErrorOptions) {
    super(message, cause === undefined ? undefined : { cause });
    this.name = "ApiError";
    this.code = code;
    this.status = ERROR_STATUS[code];
    if (details) this.details = details;
    if (headers) this.headers = headers;
  }

  toBody(): ErrorBody {
    return { error: { code: this.code, message: this.message, ...(this.details ? { details: this.details } : {}) } };
  }
}

export const notFound = (what: string) => new ApiError("not_found", { message: `${what} not found` });

/**
 * Hono throws its own `HTTPException` only from its request validator (400,
 * e.g. malformed JSON); the code follows the status as it always has.
 */
function fromHonoException(error: HTTPException): ApiError {
  const code = error.status === 401 ? "unauthorized" : error.status === 404 ? "not_found" : "invalid_request";
  return new ApiError(code, { message: error.message || "Request failed" });
}

/** The workspace's Durable Object did not answer for a lease or a change window: nothing proceeds on a guess. */
const workspaceUnavailable = (error: LeaseUnavailable) =>
  new ApiError("workspace_unavailable", {
    message: "The workspace's state could not be confirmed because its Durable Object did not answer; retry shortly",
    headers: { "retry-after": "1" },
    cause: error,
  });

/** The one place thrown errors become the wire shape; a cause and anything unexpected go to the Worker log only. */
export function handleError(error: Error, c: Context): Response {
  const apiError =
    error instanceof ApiError
      ? error
      : error instanceof HTTPException
        ? fromHonoException(error)
        : error instanceof LeaseUnavailable
          ? workspaceUnavailable(error)
          : new ApiError("internal_error", { message: "Internal error", cause: error });
  if (apiError.cause !== undefined) console.error(`${apiError.code}: ${apiError.message}`, apiError.cause);
  return c.json(apiError.toBody(), apiError.status, apiError.headers);
}
