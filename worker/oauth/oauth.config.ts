import { OAuthAuthorizationServer } from "@cloudflare/workers-oauth-provider";

/** The one scope OAuth grants: calling tools on /mcp under the chosen access profile. */
export const OAUTH_SCOPE = "tools:call";
export const AUTHORIZE_PATH = "/oauth/authorize";
export const TOKEN_PATH = "/oauth/token";
export const REGISTER_PATH = "/oauth/register";
/** Access tokens are short; clients refresh them with the refresh token (rotated on use). */
export const ACCESS_TOKEN_TTL_SECONDS = 60 * 60;

/** What a grant carries to /mcp: the workspace and access profile the admin chose at consent. */
export interface GrantProps {
  workspaceId: string;
  profileId: string;
  /** The admin who consented (grants from before it was recorded have none): the user behind the client's calls. */
  userId?: string;
  /**
   * Random per consent, so /mcp can tell one grant from another (the library does not hand the grant id to a
   * token's validator). Absent on grants made before it existed; those are told apart by workspace and client.
   */
  consentId?: string;
}

/** PUBLIC_URL as a bare origin, or null when unset or not a URL. */
export function publicUrl(env: Env): string | null {
  if (!env.PUBLIC_URL) return null;
  try {
    return new URL(env.PUBLIC_URL).origin;
  } catch {
    return null;
  }
}

/** The protected resource clients name in `resource` and tokens are bound to. */
export const mcpResource = (origin: string) => `${origin}/mcp`;
/** RFC 9728 §3.1: the metadata URL for a resource with a path inserts the path after the well-known prefix. */
export const resourceMetadataUrl = (origin: string) => `${origin}/.well-known/oauth-protected-resource/mcp`;

const servers = new Map<string, OAuthAuthorizationServer<Env>>();

/** The authorization server for this deployment's origin, built once per isolate. Null without PUBLIC_URL. */
export function authorizationServer(env: Env): OAuthAuthorizationServer<Env> | null {
  const origin = publicUrl(env);
  if (!origin) return null;
  let server = servers.get(origin);
  if (!server) {
    server = new OAuthAuthorizationServer<Env>({
      issuer: origin,
      resources: [mcpResource(origin)],
      authorizeEndpoint: AUTHORIZE_PATH,
      tokenEndpoint: TOKEN_PATH,
      clientRegistrationEndpoint: REGISTER_PATH,
      scopesSupported: [OAUTH_SCOPE],
      accessTokenTTL: ACCESS_TOKEN_TTL_SECONDS,
    });
    servers.set(origin, server);
  }
  return server;
}

/** RFC 9728 Protected Resource Metadata for /mcp. */
export function protectedResourceMetadata(origin: string) {
  return {
    resource: mcpResource(origin),
    authorization_servers: [origin],
    scopes_supported: [OAUTH_SCOPE],
    bearer_methods_supported: ["header"],
    resource_name: "Rayrun MCP gateway",
  };
}
