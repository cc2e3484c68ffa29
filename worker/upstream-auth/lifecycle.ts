import { ApiError } from "../http/errors.ts";
import { insertOAuthService, type PendingService } from "../services/services.store.ts";
import { UpstreamFailure } from "../services/upstream.ts";
import { parseAllowList } from "../services/url-guard.ts";
import { workspaceClient } from "../workspaces/workspace.client.ts";
import { clientMetadataUrl, gatewayOrigin, OAuthNotConfigured, redirectUri } from "./authorization.ts";
import { openClientSecret, openTokens, sealClientSecret } from "./grants.do.ts";
import {
  discoverOAuthServer,
  OAuthClientRequired,
  OAuthDiscoveryFailed,
  OAuthMetadataInvalid,
  registerClient,
  type OAuthServer,
  type PreRegisteredClient,
} from "./oauth.server.ts";
import type { ServiceOAuth } from "./oauth.store.ts";
import { revokeTokens, TokenRequestFailed } from "./oauth.tokens.ts";

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
    const origin = gatewayOrigin(env);
    const allowList = parseAllowList(env.DEV_ALLOWED_HOSTS);
    const discovered = await discoverOAuthServer(service.url, challenge, allowList);
    const preRegistered = options?.clientId ? { clientId: options.clientId, clientSecret: options.clientSecret } : undefined;
    const client = await registerClient(
      discovered,
      preRegistered,
      { redirectUri: redirectUri(origin), clientMetadataUrl: clientMetadataUrl(origin) },
      allowList,
    );
    const server: OAuthServer = {
      ...discovered,
      registration: client.registration,
      clientId: client.clientId,
      tokenEndpointAuthMethod: client.tokenEndpointAuthMethod,
    };
    const sealedClientSecret = client.clientSecret ? await sealClientSecret(client.clientSecret, service.id, env.SECRETS_KEY) : null;
    await insertOAuthService(env.DB, service, { mode: options?.mode ?? "shared", server, sealedClientSecret });
  } catch (error) {
    throw oauthApiError(error);
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
