import { AuthorizationError, type OAuthHelpers } from "@cloudflare/workers-oauth-provider";
import { Hono, type Context } from "hono";
import { resolvePrincipal } from "../auth/authenticate.ts";
import { roleInForce } from "../auth/users.store.ts";
import type { AppEnv } from "../http/app.ts";
import { ApiError } from "../http/errors.ts";
import { choiceValue, consentPage, devSignInPage, grantChoices, messagePage } from "./consent-page.ts";
import { withdrawConsent } from "./grants.routes.ts";
import { handleRegistration, oauthRegistry } from "./registration.ts";
import { REGISTRATION_LIMITS } from "./registry.do.ts";
import {
  AUTHORIZE_PATH,
  authorizationServer,
  type GrantProps,
  OAUTH_SCOPE,
  protectedResourceMetadata,
  publicUrl,
  REGISTER_PATH,
  TOKEN_PATH,
} from "./oauth.config.ts";

/**
 * OAuth for MCP clients (Claude Desktop, ChatGPT and other remote connectors):
 * discovery, dynamic registration, the token endpoint (all served by
 * @cloudflare/workers-oauth-provider) and the consent page, where a signed-in
 * workspace admin binds the grant to one workspace and access profile.
 */
export const oauthRoutes = new Hono<AppEnv>();

function configuredServer(env: Env) {
  const server = authorizationServer(env);
  if (!server) throw new ApiError("not_found", { message: "OAuth is not configured: set PUBLIC_URL" });
  return server;
}

const oauthApi = (env: Env): OAuthHelpers => configuredServer(env).getOAuthApi(env);

// RFC 9728: the path-suffixed form for the /mcp resource, and the root form for clients that try it first.
for (const path of ["/.well-known/oauth-protected-resource", "/.well-known/oauth-protected-resource/mcp"]) {
  oauthRoutes.get(path, (c) => {
    const origin = publicUrl(c.env);
    if (!origin) throw new ApiError("not_found", { message: "OAuth is not configured: set PUBLIC_URL" });
    // Public metadata: any browser app may read it.
    return c.json(protectedResourceMetadata(origin), 200, { "access-control-allow-origin": "*" });
  });
}

// Registration (RFC 7591) needs no credential: bounded and rate-limited before the library stores a client.
oauthRoutes.post(REGISTER_PATH, (c) => handleRegistration(configuredServer(c.env), c.req.raw, c.env, c.executionCtx as ExecutionContext));

// Metadata (RFC 8414), registration's preflight, token and revocation: the library's, CORS included.
const libraryPaths = ["/.well-known/oauth-authorization-server", "/.well-known/oauth-authorization-server/*", TOKEN_PATH, REGISTER_PATH];
for (const path of libraryPaths) {
  oauthRoutes.all(path, (c) => configuredServer(c.env).fetch(c.req.raw, c.env, c.executionCtx as ExecutionContext));
}

const html = (body: string, status: 200 | 400 | 401 | 403, headers?: Headers) => {
  const response = new Response(body, { status, headers });
  response.headers.set("content-type", "text/html; charset=utf-8");
  response.headers.set("x-frame-options", "DENY");
  return response;
};

/** The signed-in browser user (Cloudflare Access deployed, the dev login locally), or null. */
async function signedInUser(c: Context<AppEnv>) {
  const principal = await resolvePrincipal(c.env, c.req.raw, (promise) => c.executionCtx.waitUntil(promise));
  return principal?.kind === "user" ? principal : null;
}

const SIGN_IN_MESSAGE = "Sign in as a workspace admin through Cloudflare Access, then open this link again.";
const signInFirst = (env: Env) =>
  html(env.DEV_LOGIN === "on" ? devSignInPage() : messagePage("Sign in to Rayrun first", SIGN_IN_MESSAGE), 401);

oauthRoutes.get(AUTHORIZE_PATH, async (c) => {
  const oauth = oauthApi(c.env);
  try {
    const request = await oauth.parseAuthRequest(c.req.raw);
    if (!(await oauthRegistry(c.env).isLive(request.clientId))) return expiredClient();
    const user = await signedInUser(c);
    if (!user) return signInFirst(c.env);
    const choices = await grantChoices(c.env.DB, user.id);
    if (!choices.length) return html(messagePage("No workspace to connect", "Only a workspace admin can connect an app."), 403);
    const details = await oauth.describeConsent(request);
    const consent = await oauth.beginConsent(request);
    return html(consentPage(details, consent.handle, user.email, choices), 200, consent.headers);
  } catch (error) {
    return authorizationFailure(error);
  }
});

oauthRoutes.post(AUTHORIZE_PATH, async (c) => {
  const oauth = oauthApi(c.env);
  const user = await signedInUser(c);
  if (!user) return signInFirst(c.env);
  const form = await c.req.raw.clone().formData();
  const handle = String(form.get("handle") ?? "");
  try {
    if (form.get("decision") !== "approve") {
      const denied = await oauth.denyConsent(c.req.raw, handle);
      denied.headers.set("location", denied.redirectTo);
      return new Response(null, { status: 302, headers: denied.headers });
    }
    // The choice must be one the page could have offered this user: an admin's workspace and one of its profiles.
    const target = String(form.get("target") ?? "");
    const choice = (await grantChoices(c.env.DB, user.id)).find((candidate) => choiceValue(candidate) === target);
    if (!choice) return html(messagePage("Not allowed", "Pick a workspace where you are an admin, and one of its profiles."), 403);
    const approved = await oauth.approveConsent(c.req.raw, handle, { scope: [OAUTH_SCOPE] });
    const registry = oauthRegistry(c.env);
    if (!(await registry.isLive(approved.request.clientId))) return expiredClient();
    const consentId = crypto.randomUUID();
    const { redirectTo } = await oauth.completeAuthorization({
      request: approved.request,
      // Grants are listed and revoked per workspace, so the workspace is the grant's subject.
      userId: choice.workspaceId,
      metadata: { profileId: choice.profileId, approvedBy: user.email, consentId },
      scope: [OAUTH_SCOPE],
      props: { workspaceId: choice.workspaceId, profileId: choice.profileId, userId: user.id, consentId } satisfies GrantProps,
    });
    // The admin's removal may have started after the check above, and listed the grants they approved before this one
    // was written: asked again now that it exists, so a removal either finds it or it is withdrawn here.
    if ((await roleInForce(c.env.DB, choice.workspaceId, user.id)) !== "admin") {
      await withdrawConsent(c.env, choice.workspaceId, consentId);
      return html(messagePage("Not allowed", "You are no longer an admin of that workspace."), 403);
    }
    // Consented to: the client is no longer one that expires unused.
    await registry.markUsed(approved.request.clientId);
    approved.headers.set("location", redirectTo);
    return new Response(null, { status: 302, headers: approved.headers });
  } catch (error) {
    return authorizationFailure(error);
  }
});

/** A registration no admin consented to within its unused lifetime is gone (registry.do.ts), even before the sweep. */
const expiredClient = () =>
  html(
    messagePage(
      "This sign-in link cannot be used",
      `The app's registration expired: no admin connected it within ${REGISTRATION_LIMITS.unusedLifetimeMs / 3_600_000} hours of registering. Connect the app again.`,
    ),
    400,
  );

/** Redirect to the client only when the library validated its redirect URI; otherwise explain here. */
function authorizationFailure(error: unknown): Response {
  if (!(error instanceof AuthorizationError)) throw error;
  if (error.redirectTo) return new Response(null, { status: 302, headers: { location: error.redirectTo } });
  return html(messagePage("This sign-in link cannot be used", error.description), 400);
}
