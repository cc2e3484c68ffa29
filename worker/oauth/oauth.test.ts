import { env, SELF } from "cloudflare:test";
import { describe, it, vi } from "vitest";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { UnauthorizedError, type OAuthClientProvider } from "@modelcontextprotocol/sdk/client/auth.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { OAuthClientInformationMixed, OAuthClientMetadata, OAuthTokens } from "@modelcontextprotocol/sdk/shared/auth.js";
import { CfWorkerJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/cfworker-provider.js";
import { api, connectMcp, demoGateway, devLogin, eventually, ORIGIN } from "../../test/helpers.ts";
import {
  authorizedCode,
  consent,
  exchange,
  MCP_URL,
  pkcePair,
  REDIRECT_URI,
  registerClient,
  signInAdmin,
  tokenRequest,
} from "./oauth.fixtures.ts";

const selfFetch = (input: string | URL | Request, init?: RequestInit) => SELF.fetch(input instanceof Request ? input : String(input), init);

/** A gateway whose workspace has a browser admin signed in through the dev login. */
async function adminGateway() {
  const gateway = await demoGateway();
  const email = `admin-${gateway.tag}@example.com`;
  return { ...gateway, email, devCookie: await signInAdmin(gateway, email) };
}

/** The MCP SDK's own OAuth client side: it discovers, registers, builds the PKCE request and exchanges the code. */
class MemoryOAuthProvider implements OAuthClientProvider {
  client?: OAuthClientInformationMixed;
  saved?: OAuthTokens;
  verifier = "";
  authorizationUrl?: URL;
  readonly redirectUrl = REDIRECT_URI;
  readonly clientMetadata: OAuthClientMetadata = {
    client_name: "SDK connector",
    redirect_uris: [REDIRECT_URI],
    grant_types: ["authorization_code", "refresh_token"],
    response_types: ["code"],
    token_endpoint_auth_method: "none",
  };
  clientInformation = () => this.client;
  saveClientInformation = (client: OAuthClientInformationMixed) => void (this.client = client);
  tokens = () => this.saved;
  saveTokens = (tokens: OAuthTokens) => void (this.saved = tokens);
  redirectToAuthorization = (url: URL) => void (this.authorizationUrl = url);
  saveCodeVerifier = (verifier: string) => void (this.verifier = verifier);
  codeVerifier = () => this.verifier;
}

const sdkTransport = (provider: OAuthClientProvider) =>
  new StreamableHTTPClientTransport(new URL(MCP_URL), { authProvider: provider, fetch: selfFetch });
const newClient = () =>
  new Client({ name: "oauth-test-agent", version: "1.0.0" }, { jsonSchemaValidator: new CfWorkerJsonSchemaValidator() });

describe("OAuth discovery", () => {
  it("publishes Protected Resource Metadata at both well-known paths", async ({ expect }) => {
    const expected = {
      resource: "https://rayrun.test/mcp",
      authorization_servers: ["https://rayrun.test"],
      scopes_supported: ["tools:call"],
      bearer_methods_supported: ["header"],
      resource_name: "Rayrun MCP gateway",
    };
    for (const path of ["/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource"]) {
      const res = await api(path);
      expect(res.status).toBe(200);
      expect(res.body).toEqual(expected);
    }
    const metadata = await api("/.well-known/oauth-authorization-server");
    expect(metadata.body).toMatchObject({
      issuer: "https://rayrun.test",
      authorization_endpoint: "https://rayrun.test/oauth/authorize",
      token_endpoint: "https://rayrun.test/oauth/token",
      registration_endpoint: "https://rayrun.test/oauth/register",
      code_challenge_methods_supported: ["S256"],
      scopes_supported: ["tools:call"],
    });
  });

  it("answers /mcp without credentials with 401 and a challenge naming the metadata", async ({ expect }) => {
    const body = { jsonrpc: "2.0", id: 1, method: "tools/list" };
    const headers = { accept: "application/json, text/event-stream" };
    const anonymous = await api("/mcp", { body, headers });
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers.get("www-authenticate")).toBe(
      'Bearer resource_metadata="https://rayrun.test/.well-known/oauth-protected-resource/mcp", scope="tools:call"',
    );
    const bogus = await api("/mcp", { body, headers, key: "not-a-token" });
    expect(bogus.status).toBe(401);
    expect(bogus.body.error).toEqual({ code: -32600, message: "The access token is invalid, expired or revoked" });
    expect(bogus.headers.get("www-authenticate")).toBe(
      'Bearer error="invalid_token", resource_metadata="https://rayrun.test/.well-known/oauth-protected-resource/mcp", scope="tools:call"',
    );
  });
});

describe("OAuth authorization server", () => {
  it("takes the SDK client from a 401 through registration, PKCE and admin consent to a tool call", async ({ expect }) => {
    const gateway = await adminGateway();
    const provider = new MemoryOAuthProvider();
    await expect(newClient().connect(sdkTransport(provider))).rejects.toBeInstanceOf(UnauthorizedError);
    const authorizationUrl = provider.authorizationUrl!;
    expect(authorizationUrl.searchParams.get("code_challenge_method")).toBe("S256");
    expect(authorizationUrl.searchParams.get("resource")).toBe(MCP_URL);

    const redirect = await consent(authorizationUrl.toString(), gateway.devCookie, `${gateway.ws} ${gateway.defaultProfileId}`);
    expect(redirect.origin + redirect.pathname).toBe(REDIRECT_URI);
    const transport = sdkTransport(provider);
    await transport.finishAuth(redirect.searchParams.get("code")!);
    expect(provider.saved?.access_token).toEqual(expect.any(String));
    expect(provider.saved?.scope).toBe("tools:call");

    const client = newClient();
    await client.connect(sdkTransport(provider));
    const result = await client.callTool({ name: "demo__search_release_notes", arguments: { query: "sso" } });
    expect(result.isError).toBeFalsy();
    expect(result.structuredContent).toEqual({ items: expect.any(Array) });

    const grants = await api(`/v1/workspaces/${gateway.ws}/oauth/grants`, { key: gateway.adminKey });
    expect(grants.status).toBe(200);
    expect(grants.body.grants).toEqual([
      {
        id: expect.any(String),
        clientId: provider.client!.client_id,
        clientName: "SDK connector",
        profileId: gateway.defaultProfileId,
        scopes: ["tools:call"],
        approvedBy: gateway.email,
        createdAt: expect.any(String),
        expiresAt: expect.any(String),
      },
    ]);
    expect(JSON.stringify(grants.body)).not.toContain(provider.saved!.access_token);
  });

  it("binds the token to the chosen profile: a profile that blocks the tool cannot call it", async ({ expect }) => {
    const gateway = await adminGateway();
    const strict = await api(`/v1/workspaces/${gateway.ws}/profiles`, {
      key: gateway.adminKey,
      body: { name: "strict", defaultMode: "block" },
    });
    expect(strict.status).toBe(201);
    const { token } = await exchange(gateway.devCookie, `${gateway.ws} ${strict.body.id}`);
    const client = await connectMcp(token);
    expect((await client.listTools()).tools).toEqual([]);
    await expect(client.callTool({ name: "demo__search_release_notes", arguments: { query: "sso" } })).rejects.toMatchObject({
      code: -32602,
      message: expect.stringContaining("Unknown tool: demo__search_release_notes"),
    });
    const open = await exchange(gateway.devCookie, `${gateway.ws} ${gateway.defaultProfileId}`);
    expect((await (await connectMcp(open.token)).listTools()).tools).toHaveLength(4);
  });

  it("stops a revoked grant's token with 401", async ({ expect }) => {
    const gateway = await adminGateway();
    const { token, clientId } = await exchange(gateway.devCookie, `${gateway.ws} ${gateway.defaultProfileId}`);
    await (await connectMcp(token)).listTools();
    const grants = await api(`/v1/workspaces/${gateway.ws}/oauth/grants`, { key: gateway.adminKey });
    const grant = grants.body.grants.find((candidate: { clientId: string }) => candidate.clientId === clientId);
    const revoked = await api(`/v1/workspaces/${gateway.ws}/oauth/grants/${grant.id}`, { method: "DELETE", key: gateway.adminKey });
    expect(revoked.status).toBe(200);
    expect(revoked.body.id).toBe(grant.id);
    const after = await api("/mcp", {
      key: token,
      body: { jsonrpc: "2.0", id: 1, method: "tools/list" },
      headers: { accept: "application/json, text/event-stream" },
    });
    expect(after.status).toBe(401);
    expect(after.headers.get("www-authenticate")).toContain('error="invalid_token"');
    expect((await api(`/v1/workspaces/${gateway.ws}/oauth/grants`, { key: gateway.adminKey })).body.grants).toEqual([]);
    const again = await api(`/v1/workspaces/${gateway.ws}/oauth/grants/${grant.id}`, { method: "DELETE", key: gateway.adminKey });
    expect(again.status).toBe(404);
    expect(again.body.error).toEqual({ code: "not_found", message: "Grant not found" });
  });

  it("refuses a code exchanged with the wrong PKCE verifier", async ({ expect }) => {
    const gateway = await adminGateway();
    const { clientId, code } = await authorizedCode(gateway.devCookie, `${gateway.ws} ${gateway.defaultProfileId}`);
    const wrong = await tokenRequest({
      grant_type: "authorization_code",
      code,
      redirect_uri: REDIRECT_URI,
      client_id: clientId,
      code_verifier: (await pkcePair()).verifier,
    });
    expect(wrong.status).toBe(400);
    expect(await wrong.json()).toMatchObject({ error: "invalid_grant" });
  });

  it("shows consent only to a signed-in admin, and only for their workspaces", async ({ expect }) => {
    const gateway = await adminGateway();
    const other = await adminGateway();
    const { challenge } = await pkcePair();
    const clientId = await registerClient();
    const url = `${ORIGIN}/oauth/authorize?${new URLSearchParams({
      response_type: "code",
      client_id: clientId,
      redirect_uri: REDIRECT_URI,
      code_challenge: challenge,
      code_challenge_method: "S256",
    })}`;
    const anonymous = await SELF.fetch(url);
    expect(anonymous.status).toBe(401);
    expect(await anonymous.text()).toContain("Sign in to Rayrun first");

    const viewerEmail = `viewer-${gateway.tag}@example.com`;
    await api(`/v1/workspaces/${gateway.ws}/members`, {
      method: "PUT",
      key: gateway.adminKey,
      body: { email: viewerEmail, role: "viewer" },
    });
    const viewerCookie = await devLogin(viewerEmail);
    const viewer = await SELF.fetch(url, { headers: { cookie: viewerCookie } });
    expect(viewer.status).toBe(403);

    const page = await SELF.fetch(url, { headers: { cookie: gateway.devCookie } });
    const html = await page.text();
    expect(html).toContain(`value="${gateway.ws} ${gateway.defaultProfileId}"`);
    expect(html).not.toContain(other.ws);
    await expect(consent(url, gateway.devCookie, `${other.ws} ${other.defaultProfileId}`)).rejects.toThrow("consent answer: 403");

    const denied = await consent(url, gateway.devCookie, "", "deny");
    expect(denied.searchParams.get("error")).toBe("access_denied");
  });

  it("keeps tokens and client secrets out of KV in the clear", async ({ expect }) => {
    const gateway = await adminGateway();
    const { token } = await exchange(gateway.devCookie, `${gateway.ws} ${gateway.defaultProfileId}`);
    const secretPart = token.split(":").at(-1)!;
    const { keys } = await env.OAUTH_KV.list();
    expect(keys.length).toBeGreaterThan(0);
    for (const { name } of keys) {
      expect(name).not.toContain(secretPart);
      expect((await env.OAUTH_KV.get(name)) ?? "").not.toContain(secretPart);
    }
  });

  it("refuses an access token past its 1 h lifetime with the invalid_token challenge; the refresh token gets a new one", async ({
    expect,
  }) => {
    const gateway = await adminGateway();
    const { token, refreshToken, clientId } = await exchange(gateway.devCookie, `${gateway.ws} ${gateway.defaultProfileId}`);
    const listTools = (bearer: string) =>
      api("/mcp", {
        key: bearer,
        body: { jsonrpc: "2.0", id: 1, method: "tools/list" },
        headers: { accept: "application/json, text/event-stream" },
      });
    expect((await listTools(token)).status).toBe(200);
    // Only Date is faked: the provider reads the clock for expiry, the test's own timers keep running.
    vi.useFakeTimers({ toFake: ["Date"] });
    try {
      vi.setSystemTime(Date.now() + 3_601_000);
      const expired = await listTools(token);
      expect(expired.status).toBe(401);
      expect(expired.body.error.message).toBe("The access token is invalid, expired or revoked");
      expect(expired.headers.get("www-authenticate")).toContain('error="invalid_token"');

      const refreshed = await tokenRequest({ grant_type: "refresh_token", refresh_token: refreshToken, client_id: clientId });
      expect(refreshed.status).toBe(200);
      const body = (await refreshed.json()) as { access_token: string; refresh_token: string; expires_in: number };
      expect(body.expires_in).toBe(3600);
      expect(body.refresh_token).not.toBe(refreshToken);
      const again = await listTools(body.access_token);
      expect(again.status).toBe(200);
      expect(again.body.result.tools).toHaveLength(4);
    } finally {
      vi.useRealTimers();
    }
  });

  it("records the OAuth client as the actor of its calls and reads: oauth:<client_id>", async ({ expect }) => {
    const gateway = await adminGateway();
    const { token, clientId } = await exchange(gateway.devCookie, `${gateway.ws} ${gateway.defaultProfileId}`);
    const client = await connectMcp(token);
    // Arguments that fail the input schema leave a pre-dispatch row without any hook.
    expect((await client.callTool({ name: "demo__search_release_notes", arguments: { query: 5 } })).isError).toBe(true);
    await client.readResource({ uri: "rayrun://demo/notes://release/2.3.1" });
    const toolUid = gateway.toolUid("search_release_notes");
    const read = (path: string) =>
      eventually(
        async () => (await api(path, { key: gateway.adminKey })).body.logs as { actor: string }[],
        (rows) => rows.length === 1,
      );
    const callLogs = await read(`/v1/workspaces/${gateway.ws}/tools/${toolUid}/hook/logs`);
    expect(callLogs[0]!.actor).toBe(`oauth:${clientId}`);
    const contentLogs = await read(`/v1/workspaces/${gateway.ws}/services/${gateway.service.id}/content-logs`);
    expect(contentLogs[0]!.actor).toBe(`oauth:${clientId}`);
  });
});
