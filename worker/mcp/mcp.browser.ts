import { ErrorCode } from "@modelcontextprotocol/sdk/types.js";
import { publicUrl } from "../oauth/oauth.config.ts";

/**
 * Browser access to /mcp: CORS for configured origins, and the DNS-rebinding
 * checks the MCP transport spec requires (Origin and Host). A request without an
 * Origin header (every non-browser client) passes the Origin check; the Host check
 * applies to everyone.
 */

/** Methods the Streamable HTTP transport uses; GET and DELETE then get the endpoint's own 405. */
const ALLOWED_METHODS = "GET, POST, DELETE, OPTIONS";
const ALLOWED_HEADERS = "authorization, content-type, accept, mcp-session-id, mcp-protocol-version, last-event-id";
const EXPOSED_HEADERS = "mcp-session-id, mcp-protocol-version, www-authenticate";
const PREFLIGHT_MAX_AGE_SECONDS = "600";

const listVar = (value: string | undefined): string[] =>
  (value ?? "")
    .split(",")
    .map((item) => item.trim().toLowerCase())
    .filter(Boolean);

/** The hostname part of a Host header value (`example.com:8787`, `[::1]:8787`). */
function hostnameOf(host: string): string | null {
  try {
    return new URL(`http://${host}`).hostname;
  } catch {
    return null;
  }
}

/**
 * The allowed hostnames, built once per isolate for the configuration it runs with, and the last few Host values
 * already parsed: this check runs on every /mcp request, and a URL parse per request showed in its CPU profile. The
 * Host header is the client's, so the parsed-value memo is bounded (and simply cleared when full).
 */
const HOST_MEMO_ENTRIES = 32;
const parsedHosts = new Map<string, string | null>();
let allowedHosts: { key: string; hostnames: Set<string> } | undefined;

function memoHostnameOf(host: string): string | null {
  const known = parsedHosts.get(host);
  if (known !== undefined) return known;
  if (parsedHosts.size >= HOST_MEMO_ENTRIES) parsedHosts.clear();
  const hostname = hostnameOf(host);
  parsedHosts.set(host, hostname);
  return hostname;
}

function allowedHostnames(env: Env): Set<string> {
  const key = `${env.MCP_ALLOWED_HOSTS ?? ""}|${env.PUBLIC_URL ?? ""}`;
  if (allowedHosts?.key === key) return allowedHosts.hostnames;
  const publicOrigin = publicUrl(env);
  const hostnames = new Set(listVar(env.MCP_ALLOWED_HOSTS));
  if (publicOrigin) hostnames.add(new URL(publicOrigin).hostname);
  allowedHosts = { key, hostnames };
  return hostnames;
}

function originOf(value: string): string | null {
  try {
    const url = new URL(value);
    return url.protocol === "http:" || url.protocol === "https:" ? url.origin : null;
  } catch {
    return null;
  }
}

/** The Host the client addressed: the header when present, else the URL's (the same on Cloudflare). */
const requestHost = (request: Request) => (request.headers.get("host") ?? new URL(request.url).host).toLowerCase();

/** PUBLIC_URL's hostname and MCP_ALLOWED_HOSTS, any port. */
export function hostAllowed(env: Env, request: Request): boolean {
  const hostname = memoHostnameOf(requestHost(request));
  return hostname !== null && allowedHostnames(env).has(hostname);
}

/**
 * An Origin in MCP_ALLOWED_ORIGINS, PUBLIC_URL's own, or the addressed Host's own
 * (same-origin; safe because the Host itself passed the allow-list).
 */
export function originAllowed(env: Env, request: Request, origin: string): boolean {
  const normalized = originOf(origin);
  if (!normalized) return false;
  if (normalized === publicUrl(env)) return true;
  if (new URL(normalized).host === requestHost(request)) return true;
  return listVar(env.MCP_ALLOWED_ORIGINS).some((allowed) => originOf(allowed) === normalized);
}

/** Serves /mcp for browsers and everyone else: refuses bad Host and Origin, answers preflight, adds CORS headers. */
export async function serveMcpWithBrowserChecks(
  env: Env,
  request: Request,
  handle: (request: Request) => Promise<Response>,
): Promise<Response> {
  if (!hostAllowed(env, request)) {
    return refusal("host_not_allowed", "This Host is not one the gateway answers; see PUBLIC_URL and MCP_ALLOWED_HOSTS");
  }
  const origin = request.headers.get("origin");
  if (origin !== null && !originAllowed(env, request, origin)) {
    return refusal("origin_not_allowed", "This Origin may not call /mcp; see MCP_ALLOWED_ORIGINS");
  }
  if (request.method === "OPTIONS") {
    const headers = new Headers({ allow: ALLOWED_METHODS });
    if (origin !== null) {
      headers.set("access-control-allow-methods", ALLOWED_METHODS);
      headers.set("access-control-allow-headers", ALLOWED_HEADERS);
      headers.set("access-control-max-age", PREFLIGHT_MAX_AGE_SECONDS);
      corsHeaders(headers, origin);
    }
    return new Response(null, { status: 204, headers });
  }
  const response = await handle(request);
  if (origin === null) return response;
  const withCors = new Response(response.body, response);
  corsHeaders(withCors.headers, origin);
  return withCors;
}

function corsHeaders(headers: Headers, origin: string): void {
  headers.set("access-control-allow-origin", origin);
  headers.set("access-control-expose-headers", EXPOSED_HEADERS);
  headers.append("vary", "Origin");
}

/** The spec's 403 for a refused Origin, with a JSON-RPC error body (no id); Host refusals share it. */
function refusal(code: "origin_not_allowed" | "host_not_allowed", message: string): Response {
  return Response.json({ jsonrpc: "2.0", error: { code: ErrorCode.ConnectionClosed, message, data: { code } }, id: null }, { status: 403 });
}
