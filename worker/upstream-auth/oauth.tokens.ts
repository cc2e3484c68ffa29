import {
  authorizationCodeGrantRequest,
  AuthorizationResponseError,
  calculatePKCECodeChallenge,
  ClientSecretBasic,
  ClientSecretPost,
  generateRandomCodeVerifier,
  None,
  OperationProcessingError,
  processAuthorizationCodeResponse,
  processRefreshTokenResponse,
  processRevocationResponse,
  refreshTokenGrantRequest,
  ResponseBodyError,
  revocationRequest,
  validateAuthResponse,
  type AuthorizationServer,
  type Client,
  type ClientAuth,
  type TokenEndpointResponse,
} from "oauth4webapi";
import { UpstreamFailure } from "../services/upstream.ts";
import { oauthRequestOptions } from "./oauth.fetch.ts";
import type { OAuthServer } from "./oauth.server.ts";
import { tokenBoundBreach } from "./oauth.token-bounds.ts";

/** An OAuth server as oauth4webapi takes it, with the gateway's client and its authentication. */
interface Party {
  as: AuthorizationServer;
  client: Client;
  auth: ClientAuth;
}

function party(server: OAuthServer, clientSecret: string | null): Party {
  const method = server.tokenEndpointAuthMethod;
  const auth =
    method === "none" || !clientSecret
      ? None()
      : method === "client_secret_post"
        ? ClientSecretPost(clientSecret)
        : ClientSecretBasic(clientSecret);
  return {
    as: server.metadata as AuthorizationServer,
    client: { client_id: server.clientId, token_endpoint_auth_method: clientSecret ? method : "none" },
    auth,
  };
}

/** The tokens of one grant, as they are sealed at rest. */
export interface GrantTokens {
  accessToken: string;
  refreshToken: string | null;
  /** Epoch ms; null when the server gave no `expires_in`. */
  expiresAt: number | null;
  scopes: string[];
}

/**
 * An `expires_in` past this many seconds (ten years) is taken as no expiry at all. The server chooses the number
 * (oauth4webapi only checks that it is finite and not negative): `1e300` would put the expiry past the last date
 * a Date can hold, and every list of the workspace's grants failed on it (round 6, finding 2).
 */
export const MAX_EXPIRES_IN_SECONDS = 10 * 366 * 24 * 60 * 60;

function grantTokens(response: TokenEndpointResponse, previous: { refreshToken: string | null; scopes: string[] } | null): GrantTokens {
  // Bounded before anything is sealed or stored (oauth.token-bounds.ts): the server is the connecting tenant's choice.
  const breach = tokenBoundBreach(response);
  if (breach) throw new TokenRequestFailed("invalid_response", `The token endpoint answered badly: ${breach}`);
  const expiresIn = response.expires_in;
  return {
    accessToken: response.access_token,
    // RFC 6749 §6: a server that does not rotate the refresh token keeps the old one valid.
    refreshToken: response.refresh_token ?? previous?.refreshToken ?? null,
    expiresAt: typeof expiresIn === "number" && expiresIn <= MAX_EXPIRES_IN_SECONDS ? Date.now() + expiresIn * 1000 : null,
    scopes: response.scope ? response.scope.split(" ").filter(Boolean) : (previous?.scopes ?? []),
  };
}

/** An authorization about to start: the URL the browser goes to, and the PKCE verifier kept for the callback. */
export interface AuthorizationRequest {
  url: string;
  codeVerifier: string;
}

/** Authorization code with PKCE (S256), the `state`, and the RFC 8707 `resource` the token is to be bound to. */
export async function authorizationRequest(server: OAuthServer, redirectUri: string, state: string): Promise<AuthorizationRequest> {
  const codeVerifier = generateRandomCodeVerifier();
  const url = new URL(server.metadata.authorization_endpoint);
  url.searchParams.set("response_type", "code");
  url.searchParams.set("client_id", server.clientId);
  url.searchParams.set("redirect_uri", redirectUri);
  url.searchParams.set("code_challenge", await calculatePKCECodeChallenge(codeVerifier));
  url.searchParams.set("code_challenge_method", "S256");
  url.searchParams.set("state", state);
  url.searchParams.set("resource", server.resource);
  if (server.scopes.length) url.searchParams.set("scope", server.scopes.join(" "));
  return { url: url.href, codeVerifier };
}

/** Why the callback or a token request failed, in the terms a service's pending reason and the API report. */
export class TokenRequestFailed extends Error {
  constructor(
    /** The server's OAuth error code (`invalid_grant`, `access_denied`, …), or `invalid_response`. */
    readonly oauthError: string,
    message: string,
  ) {
    super(message);
    this.name = "TokenRequestFailed";
  }
}

function asTokenFailure(what: string) {
  return (error: unknown): never => {
    if (error instanceof UpstreamFailure) throw error;
    if (error instanceof ResponseBodyError || error instanceof AuthorizationResponseError) {
      const description = error.error_description ? `: ${error.error_description}` : "";
      throw new TokenRequestFailed(error.error, `${what} answered ${error.error}${description}`);
    }
    if (error instanceof OperationProcessingError || error instanceof TypeError) {
      throw new TokenRequestFailed("invalid_response", `${what} answered badly: ${error.message}`);
    }
    throw error;
  };
}

/**
 * The callback's parameters checked (state, RFC 9207 `iss` where the server
 * sends it, an `error` answer), then the code exchanged for tokens.
 */
export async function exchangeCode(
  server: OAuthServer,
  clientSecret: string | null,
  callback: URLSearchParams,
  expected: { state: string; redirectUri: string; codeVerifier: string },
  allowList: ReadonlySet<string>,
): Promise<GrantTokens> {
  const { as, client, auth } = party(server, clientSecret);
  let params: URLSearchParams;
  try {
    params = validateAuthResponse(as, client, callback, expected.state);
  } catch (error) {
    return asTokenFailure("The authorization server")(error);
  }
  const response = await authorizationCodeGrantRequest(as, client, auth, params, expected.redirectUri, expected.codeVerifier, {
    ...oauthRequestOptions(allowList),
    additionalParameters: { resource: server.resource },
  }).catch(asTokenFailure("The token endpoint"));
  const tokens = await processAuthorizationCodeResponse(as, client, response).catch(asTokenFailure("The token endpoint"));
  return grantTokens(tokens, null);
}

/** A refresh (RFC 6749 §6), for the same resource. `TokenRequestFailed` with `invalid_grant` means the grant is gone. */
export async function refreshTokens(
  server: OAuthServer,
  clientSecret: string | null,
  previous: GrantTokens & { refreshToken: string },
  allowList: ReadonlySet<string>,
): Promise<GrantTokens> {
  const { as, client, auth } = party(server, clientSecret);
  const response = await refreshTokenGrantRequest(as, client, auth, previous.refreshToken, {
    ...oauthRequestOptions(allowList),
    additionalParameters: { resource: server.resource },
  }).catch(asTokenFailure("The token endpoint"));
  const tokens = await processRefreshTokenResponse(as, client, response).catch(asTokenFailure("The token endpoint"));
  return grantTokens(tokens, previous);
}

/**
 * RFC 7009 revocation of the refresh token (which ends the grant at most
 * servers) and the access token, where the server offers revocation. Returns
 * whether the server confirmed; a failure never keeps the tokens: the caller
 * deletes them either way.
 */
export async function revokeTokens(
  server: OAuthServer,
  clientSecret: string | null,
  tokens: GrantTokens,
  allowList: ReadonlySet<string>,
): Promise<boolean> {
  if (!server.metadata.revocation_endpoint) return false;
  const { as, client, auth } = party(server, clientSecret);
  const revoke = async (token: string, hint: string) => {
    const response = await revocationRequest(as, client, auth, token, {
      ...oauthRequestOptions(allowList),
      additionalParameters: { token_type_hint: hint },
    });
    await processRevocationResponse(response);
  };
  try {
    if (tokens.refreshToken) await revoke(tokens.refreshToken, "refresh_token");
    await revoke(tokens.accessToken, "access_token");
    return true;
  } catch (error) {
    console.error("upstream token revocation failed", error instanceof Error ? error.message : "unknown error");
    return false;
  }
}
