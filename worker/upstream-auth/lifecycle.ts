import { ApiError } from "../http/errors.ts";
import { reindexService, tooManyServices } from "../services/indexing.ts";
import { insertOAuthService, storedUpstreamTarget, type PendingService } from "../services/services.store.ts";
import { listUpstreamTools, UpstreamFailure, type UpstreamTarget } from "../services/upstream.ts";
import { parseAllowList } from "../services/url-guard.ts";
import { workspaceClient } from "../workspaces/workspace.client.ts";
import { clientMetadataUrl, gatewayOrigin, OAuthNotConfigured, redirectUri } from "./authorization.ts";
import { openClientSecret, openTokens, sealClientSecret, type GrantSubject } from "./grants.do.ts";
import {
  discoverOAuthServer,
  OAuthClientRequired,
  OAuthDiscoveryFailed,
  OAuthMetadataInvalid,
  registerClient,
  type DiscoveredServer,
  type OAuthServer,
  type PreRegisteredClient,
} from "./oauth.server.ts";
import { clearServiceOAuth, markPending, replaceClientSecret, setServiceOAuth, type ServiceOAuth } from "./oauth.store.ts";
import { revokeTokens, TokenRequestFailed, type GrantTokens } from "./oauth.tokens.ts";

/** Any failure of the upstream OAuth flow as the REST error (stable code) the API answers with. */
export function oauthApiError(error: unknown): unknown {
  if (error instanceof ApiError) return error;
  if (error instanceof OAuthMetadataInvalid) {
    return new ApiError("oauth_metadata_invalid", { message: error.message, details: { field: error.field } });
  }
  if (error instanceof OAuthDiscoveryFailed) return new ApiError("oauth_discovery_failed", { message: error.message });
  if (error instanceof OAuthClientRequired) {
    return new ApiError("oauth_client_required", { message: error.message, details: { field: "json.oauth.clientId" } });
  }
  if (error instanceof OAuthNotConfigured) return new ApiError("oauth_not_configured", { message: error.message });
  if (error instanceof TokenRequestFailed) {
    return new ApiError("oauth_token_request_failed", { message: error.message, details: { error: error.oauthError } });
  }
  if (error instanceof UpstreamFailure) {
    const code =
      error.code === "upstream_unauthorized" || error.code === "too_many_tools" || error.code === "tool_list_too_large"
        ? "upstream_protocol_error"
        : error.code;
    return new ApiError(code, { message: error.message });
  }
  return error;
}

export interface OAuthConnectOptions extends Partial<PreRegisteredClient> {
  mode?: "shared" | "per_user";
}

/** Discovers the service's authorization server from its 401 and registers the gateway as its client there. */
async function registeredServer(
  env: Env,
  service: { id: string; url: string },
  challenge: string | null,
  client: Partial<PreRegisteredClient> | undefined,
): Promise<{ server: OAuthServer; sealedClientSecret: string | null }> {
  const allowList = parseAllowList(env.DEV_ALLOWED_HOSTS);
  const discovered = await discoverOAuthServer(service.url, challenge, allowList);
  return clientAt(env, service.id, discovered, client);
}

/** The gateway's client at a discovered authorization server: the admin's pre-registered one, else its own registration. */
async function clientAt(
  env: Env,
  serviceId: string,
  discovered: DiscoveredServer,
  client: Partial<PreRegisteredClient> | undefined,
): Promise<{ server: OAuthServer; sealedClientSecret: string | null }> {
  const origin = gatewayOrigin(env);
  const preRegistered = client?.clientId ? { clientId: client.clientId, clientSecret: client.clientSecret } : undefined;
  const registered = await registerClient(
    discovered,
    preRegistered,
    { redirectUri: redirectUri(origin), clientMetadataUrl: clientMetadataUrl(origin) },
    parseAllowList(env.DEV_ALLOWED_HOSTS),
  );
  const server: OAuthServer = {
    resource: discovered.resource,
    metadata: discovered.metadata,
    scopes: discovered.scopes,
    registration: registered.registration,
    clientId: registered.clientId,
    tokenEndpointAuthMethod: registered.tokenEndpointAuthMethod,
  };
  const sealedClientSecret = registered.clientSecret ? await sealClientSecret(registered.clientSecret, serviceId, env.SECRETS_KEY) : null;
  return { server, sealedClientSecret };
}

/**
 * The service's upstream answered 401: discover its authorization server,
 * register the gateway as its client, and store the service pending, with no
 * tools indexed until an admin authorizes it.
 */
export async function connectOAuthService(
  env: Env,
  service: PendingService,
  challenge: string | null,
  options: OAuthConnectOptions | undefined,
) {
  try {
    const { server, sealedClientSecret } = await registeredServer(env, service, challenge, options);
    if (!(await insertOAuthService(env.DB, service, { mode: options?.mode ?? "shared", server, sealedClientSecret }))) {
      throw tooManyServices();
    }
  } catch (error) {
    throw oauthApiError(error);
  }
}

/** What PATCH may say of a service's upstream OAuth: a change, or null to remove it. */
export type OAuthChange = { mode?: "shared" | "per_user"; clientId?: string | null; clientSecret?: string } | null;

/** The service being changed: who it is, its OAuth as stored, and how it reaches its upstream after the PATCH (no token). */
export interface ChangingService {
  workspaceId: string;
  id: string;
  oauth: ServiceOAuth | null;
  target: UpstreamTarget;
}

/**
 * PATCH's change of a service's upstream OAuth (docs/upstream-oauth.md, "Changing a service's OAuth"): its mode or
 * client (every grant was made under the old one: each is revoked and deleted, and the service waits for an admin
 * again), OAuth for a service whose upstream now answers 401, or `null` to remove it, once indexing through the
 * service's headers alone shows the upstream no longer asks for it. A change that fails changes nothing.
 */
export async function changeServiceOAuth(env: Env, service: ChangingService, change: OAuthChange): Promise<void> {
  try {
    if (change === null) {
      if (service.oauth) await removeOAuth(env, service, service.oauth);
    } else if (!service.oauth) await addOAuth(env, service, change);
    else await changeOAuth(env, service, service.oauth, change);
  } catch (error) {
    throw oauthApiError(error);
  }
}

async function removeOAuth(env: Env, service: ChangingService, oauth: ServiceOAuth): Promise<void> {
  try {
    // Indexing through the headers alone is the proof, and it brings the tools up to date for calls without a token.
    await reindexService(env, service.workspaceId, service.id, service.target);
  } catch (error) {
    if (error instanceof UpstreamFailure && error.code === "upstream_unauthorized") {
      throw new ApiError("oauth_still_required", {
        message: "The upstream still answers 401 to the service's headers alone: give it headers it accepts, or keep OAuth",
        details: { field: "json.oauth" },
      });
    }
    throw error;
  }
  await disconnectGrants(env, service.workspaceId, service.id, oauth);
  await clearServiceOAuth(env.DB, service.workspaceId, service.id);
}

async function addOAuth(env: Env, service: ChangingService, change: NonNullable<OAuthChange>): Promise<void> {
  let challenge: string | null;
  try {
    await listUpstreamTools(service.target);
    throw new ApiError("service_not_oauth", {
      message: "The upstream answers to the service's headers alone: it does not ask for OAuth",
      details: { field: "json.oauth" },
    });
  } catch (error) {
    if (!(error instanceof UpstreamFailure) || error.code !== "upstream_unauthorized") throw error;
    challenge = error.challenge;
  }
  const client = change.clientId ? { clientId: change.clientId, clientSecret: change.clientSecret } : undefined;
  const { server, sealedClientSecret } = await registeredServer(env, { id: service.id, url: service.target.url }, challenge, client);
  await setServiceOAuth(env.DB, service.workspaceId, service.id, {
    mode: change.mode ?? "shared",
    server,
    sealedClientSecret,
    reason: { code: "connected", message: "The upstream asks for OAuth now; an admin must authorize it" },
  });
}

const MODE_NAMES = { shared: "shared", per_user: "per user" } as const;

async function changeOAuth(env: Env, service: ChangingService, oauth: ServiceOAuth, change: NonNullable<OAuthChange>): Promise<void> {
  const mode = change.mode ?? oauth.mode;
  const preRegistered = oauth.server.registration === "pre_registered" ? oauth.server.clientId : null;
  // `null` forgets a pre-registered client (there is nothing to forget otherwise); the id it has already is no new client.
  const newClient = change.clientId !== undefined && change.clientId !== preRegistered && !(change.clientId === null && !preRegistered);
  let client = { server: oauth.server, sealedClientSecret: oauth.sealedClientSecret };
  if (newClient || change.clientSecret !== undefined) {
    const given = change.clientId ? { clientId: change.clientId, clientSecret: change.clientSecret } : undefined;
    client = await clientAt(env, service.id, oauth.server, given);
  }
  if (!newClient && mode === oauth.mode) {
    // The same pre-registered client with a new secret: its grants are still that client's, and stand.
    if (change.clientSecret !== undefined) {
      await replaceClientSecret(env.DB, service.workspaceId, service.id, client.server, client.sealedClientSecret!);
    }
    return;
  }
  const what = [
    mode !== oauth.mode ? `its mode changed from ${MODE_NAMES[oauth.mode]} to ${MODE_NAMES[mode]}` : null,
    newClient ? `its client changed to ${client.server.clientId} (${client.server.registration.replaceAll("_", " ")})` : null,
  ].filter(Boolean);
  // Revoked with the old client, whose grants they are.
  await disconnectGrants(env, service.workspaceId, service.id, oauth);
  await setServiceOAuth(env.DB, service.workspaceId, service.id, {
    mode,
    ...client,
    reason: {
      code: "oauth_changed",
      message: `The service's OAuth changed (${what.join("; ")}): every grant was revoked; authorize it again`,
    },
  });
}

/**
 * Revokes one grant at its authorization server and deletes it; when it was the grant that indexes its service,
 * the service goes back to pending with `reason` (an admin's DELETE, or its key's revocation).
 */
export async function revokeGrant(
  env: Env,
  workspaceId: string,
  grant: { id: string; serviceId: string; subject: string },
  reason: string,
): Promise<{ grants: number; revoked: number }> {
  const oauth = (await storedUpstreamTarget(env, workspaceId, grant.serviceId))?.oauth ?? null;
  const { grants, revoked } = await disconnectGrants(env, workspaceId, grant.serviceId, oauth, grant.id);
  if (oauth && grant.subject === oauth.indexSubject) {
    await markPending(env.DB, workspaceId, grant.serviceId, { code: "disconnected", message: reason });
  }
  return { grants, revoked };
}

/**
 * Every grant of the given subjects (on any service), revoked at its authorization server and deleted, once they
 * can never call again: a revoked key's own grants (`key:<id>`; a member's keys use the member's), or a removed
 * member's (`user:<id>`) with those of the keys made with their keys. Keeping them would hold a live credential to someone's upstream account for no one.
 * Best effort: the revocation or removal stands, and is in force everywhere, whatever an authorization server
 * answers. Answers how many grants were deleted.
 */
export async function revokeSubjectGrants(env: Env, workspaceId: string, subjects: readonly string[], reason: string): Promise<number> {
  let deleted = 0;
  try {
    const grants = (await workspaceClient(env, workspaceId).listUpstreamGrants()).filter((grant) => subjects.includes(grant.subject));
    for (const grant of grants) deleted += (await revokeGrant(env, workspaceId, grant, reason)).grants;
  } catch (error) {
    console.error(`revoking the upstream grants of ${subjects.join(", ")} failed`, error);
  }
  return deleted;
}

/**
 * The tokens a grant authorized again replaced (`saveGrant`), revoked at the authorization server where it offers
 * revocation: no one would use them again, and they may act for another upstream account than the new ones. Best
 * effort, after the callback's answer: the new grant stands whatever the server says. A token the server handed out
 * again (some give the same client and account the refresh token they hold) is the new grant's, and stays.
 */
export async function revokeReplacedTokens(
  env: Env,
  oauth: ServiceOAuth,
  replaced: { sealedTokens: string; serviceId: string; subject: GrantSubject },
  current: GrantTokens,
): Promise<void> {
  try {
    const clientSecret = await openClientSecret(oauth.sealedClientSecret, replaced.serviceId, env.SECRETS_KEY);
    const tokens = await openTokens(replaced.sealedTokens, replaced.serviceId, replaced.subject, env.SECRETS_KEY);
    if (tokens.accessToken === current.accessToken) return;
    if (tokens.refreshToken !== null && tokens.refreshToken === current.refreshToken) tokens.refreshToken = null;
    await revokeTokens(oauth.server, clientSecret, tokens, parseAllowList(env.DEV_ALLOWED_HOSTS));
  } catch (error) {
    console.error("revoking a replaced grant's tokens failed", error);
  }
}

/**
 * Deletes grants (every grant of the service, or one) and revokes each at the
 * authorization server where it offers revocation (RFC 7009). Revocation is
 * best effort; the tokens are gone from the gateway either way.
 */
export async function disconnectGrants(
  env: Env,
  workspaceId: string,
  serviceId: string,
  oauth: ServiceOAuth | null,
  grantId?: string,
): Promise<{ grants: number; revoked: number; subjects: string[] }> {
  const taken = await workspaceClient(env, workspaceId).takeUpstreamGrants({ serviceId, ...(grantId ? { grantId } : {}) });
  let revoked = 0;
  if (oauth) {
    const clientSecret = await openClientSecret(oauth.sealedClientSecret, serviceId, env.SECRETS_KEY);
    const allowList = parseAllowList(env.DEV_ALLOWED_HOSTS);
    for (const grant of taken) {
      const tokens = await openTokens(grant.sealedTokens, grant.serviceId, grant.subject, env.SECRETS_KEY);
      if (await revokeTokens(oauth.server, clientSecret, tokens, allowList)) revoked++;
    }
  }
  return { grants: taken.length, revoked, subjects: taken.map((grant) => grant.subject) };
}
