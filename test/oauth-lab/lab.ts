// A real OAuth-protected MCP upstream for tests: an authorization server built
// with the MCP SDK's own auth router (discovery, dynamic registration, PKCE,
// token, refresh with rotation, RFC 7009 revocation) in front of an MCP SDK
// server (a tool, a resource and a prompt, each saying whose token it saw) whose
// /mcp needs its bearer tokens, bound to its resource (RFC 8707), or a personal
// access token minted by the control route, sent as a static header.
// Tests ask the lab's control server for a fresh one per test (`POST /labs`),
// each on its own loopback port, so parallel tests never see each other's
// clients, tokens or counts. Options make it lie or misbehave on purpose.
import { createServer, type Server as HttpServer } from "node:http";
import type { AddressInfo } from "node:net";
import express, { type Request, type Response } from "express";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { createOAuthMetadata, mcpAuthRouter } from "@modelcontextprotocol/sdk/server/auth/router.js";
import { requireBearerAuth } from "@modelcontextprotocol/sdk/server/auth/middleware/bearerAuth.js";
import { InvalidGrantError, InvalidTokenError } from "@modelcontextprotocol/sdk/server/auth/errors.js";
import type { OAuthServerProvider, AuthorizationParams } from "@modelcontextprotocol/sdk/server/auth/provider.js";
import type { OAuthRegisteredClientsStore } from "@modelcontextprotocol/sdk/server/auth/clients.js";
import type { AuthInfo } from "@modelcontextprotocol/sdk/server/auth/types.js";
import type { OAuthClientInformationFull, OAuthTokens } from "@modelcontextprotocol/sdk/shared/auth.js";

export interface LabOptions {
  /** Seconds the first access token of a grant lives (default 3600). */
  accessTokenTtl?: number;
  /** Seconds a refreshed access token lives (default: accessTokenTtl). */
  refreshedAccessTokenTtl?: number;
  /** A refresh waits this long before answering, so racing refreshes overlap. */
  refreshDelayMs?: number;
  /** An authorization code exchange waits this long before answering, so a change can land while a callback finishes. */
  codeDelayMs?: number;
  /** How clients register: RFC 7591 (default), not at all, or client ID metadata documents. */
  registration?: "dynamic" | "none" | "cimd";
  /** The server's metadata lies: another issuer, a token endpoint elsewhere, another resource, no S256, or private URLs. */
  lie?:
    | "issuer_mismatch"
    | "foreign_endpoint"
    | "resource_mismatch"
    | "no_s256"
    | "metadata_internal"
    | "as_internal"
    // Oversized values that would end up in every authorization link: an endpoint, the scopes, a registered client id.
    | "long_endpoint"
    | "long_scopes"
    | "long_client_id"
    // The resource, padded with a user name the URL comparison keeps on both sides (it is the service's own origin).
    | "long_resource";
  /** The token endpoint never answers a code exchange, answers it with 5 MiB, or with a 200 KiB access token. */
  token?: "hang" | "huge" | "oversized";
  /** false: the metadata offers no RFC 7009 revocation, so a token the gateway deletes still works upstream. */
  revocation?: false;
  /** true: a client and account authorizing again get the refresh token they already hold, as some servers do. */
  sameRefreshToken?: true;
}

export interface LabState {
  authorizeRequests: { clientId: string; resource: string | null; codeChallengeMethod: string | null; scope: string | null }[];
  tokenRequests: { grantType: string; resource: string | null; clientId: string }[];
  revocations: { hint: string | null; known: boolean }[];
  /** Every Authorization header /mcp received. */
  mcpAuthorizations: string[];
  /** Whose token each tool call carried. */
  toolCallsBy: string[];
  /** Whose token each resources/read and prompts/get carried. */
  contentReadsBy: string[];
  registeredClients: number;
}

interface CodeGrant {
  clientId: string;
  user: string;
  challenge: string;
  redirectUri: string;
  resource: string | null;
  scopes: string[];
}

interface TokenGrant {
  clientId: string;
  user: string;
  scopes: string[];
  resource: string | null;
}

const random = () => crypto.randomUUID().replaceAll("-", "");

async function startOne(options: LabOptions): Promise<{ origin: string; close(): Promise<void> }> {
  const app = express();
  const server: HttpServer = createServer(app);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const mcpUrl = `${origin}/mcp`;
  const state: LabState = {
    authorizeRequests: [],
    tokenRequests: [],
    revocations: [],
    mcpAuthorizations: [],
    toolCallsBy: [],
    contentReadsBy: [],
    registeredClients: 0,
  };
  const clients = new Map<string, OAuthClientInformationFull>();
  const codes = new Map<string, CodeGrant>();
  const accessTokens = new Map<string, TokenGrant & { expiresAt: number }>();
  const refreshTokens = new Map<string, TokenGrant>();
  const ttl = options.accessTokenTtl ?? 3600;

  const clientsStore: OAuthRegisteredClientsStore = {
    getClient: (id) => clients.get(id),
    ...(options.registration === "none" || options.registration === "cimd"
      ? {}
      : {
          registerClient: (client: OAuthClientInformationFull) => {
            const registered = options.lie === "long_client_id" ? { ...client, client_id: `c${"x".repeat(4096)}` } : client;
            clients.set(registered.client_id, registered);
            state.registeredClients++;
            return registered;
          },
        }),
  };

  const issue = (grant: TokenGrant, seconds: number, held?: string): OAuthTokens => {
    const access = `at_${random()}`;
    const refresh = held ?? `rt_${random()}`;
    accessTokens.set(access, { ...grant, expiresAt: Math.floor(Date.now() / 1000) + seconds });
    refreshTokens.set(refresh, grant);
    return { access_token: access, token_type: "Bearer", expires_in: seconds, refresh_token: refresh, scope: grant.scopes.join(" ") };
  };

  const provider: OAuthServerProvider = {
    clientsStore,
    // The consent page: the test (or the browser) picks the upstream user and approves or denies.
    async authorize(client: OAuthClientInformationFull, params: AuthorizationParams, res: Response) {
      const hidden = (name: string, value: string | undefined) =>
        value === undefined ? "" : `<input type="hidden" name="${name}" value="${value.replace(/"/g, "&quot;")}">`;
      res.type("html").send(`<!doctype html><title>Lab consent</title><h1>Authorize ${client.client_name ?? client.client_id}</h1>
<form method="post" action="/consent">
${hidden("client_id", client.client_id)}${hidden("redirect_uri", params.redirectUri)}${hidden("state", params.state)}
${hidden("code_challenge", params.codeChallenge)}${hidden("resource", params.resource?.href)}${hidden("scope", params.scopes?.join(" "))}
<label>Upstream user <input name="user" value="alice"></label>
<button name="decision" value="approve">Approve</button> <button name="decision" value="deny">Deny</button>
</form>`);
    },
    async challengeForAuthorizationCode(_client, code) {
      const grant = codes.get(code);
      if (!grant) throw new InvalidGrantError("unknown code");
      return grant.challenge;
    },
    async exchangeAuthorizationCode(client, code, _verifier, redirectUri, resource) {
      const grant = codes.get(code);
      codes.delete(code);
      if (!grant || grant.clientId !== client.client_id || grant.redirectUri !== redirectUri) throw new InvalidGrantError("bad code");
      state.tokenRequests.push({ grantType: "authorization_code", resource: resource?.href ?? null, clientId: client.client_id });
      if (options.codeDelayMs) await new Promise((resolve) => setTimeout(resolve, options.codeDelayMs));
      const held = options.sameRefreshToken
        ? [...refreshTokens].find(([, issued]) => issued.clientId === client.client_id && issued.user === grant.user)?.[0]
        : undefined;
      return issue(
        { clientId: client.client_id, user: grant.user, scopes: grant.scopes, resource: resource?.href ?? grant.resource },
        ttl,
        held,
      );
    },
    async exchangeRefreshToken(client, refreshToken, _scopes, resource) {
      state.tokenRequests.push({ grantType: "refresh_token", resource: resource?.href ?? null, clientId: client.client_id });
      if (options.refreshDelayMs) await new Promise((resolve) => setTimeout(resolve, options.refreshDelayMs));
      const grant = refreshTokens.get(refreshToken);
      // Rotation: a refresh token works once, so a second refresh racing the first would fail.
      refreshTokens.delete(refreshToken);
      if (!grant || grant.clientId !== client.client_id) throw new InvalidGrantError("refresh token revoked or unknown");
      return issue({ ...grant, resource: resource?.href ?? grant.resource }, options.refreshedAccessTokenTtl ?? ttl);
    },
    async verifyAccessToken(token): Promise<AuthInfo> {
      const grant = accessTokens.get(token);
      if (!grant) throw new InvalidTokenError("unknown or revoked token");
      return {
        token,
        clientId: grant.clientId,
        scopes: grant.scopes,
        expiresAt: grant.expiresAt,
        ...(grant.resource ? { resource: new URL(grant.resource) } : {}),
        extra: { user: grant.user },
      };
    },
    async revokeToken(_client, request) {
      const known = accessTokens.delete(request.token) || refreshTokens.delete(request.token);
      state.revocations.push({ hint: request.token_type_hint ?? null, known });
    },
  };

  const issuerUrl = new URL(`${origin}/`);
  const metadata: Record<string, unknown> = { ...createOAuthMetadata({ provider, issuerUrl, scopesSupported: ["mcp:tools"] }) };
  if (options.registration === "cimd") metadata.client_id_metadata_document_supported = true;
  if (options.lie === "issuer_mismatch") metadata.issuer = "http://127.0.0.1:1/";
  if (options.lie === "foreign_endpoint") metadata.token_endpoint = "http://localhost:1/token";
  if (options.lie === "no_s256") metadata.code_challenge_methods_supported = ["plain"];
  if (options.lie === "long_endpoint") metadata.authorization_endpoint = `${origin}/authorize?pad=${"a".repeat(100_000)}`;
  if (options.revocation === false) delete metadata.revocation_endpoint;
  const resourceMetadata = {
    resource:
      options.lie === "resource_mismatch"
        ? `${origin}/other`
        : options.lie === "long_resource"
          ? mcpUrl.replace("://", `://${"u".repeat(100_000)}@`)
          : mcpUrl,
    authorization_servers: [options.lie === "as_internal" ? "https://10.0.0.1/" : `${origin}/`],
    scopes_supported:
      options.lie === "long_scopes" ? Array.from({ length: 2000 }, (_, i) => `scope:${i}:${"s".repeat(40)}`) : ["mcp:tools"],
  };
  const resourceMetadataUrl =
    options.lie === "metadata_internal"
      ? "https://169.254.169.254/latest/meta-data/"
      : `${origin}/.well-known/oauth-protected-resource/mcp`;

  app.get("/.well-known/oauth-authorization-server", (_req, res) => res.json(metadata));
  app.get("/.well-known/oauth-protected-resource/mcp", (_req, res) => res.json(resourceMetadata));
  app.get("/__lab/state", (_req, res) => res.json(state));
  app.post("/__lab/revoke-refresh-tokens", (_req, res) => {
    refreshTokens.clear();
    res.json({ ok: true });
  });
  // A personal access token (what GitHub calls a PAT): no grant, no refresh, sent as a static header.
  app.post("/__lab/personal-token", express.json(), (req: Request, res: Response) => {
    const token = `pat_${random()}`;
    const user = String((req.body as { user?: string }).user ?? "carol");
    accessTokens.set(token, {
      clientId: "personal",
      user,
      scopes: ["mcp:tools"],
      resource: mcpUrl,
      expiresAt: Math.floor(Date.now() / 1000) + 86_400,
    });
    res.json({ token });
  });
  app.post("/__lab/expire-access-tokens", (_req, res) => {
    for (const grant of accessTokens.values()) grant.expiresAt = 0;
    res.json({ ok: true });
  });
  // Stands in for the network fetch an authorization server makes of a client ID metadata document.
  app.post("/__lab/client-documents", express.json(), (req: Request, res: Response) => {
    const document = req.body as OAuthClientInformationFull;
    clients.set(document.client_id, document);
    res.json({ ok: true });
  });
  app.post("/consent", express.urlencoded({ extended: false }), (req: Request, res: Response) => {
    const form = req.body as Record<string, string>;
    const target = new URL(form.redirect_uri!);
    if (form.state) target.searchParams.set("state", form.state);
    if (form.decision !== "approve") {
      target.searchParams.set("error", "access_denied");
      target.searchParams.set("error_description", "The user declined");
      return res.redirect(302, target.href);
    }
    const code = `code_${random()}`;
    codes.set(code, {
      clientId: form.client_id!,
      user: form.user ?? "alice",
      challenge: form.code_challenge!,
      redirectUri: form.redirect_uri!,
      resource: form.resource ?? null,
      scopes: (form.scope ?? "").split(" ").filter(Boolean),
    });
    target.searchParams.set("code", code);
    res.redirect(302, target.href);
  });
  app.get("/authorize", (req, _res, next) => {
    const query = req.query as Record<string, string | undefined>;
    state.authorizeRequests.push({
      clientId: query.client_id ?? "",
      resource: query.resource ?? null,
      codeChallengeMethod: query.code_challenge_method ?? null,
      scope: query.scope ?? null,
    });
    next();
  });
  if (options.token) {
    app.post("/token", express.urlencoded({ extended: false }), (req: Request, res: Response, next) => {
      if ((req.body as Record<string, string>).grant_type !== "authorization_code") return next();
      if (options.token === "huge") return res.json({ access_token: "x".repeat(5 * 1024 * 1024), token_type: "Bearer" });
      // Within the gateway's bound on a whole answer (256 KiB), but no real token is this large.
      if (options.token === "oversized") {
        return res.json({ access_token: "x".repeat(200 * 1024), token_type: "Bearer", expires_in: 3600, refresh_token: "rt_oversized" });
      }
      // "hang": never answer.
    });
  }
  const noRateLimit = { rateLimit: false as const };
  app.use(
    mcpAuthRouter({
      provider,
      issuerUrl,
      resourceServerUrl: new URL(mcpUrl),
      scopesSupported: ["mcp:tools"],
      authorizationOptions: noRateLimit,
      tokenOptions: noRateLimit,
      revocationOptions: noRateLimit,
      clientRegistrationOptions: noRateLimit,
    }),
  );

  app.post(
    "/mcp",
    (req, _res, next) => {
      state.mcpAuthorizations.push(req.headers.authorization ?? "");
      next();
    },
    requireBearerAuth({ verifier: provider, resourceMetadataUrl, expectedResource: new URL(mcpUrl) }),
    express.json(),
    async (req: Request, res: Response) => {
      const mcp = new McpServer({ name: "oauth-lab", version: "1.0.0" });
      mcp.registerTool("whoami", { description: "Which upstream user the token belongs to" }, async (extra) => {
        const user = String(extra.authInfo?.extra?.user ?? "nobody");
        state.toolCallsBy.push(user);
        return { content: [{ type: "text", text: `upstream user: ${user}` }] };
      });
      // Content that says whose token read it, like whoami.
      const userOf = (extra: { authInfo?: AuthInfo }) => String(extra.authInfo?.extra?.user ?? "nobody");
      mcp.registerResource("profile", "lab://profile", { mimeType: "text/plain" }, async (uri, extra) => {
        state.contentReadsBy.push(userOf(extra));
        return { contents: [{ uri: uri.href, mimeType: "text/plain", text: `profile of ${userOf(extra)}` }] };
      });
      mcp.registerPrompt("greet", { description: "Greets the token's user" }, async (extra) => {
        state.contentReadsBy.push(userOf(extra));
        return { messages: [{ role: "user", content: { type: "text", text: `Say hello to ${userOf(extra)}` } }] };
      });
      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
      res.on("close", () => void transport.close());
      await mcp.connect(transport);
      await transport.handleRequest(req, res, req.body);
    },
  );

  return {
    origin,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The control server: `POST /labs` with LabOptions starts a fresh upstream and answers its origin. */
export async function startOAuthLab(): Promise<{ origin: string; close(): Promise<void> }> {
  const labs: { close(): Promise<void> }[] = [];
  const control = createServer((req, res) => {
    let body = "";
    req.on("data", (chunk) => (body += chunk));
    req.on("end", () => {
      if (req.method !== "POST" || req.url !== "/labs") {
        res.writeHead(404).end();
        return;
      }
      startOne(body ? (JSON.parse(body) as LabOptions) : {}).then(
        (lab) => {
          labs.push(lab);
          res
            .writeHead(201, { "content-type": "application/json" })
            .end(JSON.stringify({ origin: lab.origin, mcpUrl: `${lab.origin}/mcp` }));
        },
        (error: unknown) => res.writeHead(500).end(String(error)),
      );
    });
  });
  await new Promise<void>((resolve) => control.listen(0, "127.0.0.1", resolve));
  return {
    origin: `http://127.0.0.1:${(control.address() as AddressInfo).port}`,
    close: async () => {
      await Promise.all(labs.map((lab) => lab.close()));
      await new Promise<void>((resolve) => control.close(() => resolve()));
    },
  };
}
