import { createRoute, z } from "@hono/zod-openapi";
import type { Context } from "hono";
import { getCookie, setCookie } from "hono/cookie";
import { errorResponses, json, WorkspaceParams } from "../../schema/api/common.ts";
import type { ErrorStatus } from "../../schema/api/errors.ts";
import { ServiceParams } from "../../schema/api/services.ts";
import {
  AuthorizationLinkSchema,
  AuthorizeServiceBody,
  DisconnectSummarySchema,
  UpstreamGrantParams,
  UpstreamGrantSchema,
} from "../../schema/api/upstream-oauth.ts";
import { resolvePrincipal } from "../auth/authenticate.ts";
import { guard } from "../auth/guard.ts";
import type { AppEnv } from "../http/app.ts";
import { createRouter } from "../http/app.ts";
import { ApiError, notFound } from "../http/errors.ts";
import { MAX_BODY_BYTES, payloadTooLarge, readBoundedText } from "../http/json-body.ts";
import { invalidateCatalog } from "../calls/catalog.ts";
import { base64UrlEncode, sha256Hex } from "../lib/crypto.ts";
import { reindexService } from "../services/indexing.ts";
import { listServices, storedUpstreamTarget } from "../services/services.store.ts";
import { parseAllowList } from "../services/url-guard.ts";
import { workspaceClient } from "../workspaces/workspace.client.ts";
import { getWorkspace } from "../workspaces/workspaces.store.ts";
import {
  beginAuthorization,
  CALLBACK_PATH,
  CLIENT_METADATA_PATH,
  clientMetadataUrl,
  gatewayOrigin,
  handleWorkspace,
  redirectUri,
  START_PATH,
  withUpstreamAuthorization,
} from "./authorization.ts";
import { openClientSecret, SHARED_SUBJECT, type FlowRefusal, type FlowToConfirm } from "./grants.do.ts";
import { disconnectGrants, oauthApiError, revokeGrant, revokeReplacedTokens } from "./lifecycle.ts";
import { markAuthorized, markPending, notePendingReason } from "./oauth.store.ts";
import { exchangeCode, TokenRequestFailed } from "./oauth.tokens.ts";

/**
 * Upstream OAuth: the admin's API (start an authorization, disconnect, list
 * and revoke grants) and the browser's three stops on the gateway's own
 * origin (the start link, the callback, the client metadata document).
 */
export const upstreamOAuthRoutes = createRouter();

/** A service that exists, is live and uses OAuth. */
async function oauthService(env: Env, workspaceId: string, serviceId: string) {
  const stored = await storedUpstreamTarget(env, workspaceId, serviceId);
  if (!stored) throw notFound("Service");
  if (!stored.oauth) {
    throw new ApiError("service_not_oauth", { message: "This service does not use upstream OAuth: its upstream never asked for it" });
  }
  return { ...stored, oauth: stored.oauth };
}

/** The caller's own grant subject, as /mcp derives it (mcp-caller.ts): a user, or a key's owner when a user made it. */
function actorSubject(c: Context<AppEnv>): string {
  const principal = c.get("principal");
  if (principal.kind === "user") return `user:${principal.id}`;
  return principal.createdBy.startsWith("usr_") ? `user:${principal.createdBy}` : `key:${principal.id}`;
}

upstreamOAuthRoutes.openapi(
  createRoute({
    method: "post",
    path: "/v1/workspaces/{ws}/services/{svc}/authorize",
    tags: ["services", "upstream-oauth"],
    summary: "Start authorizing an OAuth service: returns the link to open in a browser",
    description:
      "Shared mode: the grant is the workspace's. Per user: the grant is the admin's own, and it indexes the service. The link " +
      "works once, for 10 minutes, in the browser that opens it first (signed in as the admin when the admin is a user).",
    middleware: guard("admin"),
    request: { params: ServiceParams, body: { required: false, content: { "application/json": { schema: AuthorizeServiceBody } } } },
    responses: { 200: json(AuthorizationLinkSchema, "The link"), ...errorResponses(400, 404, 409) },
  }),
  async (c) => {
    const { ws, svc } = c.req.valid("param");
    const body = c.req.valid("json") ?? {};
    const { oauth } = await oauthService(c.env, ws, svc);
    const returnTo = body.returnTo ?? null;
    if (returnTo !== null && !consoleOrigins(c.env).includes(URL.parse(returnTo)?.origin ?? "")) {
      throw new ApiError("invalid_request", {
        message: "returnTo must be on the console's origin (the gateway's PUBLIC_URL, or CONSOLE_URL)",
        details: { field: "json.returnTo" },
      });
    }
    const actor = c.get("actor");
    const subject = oauth.mode === "shared" ? SHARED_SUBJECT : actorSubject(c);
    const link = await beginAuthorization(c.env, {
      workspaceId: ws,
      serviceId: svc,
      oauth,
      subject,
      purpose: "service",
      initiator: actor.id,
      initiatorUser: actor.kind === "user" ? actor.id : subject.startsWith("user:") ? subject.slice(5) : null,
      returnTo,
    }).catch((error: unknown) => {
      throw oauthApiError(error);
    });
    return c.json(link, 200);
  },
);

/**
 * Where the callback may send the browser back: the console, served by the gateway itself (PUBLIC_URL) or at
 * CONSOLE_URL. Not the origin of the request that asks: its Host header is the caller's to choose, and any admin
 * key (an outsider's, of a workspace of their own) made the gateway's callback redirect to a site of theirs
 * after the authorization server's consent (round 6, finding 3).
 */
function consoleOrigins(env: Env): string[] {
  return [env.PUBLIC_URL, env.CONSOLE_URL]
    .map((configured) => (configured ? URL.parse(configured) : null))
    .filter((url): url is URL => url !== null && (url.protocol === "https:" || url.protocol === "http:"))
    .map((url) => url.origin);
}

upstreamOAuthRoutes.openapi(
  createRoute({
    method: "delete",
    path: "/v1/workspaces/{ws}/services/{svc}/authorization",
    tags: ["services", "upstream-oauth"],
    summary: "Disconnect: revoke every grant of the service at the authorization server and delete its tokens",
    description: "The service returns to pending (`disconnected`); its tools stay indexed and are refused until it is authorized again.",
    middleware: guard("admin"),
    request: { params: ServiceParams },
    responses: { 200: json(DisconnectSummarySchema, "What was deleted and revoked"), ...errorResponses(404, 409) },
  }),
  async (c) => {
    const { ws, svc } = c.req.valid("param");
    const { oauth } = await oauthService(c.env, ws, svc);
    const { grants, revoked } = await disconnectGrants(c.env, ws, svc, oauth);
    await markPending(c.env.DB, ws, svc, { code: "disconnected", message: `Disconnected by ${c.get("actor").id}` });
    return c.json({ grants, revoked }, 200);
  },
);

upstreamOAuthRoutes.openapi(
  createRoute({
    method: "get",
    path: "/v1/workspaces/{ws}/upstream-grants",
    tags: ["upstream-oauth"],
    summary: "The workspace's upstream OAuth grants: service, mode, subject, scopes, expiry and last use (never a token)",
    middleware: guard("admin"),
    request: { params: WorkspaceParams },
    responses: { 200: json(z.object({ grants: z.array(UpstreamGrantSchema) }), "Grants"), ...errorResponses(404) },
  }),
  async (c) => {
    const { ws } = c.req.valid("param");
    const [grants, services] = await Promise.all([workspaceClient(c.env, ws).listUpstreamGrants(), listServices(c.env.DB, ws, true)]);
    const slugs = new Map(services.map((service) => [service.id, service.slug]));
    return c.json({ grants: grants.map((grant) => ({ ...grant, serviceSlug: slugs.get(grant.serviceId) ?? null })) }, 200);
  },
);

upstreamOAuthRoutes.openapi(
  createRoute({
    method: "delete",
    path: "/v1/workspaces/{ws}/upstream-grants/{grantId}",
    tags: ["upstream-oauth"],
    summary: "Revoke one grant at the authorization server and delete its tokens",
    description: "Deleting the shared grant (or the one that indexes a per-user service) returns the service to pending.",
    middleware: guard("admin"),
    request: { params: UpstreamGrantParams },
    responses: { 200: json(DisconnectSummarySchema, "What was deleted and revoked"), ...errorResponses(404) },
  }),
  async (c) => {
    const { ws, grantId } = c.req.valid("param");
    const grant = (await workspaceClient(c.env, ws).listUpstreamGrants()).find((candidate) => candidate.id === grantId);
    if (!grant) throw notFound("Grant");
    return c.json(await revokeGrant(c.env, ws, grant, `Grant revoked by ${c.get("actor").id}`), 200);
  },
);

// ---- The browser's stops: not under /v1, answered as pages (JSON to a client that asks for it). ----

/** Where a refused flow says what went wrong: a page for a person, the JSON error for a client that asks for JSON. */
function flowError(c: Context<AppEnv>, error: ApiError): Response {
  if (!(c.req.header("accept") ?? "").includes("text/html")) return c.json(error.toBody(), error.status);
  return page(c, error.status, "The authorization did not finish", `${error.message} (${error.code})`);
}

const escapeHtml = (value: string) => value.replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`);

function page(c: Context<AppEnv>, status: 200 | ErrorStatus, title: string, text: string): Response {
  return pageHtml(c, status, title, `<p>${escapeHtml(text)}</p>`);
}

/** A page of the flow: `html` is markup already escaped; no page of the flow may be framed or cached. */
function pageHtml(c: Context<AppEnv>, status: 200 | ErrorStatus, title: string, html: string): Response {
  const body = `<!doctype html><html lang="en"><meta charset="utf-8"><meta name="viewport" content="width=device-width"><title>${escapeHtml(title)}</title><main><h1>${escapeHtml(title)}</h1>${html}</main></html>`;
  return c.html(body, status, {
    "x-frame-options": "DENY",
    "content-security-policy": "frame-ancestors 'none'",
    "cache-control": "no-store",
    "referrer-policy": "no-referrer",
  });
}

const FLOW_REFUSALS: Record<FlowRefusal, string> = {
  unknown: "This authorization link or state is unknown or was already used",
  expired: "This authorization link expired; start again",
  wrong_user: "This authorization link belongs to another user: sign in as the user it was made for",
  other_browser: "This authorization was started in another browser",
  cancelled:
    "This authorization was cancelled while it finished (its link's maker lost access, or the service's grants were revoked); nothing was saved",
};

const stateInvalid = (reason: FlowRefusal) => new ApiError("oauth_state_invalid", { message: FLOW_REFUSALS[reason], details: { reason } });

/** The cookie that binds a flow to the browser that opened its link; named by the state, so flows in two tabs do not collide. */
const bindingCookie = async (state: string) => `rr_upstream_oauth_${(await sha256Hex(state)).slice(0, 16)}`;

upstreamOAuthRoutes.get(START_PATH, (c) => startInBrowser(c, c.req.query("flow") ?? "", false));

/**
 * The confirmation page's button. Only a form on the gateway's own page may post it (a browser says so in
 * Sec-Fetch-Site or Origin): another site's form, sent in the background, would skip the page that says whose grant it is.
 */
upstreamOAuthRoutes.post(START_PATH, async (c) => {
  const fromOwnPage =
    c.req.header("sec-fetch-site") === "same-origin" ||
    (c.req.header("origin") !== undefined && c.req.header("origin") === gatewayOrigin(c.env));
  if (!fromOwnPage) {
    return flowError(
      c,
      new ApiError("csrf_refused", { message: "An authorization goes on only from the gateway's own confirmation page" }),
    );
  }
  // Outside /v1, so its body is read here under the API's bound: anyone may send this form, from anywhere.
  if (Number(c.req.header("content-length") ?? "0") > MAX_BODY_BYTES) throw payloadTooLarge();
  const form = new URLSearchParams(await readBoundedText(c.req.raw.body, MAX_BODY_BYTES));
  return startInBrowser(c, form.get("flow") ?? "", true);
});

/**
 * Binds the flow to this browser (a cookie the callback must bring back) and sends it to the authorization server;
 * a link bound to no signed-in user first shows whose grant it makes and goes on only from that page.
 */
async function startInBrowser(c: Context<AppEnv>, flowId: string, confirmed: boolean): Promise<Response> {
  const workspaceId = handleWorkspace(flowId);
  if (!workspaceId) return flowError(c, stateInvalid("unknown"));
  const principal = await resolvePrincipal(c.env, c.req.raw, (promise) => c.executionCtx.waitUntil(promise));
  const user = principal?.kind === "user" ? principal.id : null;
  const nonce = base64UrlEncode(crypto.getRandomValues(new Uint8Array(32)));
  const started = await workspaceClient(c.env, workspaceId).startOAuthFlow(flowId, await sha256Hex(nonce), user, confirmed);
  if (!started.ok) return flowError(c, stateInvalid(started.reason));
  if ("confirm" in started) return confirmationPage(c, workspaceId, flowId, started.confirm);
  const state = new URL(started.authorizeUrl).searchParams.get("state") ?? "";
  setCookie(c, await bindingCookie(state), nonce, {
    httpOnly: true,
    // Lax: the authorization server sends the browser back with a top-level GET, which must carry it.
    sameSite: "Lax",
    secure: new URL(c.req.url).protocol === "https:",
    path: CALLBACK_PATH,
    maxAge: 600,
  });
  c.header("cache-control", "no-store");
  c.header("referrer-policy", "no-referrer");
  // 303 after the confirmation's POST: the browser follows with a GET.
  return c.redirect(started.authorizeUrl, confirmed ? 303 : 302);
}

/**
 * A link's maker or its grant's holder, in words: an API key by its name (`key_…`, or a caller's subject
 * `key:key_…`), an OAuth client by its id (`oauth:…`), the workspace's shared grant; anything else as it is.
 */
async function inWords(env: Env, workspaceId: string, who: string): Promise<string> {
  if (who === SHARED_SUBJECT) return "every agent and key that may call this service in the workspace (a shared grant)";
  if (who.startsWith("oauth:")) return `the OAuth client ${who.slice("oauth:".length)}`;
  const keyId = who.replace(/^key:/, "");
  if (!keyId.startsWith("key_")) return who;
  const row = await env.DB.prepare("SELECT name FROM api_keys WHERE id = ? AND workspace_id = ?")
    .bind(keyId, workspaceId)
    .first<{ name: string }>();
  return `the API key ${row ? `“${row.name}” (${keyId})` : keyId}`;
}

async function confirmationPage(c: Context<AppEnv>, workspaceId: string, flowId: string, flow: FlowToConfirm): Promise<Response> {
  const [workspace, stored, holder, maker] = await Promise.all([
    getWorkspace(c.env.DB, workspaceId),
    storedUpstreamTarget(c.env, workspaceId, flow.serviceId),
    inWords(c.env, workspaceId, flow.subject),
    inWords(c.env, workspaceId, flow.initiator),
  ]);
  const service = stored?.slug ?? flow.serviceId;
  const title = `Authorize ${service} for the workspace ${workspace?.name ?? workspaceId}?`;
  const body = [
    `<p>This link was made by ${escapeHtml(maker)} of the Rayrun workspace <strong>${escapeHtml(workspace?.name ?? workspaceId)}</strong>.`,
    ` Going on takes you to <strong>${escapeHtml(flow.authorizationServer)}</strong>; the account you sign in with there will be used for the service`,
    ` <strong>${escapeHtml(service)}</strong> by ${escapeHtml(holder)}.</p>`,
    `<p>Go on only if you asked for this link, or trust the person who sent it to you with that account. Otherwise close this page.</p>`,
    `<form method="post" action="${START_PATH}"><input type="hidden" name="flow" value="${escapeHtml(flowId)}">`,
    `<button type="submit">Continue to ${escapeHtml(flow.authorizationServer)}</button></form>`,
  ].join("");
  return pageHtml(c, 200, title, body);
}

upstreamOAuthRoutes.get(CALLBACK_PATH, async (c) => {
  const url = new URL(c.req.url);
  const state = url.searchParams.get("state") ?? "";
  const workspaceId = handleWorkspace(state);
  if (!workspaceId) return flowError(c, stateInvalid("unknown"));
  const cookieName = await bindingCookie(state);
  const nonce = getCookie(c, cookieName);
  setCookie(c, cookieName, "", { path: CALLBACK_PATH, maxAge: 0 });
  const consumed = await workspaceClient(c.env, workspaceId).consumeOAuthFlow(state, nonce ? await sha256Hex(nonce) : null);
  if (!consumed.ok) return flowError(c, stateInvalid(consumed.reason));
  const { flow } = consumed;
  const stored = await storedUpstreamTarget(c.env, workspaceId, flow.serviceId);
  if (!stored?.oauth) return flowError(c, notFound("Service"));
  const { oauth } = stored;
  const notePending = async (code: string, message: string) => {
    // A caller's own failed flow does not change the service; the admin's leaves it pending, saying why.
    if (flow.purpose === "service") await notePendingReason(c.env.DB, workspaceId, flow.serviceId, { code, message });
  };

  const allowList = parseAllowList(c.env.DEV_ALLOWED_HOSTS);
  let tokens;
  try {
    const clientSecret = await openClientSecret(oauth.sealedClientSecret, flow.serviceId, c.env.SECRETS_KEY);
    tokens = await exchangeCode(
      oauth.server,
      clientSecret,
      url.searchParams,
      { state, redirectUri: redirectUri(gatewayOrigin(c.env)), codeVerifier: flow.codeVerifier },
      allowList,
    );
  } catch (error) {
    const apiError = oauthApiError(error);
    if (!(apiError instanceof ApiError)) throw error;
    // The authorization server's own answer (access_denied, …) says the admin or user declined or could not.
    const fromServer = error instanceof TokenRequestFailed && url.searchParams.has("error");
    const answered = fromServer
      ? new ApiError("oauth_callback_error", {
          message: `The authorization server answered ${error.oauthError}${url.searchParams.get("error_description") ? `: ${url.searchParams.get("error_description")}` : ""}`,
          details: { error: error.oauthError },
        })
      : apiError;
    await notePending(fromServer ? error.oauthError : answered.code, answered.message);
    return flowError(c, answered);
  }
  const saved = await workspaceClient(c.env, workspaceId).saveUpstreamGrant({
    flowId: flow.flowId,
    serviceId: flow.serviceId,
    subject: flow.subject,
    mode: oauth.mode,
    tokens,
    authorizedBy: flow.initiator,
  });
  if (!saved.saved) return flowError(c, stateInvalid("cancelled"));
  if (saved.replacedTokens) {
    const replaced = { sealedTokens: saved.replacedTokens, serviceId: flow.serviceId, subject: flow.subject };
    c.executionCtx.waitUntil(revokeReplacedTokens(c.env, oauth, replaced, tokens));
  }

  let indexNote = "";
  if (flow.purpose === "service") {
    await markAuthorized(c.env.DB, workspaceId, flow.serviceId, { by: flow.initiator, indexSubject: flow.subject });
    const authorized = { ...oauth, status: "authorized" as const, indexSubject: flow.subject };
    const indexed = await withUpstreamAuthorization(
      { env: c.env, workspaceId, serviceId: flow.serviceId, serviceSlug: stored.slug, oauth: authorized, callerSubject: flow.subject },
      stored.target,
      (target) => reindexService(c.env, workspaceId, flow.serviceId, target),
    ).catch((error: unknown) => {
      const apiError = oauthApiError(error);
      if (!(apiError instanceof ApiError)) throw error;
      return { ok: false as const, refusal: { code: apiError.code, message: apiError.message } };
    });
    if (!indexed.ok) indexNote = ` Indexing its tools failed (${indexed.refusal.code}: ${indexed.refusal.message}); use Refresh.`;
  }
  await invalidateCatalog(c.env, workspaceId);
  if (flow.returnTo) return c.redirect(flow.returnTo, 302);
  return page(c, 200, "Authorized", `The service ${stored.slug} is authorized. You can close this page.${indexNote}`);
});

upstreamOAuthRoutes.get(CLIENT_METADATA_PATH, (c) => {
  let origin: string;
  try {
    origin = gatewayOrigin(c.env);
  } catch {
    throw notFound("Client metadata");
  }
  return c.json(
    {
      client_id: clientMetadataUrl(origin),
      client_name: "Rayrun MCP gateway",
      client_uri: origin,
      redirect_uris: [redirectUri(origin)],
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: "none",
    },
    200,
    { "cache-control": "public, max-age=3600" },
  );
});
