import type { WaitUntil } from "../lib/after-response.ts";
import { authorizationServer, mcpResource, OAUTH_SCOPE, publicUrl, resourceMetadataUrl, type GrantProps } from "../oauth/oauth.config.ts";
import { grantIdOfToken, isolateRevokedGrants, type RevokedGrantCache } from "../oauth/revoked-grants.ts";
import { resolvePrincipal } from "./authenticate.ts";
import { bearerToken } from "./bearer.ts";

/**
 * Who may call /mcp: an API key with tools:call, or an OAuth access token an
 * admin granted for one workspace and access profile. Both end up the same
 * caller, so policy, hooks and approvals treat them alike.
 */
export type McpAuthentication =
  | {
      kind: "caller";
      workspaceId: string;
      /** The key's id, or `oauth:<client_id>`: what approvals and sessions are bound to. */
      actorId: string;
      /** Who made the call, as log rows record it: `key:<key id>` or `oauth:<client_id>`. */
      actor: string;
      /** An OAuth caller's grant, named by the user who gave it (a client holds one grant per workspace); null for a key. */
      grantedBy: string | null;
      /**
       * The one credential behind the call, inside its workspace: `key:<key id>`, or `grant:<consent id>` for an
       * OAuth grant (one client holds a grant in each workspace that consented to it). Relay routes are scoped by it.
       */
      credential: string;
      profileId: string | null;
      /**
       * Whose upstream grants the caller uses on services authorized per user: the key's owner when a user
       * created it (`user:<id>`), else the key itself (`key:<id>`); for OAuth, the user who consented, else the client.
       */
      grantSubject: string;
    }
  | { kind: "refused"; status: 401 | 403; message: string; headers: Record<string, string> };

export async function authenticateMcp(env: Env, request: Request, waitUntil: WaitUntil): Promise<McpAuthentication> {
  const bearer = bearerToken(request);
  if (bearer && !bearer.startsWith("rr_")) return authenticateOAuthToken(env, bearer, waitUntil);

  const principal = await resolvePrincipal(env, request, waitUntil);
  if (!principal || principal.kind !== "key") {
    return unauthorized(
      env,
      "Send an API key with the tools:call scope as 'Authorization: Bearer rr_…', or an OAuth access token",
      !!bearer,
    );
  }
  if (!principal.scopes.has("tools:call")) {
    return { kind: "refused", status: 403, message: "This key lacks the 'tools:call' scope", headers: {} };
  }
  return {
    kind: "caller",
    workspaceId: principal.workspaceId,
    actorId: principal.id,
    actor: `key:${principal.id}`,
    grantedBy: null,
    credential: `key:${principal.id}`,
    profileId: principal.profileId,
    grantSubject: principal.createdBy.startsWith("usr_") ? `user:${principal.createdBy}` : `key:${principal.id}`,
  };
}

/**
 * An OAuth access token, as the library validates it (from KV, which may still serve a revoked grant's tokens for a
 * while) and as the workspace's lease-covered list of revoked grants allows it (`revoked`; tests pass their own
 * isolate's), so a revocation holds everywhere once its API has answered.
 */
export async function authenticateOAuthToken(
  env: Env,
  token: string,
  waitUntil?: WaitUntil,
  revoked: RevokedGrantCache = isolateRevokedGrants,
): Promise<McpAuthentication> {
  const server = authorizationServer(env);
  const origin = publicUrl(env);
  const validated = server && origin ? await server.validateToken<GrantProps>(mcpResource(origin), token, env) : null;
  const grantId = validated && grantIdOfToken(token);
  if (!validated || !grantId || (await revoked.isRevoked(env, validated.props.workspaceId, grantId, waitUntil))) {
    return unauthorized(env, "The access token is invalid, expired or revoked", true);
  }
  if (!validated.scope.includes(OAUTH_SCOPE)) {
    return {
      kind: "refused",
      status: 403,
      message: "This access token lacks the 'tools:call' scope",
      headers: { "www-authenticate": challenge(env, { error: "insufficient_scope" }) },
    };
  }
  // Each client holds one grant per workspace (a new consent replaces it): approvals and sessions bind the client
  // within the workspace, relay routes the grant itself.
  return {
    kind: "caller",
    workspaceId: validated.props.workspaceId,
    actorId: `oauth:${validated.clientId}`,
    actor: `oauth:${validated.clientId}`,
    grantedBy: validated.userId,
    credential: `grant:${validated.props.consentId ?? `client:${validated.clientId}`}`,
    profileId: validated.props.profileId,
    grantSubject: validated.props.userId ? `user:${validated.props.userId}` : `oauth:${validated.clientId}`,
  };
}

function unauthorized(env: Env, message: string, credentialSent: boolean): McpAuthentication {
  const headers = { "www-authenticate": challenge(env, credentialSent ? { error: "invalid_token" } : {}) };
  return { kind: "refused", status: 401, message, headers };
}

/** RFC 6750 challenge pointing OAuth clients at the Protected Resource Metadata (RFC 9728 §5.1). */
function challenge(env: Env, options: { error?: "invalid_token" | "insufficient_scope" }): string {
  const origin = publicUrl(env);
  const params = [
    ...(options.error ? [`error="${options.error}"`] : []),
    ...(origin ? [`resource_metadata="${resourceMetadataUrl(origin)}"`] : []),
    `scope="${OAUTH_SCOPE}"`,
  ];
  return `Bearer ${params.join(", ")}`;
}
