import { SELF } from "cloudflare:test";
import { api, CONSOLE_HEADERS, devLogin, ORIGIN, type TestWorkspace } from "../../test/helpers.ts";
import { base64UrlEncode } from "../lib/crypto.ts";

/**
 * The OAuth flow as a real client and a real admin walk it through the gateway's
 * `/oauth/*`: dynamic registration, a PKCE authorization request, the consent
 * page signed in through the dev login, and the code exchange.
 */
export const REDIRECT_URI = "http://127.0.0.1:33418/callback";
export const MCP_URL = `${ORIGIN}/mcp`;

/** Makes `email` an admin of the workspace and signs them in through the dev login; returns the session cookie. */
export async function signInAdmin(workspace: TestWorkspace, email: string): Promise<string> {
  await api(`/v1/workspaces/${workspace.ws}/members`, { method: "PUT", key: workspace.adminKey, body: { email, role: "admin" } });
  return devLogin(email);
}

/**
 * A source address of its own (a random IPv6 /64 of the documentation range), as Cloudflare's `CF-Connecting-IP`
 * names it: registration allows each source 20 per hour, and the tests of a run share the registry.
 */
export const newSource = () =>
  `2001:db8:${Array.from(crypto.getRandomValues(new Uint16Array(3)), (group) => group.toString(16)).join(":")}::1`;

/** A public client registered through RFC 7591 dynamic registration (from a source of its own); returns its client_id. */
export async function registerClient(metadata: Record<string, unknown> = {}, source = newSource()): Promise<string> {
  const res = await api("/oauth/register", {
    body: { client_name: "Test connector", redirect_uris: [REDIRECT_URI], token_endpoint_auth_method: "none", ...metadata },
    headers: { "cf-connecting-ip": source },
  });
  if (res.status !== 201) throw new Error(`registration failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.client_id;
}

export async function pkcePair() {
  const verifier = base64UrlEncode(crypto.getRandomValues(new Uint8Array(32)));
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(verifier));
  return { verifier, challenge: base64UrlEncode(new Uint8Array(digest)) };
}

/** The browser part: open the authorization URL signed in, pick workspace and profile, allow. Returns the redirect. */
export async function consent(authorizationUrl: string, devCookie: string, target: string, decision = "approve"): Promise<URL> {
  const page = await SELF.fetch(authorizationUrl, { headers: { cookie: devCookie } });
  const html = await page.text();
  if (page.status !== 200) throw new Error(`consent page: ${page.status} ${html}`);
  const handle = /name="handle" value="([^"]+)"/.exec(html)![1]!;
  const consentCookies = page.headers.getSetCookie().map((cookie) => cookie.split(";")[0]);
  const answer = await SELF.fetch(authorizationUrl, {
    method: "POST",
    redirect: "manual",
    headers: {
      ...CONSOLE_HEADERS,
      cookie: [devCookie, ...consentCookies].join("; "),
      "content-type": "application/x-www-form-urlencoded",
    },
    body: new URLSearchParams({ handle, target, decision }),
  });
  if (answer.status !== 302) throw new Error(`consent answer: ${answer.status} ${await answer.text()}`);
  return new URL(answer.headers.get("location")!);
}

/** The authorization URL a client builds for `clientId`, with a fresh PKCE pair. */
export async function authorizationRequest(clientId: string) {
  const { verifier, challenge } = await pkcePair();
  const url = new URL(`${ORIGIN}/oauth/authorize`);
  for (const [name, value] of Object.entries({
    response_type: "code",
    client_id: clientId,
    redirect_uri: REDIRECT_URI,
    code_challenge: challenge,
    code_challenge_method: "S256",
    state: "st-1",
    resource: MCP_URL,
    scope: "tools:call",
  })) {
    url.searchParams.set(name, value);
  }
  return { url: url.toString(), verifier };
}

/** Registration (unless a client is given), PKCE authorization and consent by hand; returns what the token request needs. */
export async function authorizedCode(devCookie: string, target: string, existingClientId?: string) {
  const clientId = existingClientId ?? (await registerClient());
  const { url, verifier } = await authorizationRequest(clientId);
  const redirect = await consent(url, devCookie, target);
  return { clientId, verifier, code: redirect.searchParams.get("code")!, redirect };
}

export const tokenRequest = (fields: Record<string, string>) =>
  SELF.fetch(`${ORIGIN}/oauth/token`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams(fields),
  });

/** The whole flow to an access token, for a new client or for `clientId`'s grant in another workspace. */
export async function exchange(
  devCookie: string,
  target: string,
  clientId?: string,
): Promise<{ token: string; refreshToken: string; clientId: string }> {
  const authorized = await authorizedCode(devCookie, target, clientId);
  const res = await tokenRequest({
    grant_type: "authorization_code",
    code: authorized.code,
    redirect_uri: REDIRECT_URI,
    client_id: authorized.clientId,
    code_verifier: authorized.verifier,
  });
  const body = (await res.json()) as { access_token: string; refresh_token: string };
  if (res.status !== 200) throw new Error(`token: ${res.status} ${JSON.stringify(body)}`);
  return { token: body.access_token, refreshToken: body.refresh_token, clientId: authorized.clientId };
}
