// The typed Rayrun API client shared by the CLI and the console: openapi-fetch
// over the types generated from the Worker's OpenAPI document, so every path,
// parameter, body and response is checked against the routes the Worker serves.
import createClient, { type Client } from "openapi-fetch";
import type { components, paths } from "./schema.d.ts";

export type { components, paths };
export type Schemas = components["schemas"];
export type ApiClient = Client<paths>;
/** The API's one error shape: `{ error: { code, message, details? } }`. */
export type ApiErrorBody = Schemas["Error"];

export interface ApiClientOptions {
  baseUrl: string;
  /** An API key (`rr_…`); the console omits it and rides on the browser's session. */
  apiKey?: string;
  /** `rayrun-cli` makes the API attribute changes to the `cli` channel. */
  client?: "rayrun-cli";
  fetch?: typeof fetch;
}

export function createApiClient(options: ApiClientOptions): ApiClient {
  const headers: Record<string, string> = {};
  if (options.apiKey) headers.authorization = `Bearer ${options.apiKey}`;
  if (options.client) headers["x-rayrun-client"] = options.client;
  return createClient<paths>({ baseUrl: options.baseUrl.replace(/\/+$/, ""), headers, fetch: options.fetch });
}

/** A refused request, with the API's stable code and the HTTP status. */
export class ApiRequestError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details: Record<string, unknown> | undefined,
    readonly retryAfter: string | null,
  ) {
    super(message);
    this.name = "ApiRequestError";
  }
}

/** The request could not reach the API at all. */
export class ApiUnreachableError extends Error {
  constructor(
    readonly url: string,
    cause: unknown,
  ) {
    super(
      `Could not reach the Rayrun API at ${url}: ${cause instanceof Error ? (cause.cause instanceof Error ? cause.cause.message : cause.message) : String(cause)}`,
    );
    this.name = "ApiUnreachableError";
  }
}

interface FetchOutcome<T> {
  data?: T;
  error?: unknown;
  response: Response;
}

/**
 * The data of a successful openapi-fetch call, or an ApiRequestError carrying
 * the API's code; a network failure becomes ApiUnreachableError naming the URL.
 */
export async function unwrap<T>(baseUrl: string, pending: Promise<FetchOutcome<T>>): Promise<T> {
  let outcome: FetchOutcome<T>;
  try {
    outcome = await pending;
  } catch (error) {
    throw new ApiUnreachableError(baseUrl, error);
  }
  const { data, error, response } = outcome;
  if (response.ok) return data as T;
  const body = (error ?? {}) as Partial<ApiErrorBody>;
  const code = body.error?.code ?? `http_${response.status}`;
  const message = body.error?.message ?? `${response.status} ${response.statusText}`;
  throw new ApiRequestError(response.status, code, message, body.error?.details, response.headers.get("retry-after"));
}
