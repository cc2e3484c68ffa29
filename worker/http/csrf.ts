import type { MiddlewareHandler } from "hono";
import { namesBearerScheme } from "../auth/bearer.ts";
import type { AppEnv } from "./app.ts";
import { ApiError } from "./errors.ts";

/**
 * The endpoints that never read a cookie: `/mcp` takes bearer tokens only,
 * and the OAuth library's token and registration endpoints authenticate the
 * client by what it sends (or not at all). Every other path is guarded, so a
 * route added later is guarded without anyone remembering to.
 */
export const COOKIE_FREE_PATHS: ReadonlySet<string> = new Set(["/mcp", "/oauth/token", "/oauth/register"]);

/** Signing in sets the session: a page of another origin must not sign a browser in as someone (login CSRF). */
const SIGN_IN_PATH = "/dev/login";

const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);

/**
 * Cross-site request forgery. The console's session is a cookie (the dev
 * login's; deployed, Cloudflare Access's, which Access turns into the
 * `Cf-Access-Jwt-Assertion` header), and a browser sends it with a request any
 * page makes, as long as the page is same-site: another port on the same host
 * is, so `SameSite=Strict` alone does not stop it. A state-changing request
 * that the session may authenticate (it carries a cookie or Access's header,
 * and no bearer credential, which would take precedence) must therefore come
 * from the console itself: `Sec-Fetch-Site: same-origin`, or an `Origin` equal
 * to the origin it was sent to (the console's: deployed, its Pages Function
 * forwards requests unchanged). Anything else is refused 403 `csrf_refused`
 * before any other work. Browsers send one of the two on every such request;
 * other clients use API keys.
 */
export function refuseCrossSiteRequests(): MiddlewareHandler<AppEnv> {
  return async function refuseCrossSiteRequests(c, next) {
    const request = c.req.raw;
    if (SAFE_METHODS.has(request.method) || !mayUseSession(request, c.req.path)) return next();
    if (request.headers.get("sec-fetch-site") === "same-origin") return next();
    if (request.headers.get("origin") === new URL(request.url).origin) return next();
    throw new ApiError("csrf_refused", {
      message:
        "A request signed in with the console's session must come from the console itself (Sec-Fetch-Site: same-origin, or its own Origin)",
    });
  };
}

function mayUseSession(request: Request, path: string): boolean {
  if (path === SIGN_IN_PATH) return true;
  if (COOKIE_FREE_PATHS.has(path)) return false;
  // Authentication then reads the bearer alone, never the cookie beside it (auth/bearer.ts).
  if (namesBearerScheme(request)) return false;
  return request.headers.has("cookie") || request.headers.has("cf-access-jwt-assertion");
}
