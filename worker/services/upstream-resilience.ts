import { StreamableHTTPError } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

/**
 * The upstream no longer knows the session: 404, as the spec says, or 400 with
 * a message about the session ("Bad Request: No valid session ID provided"), as
 * some SDK servers answer after a restart. Any other 400 is a real refusal.
 */
export function isStaleSession(error: unknown): boolean {
  if (!(error instanceof StreamableHTTPError)) return false;
  return error.code === 404 || (error.code === 400 && /session/i.test(error.message));
}

/**
 * A GET that asks for the rest of a call's stream after the given event (the
 * upstream closed it to be polled, as the 2025-11-25 spec allows), not for a
 * new server-initiated stream.
 */
export function resumesStream(headers: HeadersInit | undefined): boolean {
  return new Headers(headers).has("last-event-id");
}
