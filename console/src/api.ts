// The console's one API client: same origin, riding on the browser's session
// (the dev-login cookie locally, Cloudflare Access deployed). No API key is
// ever held by the console, in memory or in storage.
import { ApiRequestError, ApiUnreachableError, createApiClient, unwrap, type Schemas } from "@api/client.ts";

export { ApiRequestError, ApiUnreachableError, unwrap, type Schemas };

export const baseUrl = location.origin;
export const api = createApiClient({ baseUrl });

/** Unwraps an openapi-fetch call against the console's origin. */
export function call<T>(pending: Promise<{ data?: T; error?: unknown; response: Response }>): Promise<T> {
  return unwrap(baseUrl, pending);
}

/** A readable sentence for any failure, led by the API's stable code. */
export function describeError(error: unknown): string {
  if (error instanceof ApiRequestError) return `${error.message} (${error.code})`;
  if (error instanceof Error) return error.message;
  return String(error);
}
