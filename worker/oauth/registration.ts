import type { OAuthAuthorizationServer } from "@cloudflare/workers-oauth-provider";
import { ApiError } from "../http/errors.ts";
import { readBoundedText } from "../http/json-body.ts";
import { requestSource } from "../lib/ip-address.ts";
import { metadataBreach, REGISTRATION_BOUNDS } from "./registration.bounds.ts";
import { REGISTRATION_LIMITS } from "./registry.do.ts";

/** The deployment's one registry of dynamically registered clients (registry.do.ts). */
export const oauthRegistry = (env: Env) => env.OAUTH_REGISTRY.getByName("registrations");

/**
 * `POST /oauth/register` (RFC 7591), around the library's own handler: the
 * body is read under its bound, the metadata's sizes are checked, and a slot
 * is taken from the source's hourly allowance and the deployment's maximum of
 * clients before the library stores anything. A registration the library
 * refuses gives its slot back. Refusals are RFC 7591 error responses.
 */
export async function handleRegistration(
  server: OAuthAuthorizationServer<Env>,
  request: Request,
  env: Env,
  ctx: ExecutionContext,
): Promise<Response> {
  const tooLarge = () =>
    oauthError(request, 413, "invalid_request", `Request payload too large, must be at most ${REGISTRATION_BOUNDS.bodyBytes} bytes`);
  if (Number(request.headers.get("content-length") ?? "0") > REGISTRATION_BOUNDS.bodyBytes) return tooLarge();
  let text: string;
  try {
    text = await readBoundedText(request.body, REGISTRATION_BOUNDS.bodyBytes);
  } catch (error) {
    if (error instanceof ApiError && error.code === "payload_too_large") return tooLarge();
    throw error;
  }
  const metadata = parsedObject(text);
  // Anything that is not a JSON object is the library's to refuse, as it always did.
  const breach = metadata && metadataBreach(metadata);
  if (breach) return oauthError(request, 400, breach.error, breach.description);

  const registry = oauthRegistry(env);
  const reservation = await registry.reserve(requestSource(request));
  if (!reservation.ok) {
    const retryAfter = { "retry-after": String(reservation.retryAfterSeconds) };
    return reservation.reason === "rate_limited"
      ? oauthError(
          request,
          429,
          "temporarily_unavailable",
          `Too many registrations from this address: ${REGISTRATION_LIMITS.perSourcePerHour} per hour; try again in ${reservation.retryAfterSeconds} s`,
          retryAfter,
        )
      : oauthError(
          request,
          503,
          "temporarily_unavailable",
          `This server holds its maximum of ${REGISTRATION_LIMITS.maxClients} registered clients; try again in ${reservation.retryAfterSeconds} s`,
          retryAfter,
        );
  }
  let response: Response;
  try {
    response = await server.fetch(new Request(request, { body: text }), env, ctx);
  } catch (error) {
    await registry.release(reservation.id);
    throw error;
  }
  const clientId = response.status === 201 ? ((await response.clone().json()) as { client_id?: unknown }).client_id : undefined;
  if (typeof clientId === "string") await registry.confirm(reservation.id, clientId);
  else await registry.release(reservation.id);
  return response;
}

function parsedObject(text: string): Record<string, unknown> | null {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

/** An OAuth error response (RFC 6749 §5.2, RFC 7591 §3.2.2), readable by a browser client as the library's are. */
function oauthError(request: Request, status: number, error: string, description: string, headers: Record<string, string> = {}): Response {
  const response = Response.json(
    { error, error_description: description },
    { status, headers: { "cache-control": "no-store", pragma: "no-cache", ...headers } },
  );
  const origin = request.headers.get("origin");
  if (origin) {
    response.headers.set("access-control-allow-origin", origin);
    response.headers.set("access-control-expose-headers", "WWW-Authenticate, Retry-After");
    response.headers.set("vary", "Origin");
  }
  return response;
}
