import { extractWWWAuthenticateParams } from "@modelcontextprotocol/sdk/client/auth.js";
import {
  discoveryRequest,
  dynamicClientRegistrationRequest,
  OperationProcessingError,
  processDiscoveryResponse,
  processDynamicClientRegistrationResponse,
  processResourceDiscoveryResponse,
  resourceDiscoveryRequest,
  ResponseBodyError,
  type AuthorizationServer,
  type HttpRequestOptions,
} from "oauth4webapi";
import { UpstreamFailure } from "../services/upstream.ts";
import { checkUpstreamUrl } from "../services/url-guard.ts";
import { guardedOAuthFetch, oauthRequestOptions } from "./oauth.fetch.ts";
import { MAX_SCOPE_CHARS, MAX_TOKEN_CHARS } from "./oauth.token-bounds.ts";

/**
 * What the gateway keeps about an upstream's authorization server, after
 * discovery and registration: nothing secret (the client secret is sealed
 * apart). Stored as the service's `oauth_server` JSON.
 */
export interface OAuthServer {
  /** The RFC 8707 resource indicator: the protected resource metadata's `resource`. Tokens are requested for it alone. */
  resource: string;
  /** The authorization server metadata as validated: only the members the flow uses. */
  metadata: ServerMetadata;
  /** Requested at authorization: the challenge's `scope`, else the resource's `scopes_supported`; may be empty. */
  scopes: string[];
  registration: ClientRegistration;
  clientId: string;
  tokenEndpointAuthMethod: TokenEndpointAuthMethod;
}

export type ClientRegistration = "pre_registered" | "client_metadata_document" | "dynamic";
export type TokenEndpointAuthMethod = "client_secret_basic" | "client_secret_post" | "none";

export interface ServerMetadata {
  issuer: string;
  authorization_endpoint: string;
  token_endpoint: string;
  revocation_endpoint?: string;
  registration_endpoint?: string;
  authorization_response_iss_parameter_supported?: boolean;
  token_endpoint_auth_methods_supported?: string[];
  client_id_metadata_document_supported?: boolean;
}

/** Why an authorization server's (or resource's) metadata cannot be trusted: refused with `oauth_metadata_invalid`. */
export class OAuthMetadataInvalid extends Error {
  constructor(
    readonly field: string,
    message: string,
  ) {
    super(message);
    this.name = "OAuthMetadataInvalid";
  }
}

/** Discovery that found nothing to follow (no Bearer challenge, no metadata): `oauth_discovery_failed`. */
export class OAuthDiscoveryFailed extends Error {
  constructor(message: string) {
    super(message);
    this.name = "OAuthDiscoveryFailed";
  }
}

/** The authorization server offers no registration the gateway can use: `oauth_client_required`. */
export class OAuthClientRequired extends Error {
  constructor(message: string) {
    super(message);
    this.name = "OAuthClientRequired";
  }
}

/** What discovery learned, before a client is registered. */
export interface DiscoveredServer {
  resource: string;
  metadata: ServerMetadata;
  scopes: string[];
}

/**
 * The MCP authorization spec's discovery, from the upstream's 401: the
 * protected resource metadata (RFC 9728; the challenge's `resource_metadata`,
 * else the path-inserted and then the root well-known URL), then the first
 * authorization server's metadata (RFC 8414, else OpenID Connect discovery).
 * Everything is checked before it is kept (see validateServerMetadata), and
 * every URL fetched passes the upstream URL policy.
 */
export async function discoverOAuthServer(
  serviceUrl: string,
  challenge: string | null,
  allowList: ReadonlySet<string>,
): Promise<DiscoveredServer> {
  const params = challenge && /^\s*bearer\b/i.test(challenge) ? bearerParams(challenge) : null;
  if (!params) throw new OAuthDiscoveryFailed("The upstream answered 401 without a Bearer challenge, so it offers no OAuth to follow");
  const service = new URL(serviceUrl);
  const options = oauthRequestOptions<"GET", undefined>(allowList);
  const fetchGuarded = guardedOAuthFetch(allowList);

  // The challenge's resource_metadata, else RFC 9728's path-inserted URL, then the origin's root one.
  const explicit = params.resourceMetadataUrl;
  const attempts: (() => Promise<Response>)[] = explicit
    ? [() => fetchGuarded(explicit.href, { method: "GET", headers: { accept: "application/json" } })]
    : [() => resourceDiscoveryRequest(service, options), () => resourceDiscoveryRequest(new URL(service.origin), options)];
  let response: Response | null = null;
  for (const attempt of attempts) {
    const answer = await attempt();
    if (answer.status === 200) {
      response = answer;
      break;
    }
    await answer.body?.cancel();
  }
  if (!response) throw new OAuthDiscoveryFailed("The upstream publishes no protected resource metadata (RFC 9728)");

  const resource = await resourceOf(response.clone());
  // Compared as a parsed URL, which drops tabs and keeps a user name on both sides: its text can be far longer than
  // the service's URL, and it goes into every authorization link as it was sent.
  if (resource && resource.length > OAUTH_LINK_BOUNDS.resourceChars) {
    throw new OAuthMetadataInvalid(
      "resource",
      `The protected resource metadata's resource is longer than ${OAUTH_LINK_BOUNDS.resourceChars} characters`,
    );
  }
  if (!resource || !resourceCovers(resource, service)) {
    // The service's URL without its query, which is as secret as its headers (services.store.ts): never in an answer.
    throw new OAuthMetadataInvalid(
      "resource",
      `The protected resource metadata names resource ${resource ?? "(none)"}, which is not ${service.origin}${service.pathname}`,
    );
  }
  const resourceMetadata = await processResourceDiscoveryResponse(new URL(resource), response).catch(asMetadataError("resource"));
  const issuer = resourceMetadata.authorization_servers?.[0];
  if (!issuer) throw new OAuthDiscoveryFailed("The protected resource metadata names no authorization server");
  const issuerVerdict = checkUpstreamUrl(issuer, allowList);
  if (!issuerVerdict.ok) {
    throw new UpstreamFailure("url_not_allowed", `The authorization server's URL is refused (${issuer}): ${issuerVerdict.reason}`);
  }

  const metadata = await authorizationServerMetadata(issuerVerdict.url, options);
  const validated = validateServerMetadata(metadata, allowList);
  const scopeText = params.scope ?? resourceMetadata.scopes_supported?.join(" ") ?? "";
  if (scopeText.length > OAUTH_LINK_BOUNDS.scopeChars) {
    const field = params.scope !== undefined ? "scope" : "scopes_supported";
    throw new OAuthMetadataInvalid(field, `The upstream's ${field} is longer than ${OAUTH_LINK_BOUNDS.scopeChars} characters`);
  }
  const scopes = scopeText.split(" ").filter(Boolean);
  return { resource, metadata: validated, scopes };
}

function bearerParams(challenge: string): { resourceMetadataUrl: URL | undefined; scope: string | undefined } | null {
  try {
    const parsed = extractWWWAuthenticateParams(new Response(null, { status: 401, headers: { "www-authenticate": challenge } }));
    return { resourceMetadataUrl: parsed.resourceMetadataUrl, scope: parsed.scope };
  } catch {
    throw new OAuthDiscoveryFailed("The upstream's WWW-Authenticate challenge names a resource_metadata that is not a URL");
  }
}

async function resourceOf(response: Response): Promise<string | null> {
  const body = (await response.json().catch(() => null)) as { resource?: unknown } | null;
  return typeof body?.resource === "string" ? body.resource : null;
}

/** RFC 9728 §3.3 and the MCP spec: the metadata's resource is the service's URL, or a parent of it on the same origin. */
export function resourceCovers(resource: string, service: URL): boolean {
  let url: URL;
  try {
    url = new URL(resource);
  } catch {
    return false;
  }
  if (url.origin !== service.origin || url.search || url.hash) return false;
  const base = url.pathname.endsWith("/") ? url.pathname : `${url.pathname}/`;
  return url.pathname === service.pathname || `${service.pathname}/`.startsWith(base);
}

async function authorizationServerMetadata(issuer: URL, options: HttpRequestOptions<"GET">): Promise<AuthorizationServer> {
  for (const algorithm of ["oauth2", "oidc"] as const) {
    const response = await discoveryRequest(issuer, { ...options, algorithm });
    if (response.status === 404) {
      await response.body?.cancel();
      continue;
    }
    // Checks RFC 8414 §3.3: the metadata's issuer is exactly the authorization server it was fetched for.
    return processDiscoveryResponse(issuer, response).catch(asMetadataError("issuer"));
  }
  throw new OAuthDiscoveryFailed(`${issuer.href} publishes no authorization server metadata (RFC 8414 or OpenID Connect discovery)`);
}

/** A library refusal of a metadata document (issuer mismatch, not JSON, wrong status) in the gateway's terms. */
function asMetadataError(field: string) {
  return (error: unknown): never => {
    if (error instanceof UpstreamFailure) throw error;
    if (error instanceof OperationProcessingError || error instanceof TypeError) {
      const attribute = (error.cause as { attribute?: unknown } | undefined)?.attribute;
      throw new OAuthMetadataInvalid(typeof attribute === "string" ? attribute : field, error.message);
    }
    throw error;
  };
}

const ENDPOINTS = ["authorization_endpoint", "token_endpoint", "revocation_endpoint", "registration_endpoint"] as const;

/**
 * What the gateway takes from an authorization server into every authorization link (and each open flow's row, of
 * which a workspace holds up to 500): the endpoint, the resource, the scopes and the client id. Its metadata is bounded only as a
 * whole (256 KiB), so without these one link could be that large. Real ones are far smaller.
 */
export const OAUTH_LINK_BOUNDS = { endpointChars: 2048, resourceChars: 2048, scopeChars: MAX_SCOPE_CHARS, clientIdChars: 2048 } as const;

/**
 * An authorization server that lies in its metadata is refused: every endpoint
 * the gateway or the admin's browser would use must be a URL the upstream URL
 * policy allows (https, public), on the issuer's own origin (a token endpoint
 * elsewhere would receive codes and refresh tokens meant for this server), and
 * PKCE with S256 must be on offer (the MCP spec refuses a server without it).
 */
export function validateServerMetadata(metadata: AuthorizationServer, allowList: ReadonlySet<string>): ServerMetadata {
  const issuer = new URL(metadata.issuer);
  for (const field of ENDPOINTS) {
    const value = metadata[field];
    if (value === undefined) {
      if (field === "authorization_endpoint" || field === "token_endpoint") {
        throw new OAuthMetadataInvalid(field, `The authorization server's metadata has no ${field}`);
      }
      continue;
    }
    if (value.length > OAUTH_LINK_BOUNDS.endpointChars) {
      throw new OAuthMetadataInvalid(
        field,
        `The authorization server's ${field} is longer than ${OAUTH_LINK_BOUNDS.endpointChars} characters`,
      );
    }
    const verdict = checkUpstreamUrl(value, allowList);
    if (!verdict.ok) throw new OAuthMetadataInvalid(field, `The authorization server's ${field} is refused: ${verdict.reason}`);
    if (verdict.url.origin !== issuer.origin) {
      throw new OAuthMetadataInvalid(
        field,
        `The authorization server's ${field} is on ${verdict.url.origin}, not on its issuer's origin ${issuer.origin}`,
      );
    }
  }
  if (!metadata.code_challenge_methods_supported?.includes("S256")) {
    throw new OAuthMetadataInvalid("code_challenge_methods_supported", "The authorization server does not offer PKCE with S256");
  }
  const flag = (name: string) => (metadata[name] === true ? true : undefined);
  return {
    issuer: metadata.issuer,
    authorization_endpoint: metadata.authorization_endpoint!,
    token_endpoint: metadata.token_endpoint!,
    ...(metadata.revocation_endpoint ? { revocation_endpoint: metadata.revocation_endpoint } : {}),
    ...(metadata.registration_endpoint ? { registration_endpoint: metadata.registration_endpoint } : {}),
    ...(flag("authorization_response_iss_parameter_supported") ? { authorization_response_iss_parameter_supported: true } : {}),
    ...(metadata.token_endpoint_auth_methods_supported
      ? { token_endpoint_auth_methods_supported: metadata.token_endpoint_auth_methods_supported }
      : {}),
    ...(flag("client_id_metadata_document_supported") ? { client_id_metadata_document_supported: true } : {}),
  };
}

/** A client id (and secret) an admin registered with the authorization server by hand. */
export interface PreRegisteredClient {
  clientId: string;
  clientSecret?: string;
}

export interface RegisteredClient {
  registration: ClientRegistration;
  clientId: string;
  clientSecret: string | null;
  tokenEndpointAuthMethod: TokenEndpointAuthMethod;
}

/** How a client with a secret authenticates: Basic when offered (RFC 6749's default), else the form body. */
function secretMethod(metadata: ServerMetadata): TokenEndpointAuthMethod {
  const offered = metadata.token_endpoint_auth_methods_supported ?? ["client_secret_basic"];
  return offered.includes("client_secret_basic") ? "client_secret_basic" : "client_secret_post";
}

/**
 * The gateway's client at the authorization server, in the MCP spec's order: a
 * client the admin pre-registered; else the gateway's client ID metadata
 * document, where the server accepts one and the gateway has a public https
 * origin; else dynamic registration (RFC 7591) as a confidential client.
 */
export async function registerClient(
  server: DiscoveredServer,
  preRegistered: PreRegisteredClient | undefined,
  gateway: { redirectUri: string; clientMetadataUrl: string },
  allowList: ReadonlySet<string>,
): Promise<RegisteredClient> {
  const { metadata } = server;
  if (preRegistered) {
    const secret = preRegistered.clientSecret ?? null;
    return {
      registration: "pre_registered",
      clientId: preRegistered.clientId,
      clientSecret: secret,
      tokenEndpointAuthMethod: secret ? secretMethod(metadata) : "none",
    };
  }
  if (metadata.client_id_metadata_document_supported && gateway.clientMetadataUrl.startsWith("https://")) {
    return {
      registration: "client_metadata_document",
      clientId: gateway.clientMetadataUrl,
      clientSecret: null,
      tokenEndpointAuthMethod: "none",
    };
  }
  if (!metadata.registration_endpoint) {
    throw new OAuthClientRequired(
      "The authorization server offers neither dynamic client registration nor client ID metadata documents: register a client with it and pass oauth.clientId (and oauth.clientSecret)",
    );
  }
  const method = secretMethod(metadata);
  const as = metadata as AuthorizationServer;
  try {
    const response = await dynamicClientRegistrationRequest(
      as,
      {
        client_name: "Rayrun MCP gateway",
        redirect_uris: [gateway.redirectUri],
        grant_types: ["authorization_code", "refresh_token"],
        response_types: ["code"],
        token_endpoint_auth_method: method,
        ...(server.scopes.length ? { scope: server.scopes.join(" ") } : {}),
      },
      oauthRequestOptions(allowList),
    );
    const client = await processDynamicClientRegistrationResponse(response);
    if (client.client_id.length > OAUTH_LINK_BOUNDS.clientIdChars) {
      throw new UpstreamFailure(
        "upstream_protocol_error",
        `Dynamic client registration answered a client_id longer than ${OAUTH_LINK_BOUNDS.clientIdChars} characters`,
      );
    }
    const secret = typeof client.client_secret === "string" ? client.client_secret : null;
    if (secret !== null && secret.length > MAX_TOKEN_CHARS) {
      throw new UpstreamFailure(
        "upstream_protocol_error",
        `Dynamic client registration answered a client_secret longer than ${MAX_TOKEN_CHARS} characters`,
      );
    }
    const granted = client.token_endpoint_auth_method;
    const tokenEndpointAuthMethod: TokenEndpointAuthMethod = !secret
      ? "none"
      : granted === "client_secret_post" || granted === "client_secret_basic"
        ? granted
        : method;
    return { registration: "dynamic", clientId: client.client_id, clientSecret: secret, tokenEndpointAuthMethod };
  } catch (error) {
    if (error instanceof UpstreamFailure) throw error;
    if (error instanceof ResponseBodyError) {
      throw new UpstreamFailure(
        "upstream_protocol_error",
        `Dynamic client registration was refused: ${error.error}${error.error_description ? ` (${error.error_description})` : ""}`,
      );
    }
    if (error instanceof OperationProcessingError) {
      throw new UpstreamFailure("upstream_protocol_error", `Dynamic client registration answered badly: ${error.message}`);
    }
    throw error;
  }
}
