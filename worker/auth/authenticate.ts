import type { MiddlewareHandler } from "hono";
import { getCookie } from "hono/cookie";
import type { AppEnv } from "../http/app.ts";
import { ApiError } from "../http/errors.ts";
import type { WaitUntil } from "../lib/after-response.ts";
import { bearerToken, namesBearerScheme } from "./bearer.ts";
import { ACCESS_JWT_HEADER, accessKeySet, verifyAccessJwt } from "./access-jwt.ts";
import { DEV_SESSION_COOKIE, readDevSession } from "./dev-session.ts";
import { isolateKeys } from "./keys.store.ts";
import { effectiveScopes, type Channel, type Principal } from "./principal.ts";
import { findUserByEmail } from "./users.store.ts";

const unauthorized = (message: string) => new ApiError("unauthorized", { message, headers: { "www-authenticate": "Bearer" } });

/** The CLI says who it is, so history can attribute its changes to the `cli` channel. */
const keyChannel = (clientHeader: string | undefined): Channel => (clientHeader === "rayrun-cli" ? "cli" : "api");

export async function resolvePrincipal(env: Env, request: Request, waitUntil: WaitUntil): Promise<Principal | null> {
  if (namesBearerScheme(request)) {
    // Only the bearer counts, even when malformed: the CSRF check let it through as one (./bearer.ts).
    const bearer = bearerToken(request);
    if (!bearer?.startsWith("rr_")) return null;
    const key = await isolateKeys.findActive(env, bearer, waitUntil);
    if (!key) return null;
    return {
      kind: "key",
      id: key.id,
      workspaceId: key.workspaceId,
      scopes: effectiveScopes(key.scopes),
      profileId: key.profileId,
      channel: keyChannel(request.headers.get("x-rayrun-client") ?? undefined),
      createdBy: key.createdBy,
    };
  }

  const email = await browserEmail(env, request);
  if (!email) return null;
  const user = await findUserByEmail(env.DB, email);
  return user ? { kind: "user", id: user.id, email: user.email, channel: "browser" } : null;
}

async function browserEmail(env: Env, request: Request): Promise<string | null> {
  const assertion = request.headers.get(ACCESS_JWT_HEADER);
  if (assertion && env.ACCESS_TEAM_DOMAIN && env.ACCESS_AUD) {
    return verifyAccessJwt(assertion, {
      teamDomain: env.ACCESS_TEAM_DOMAIN,
      audience: env.ACCESS_AUD,
      keys: accessKeySet(env.ACCESS_TEAM_DOMAIN),
    });
  }
  if (env.DEV_LOGIN === "on") {
    const cookie = /(?:^|;\s*)rr_dev_session=([^;]+)/.exec(request.headers.get("cookie") ?? "")?.[1];
    if (cookie) return readDevSession(cookie, env.SECRETS_KEY);
  }
  return null;
}

/** Requires a verified key or browser user; everything under /v1 except bootstrap sits behind it. */
export function authenticate(): MiddlewareHandler<AppEnv> {
  return async function authenticate(c, next) {
    const principal = await resolvePrincipal(c.env, c.req.raw, (promise) => c.executionCtx.waitUntil(promise));
    if (!principal) {
      const sent = c.req.header("authorization") || c.req.header(ACCESS_JWT_HEADER) || getCookie(c, DEV_SESSION_COOKIE);
      throw unauthorized(sent ? "The credentials are invalid, expired or revoked" : "Send an API key as 'Authorization: Bearer rr_…'");
    }
    c.set("principal", principal);
    return next();
  };
}
