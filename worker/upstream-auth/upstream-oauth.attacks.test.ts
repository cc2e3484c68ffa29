import { env, runInDurableObject, SELF } from "cloudflare:test";
import { describe, it } from "vitest";
import { api, connectMcp, createKey, createWorkspace, ORIGIN } from "../../test/helpers.ts";
import { MAX_BODY_BYTES } from "../http/json-body.ts";
import { validateServerMetadata, OAuthMetadataInvalid } from "./oauth.server.ts";
import { OAUTH_REQUEST_TIMEOUT_MS } from "./oauth.fetch.ts";
import { MAX_TOKEN_CHARS } from "./oauth.token-bounds.ts";
import {
  authorizedService,
  authorizeInBrowser,
  connectOAuthService,
  confirmationFlow,
  grantsOf,
  newLab,
  openAuthorizationLink,
  serviceOf,
  startAuthorize,
} from "./upstream-oauth.fixtures.ts";

const errorOf = (body: unknown) => (body as { error: { code: string; message: string; details?: Record<string, unknown> } }).error;

/** Which upstream account a call through the gateway acts as: the lab's whoami tool, called with `key`. */
async function whoami(key: string): Promise<string> {
  const client = await connectMcp(key);
  try {
    const result = await client.callTool({ name: "lab__whoami", arguments: {} });
    return (result as { content: { text: string }[] }).content[0]!.text;
  } finally {
    await client.close();
  }
}

describe("an authorization server that lies in its metadata", () => {
  for (const [lie, field] of [
    ["issuer_mismatch", "issuer"],
    ["foreign_endpoint", "token_endpoint"],
    ["no_s256", "code_challenge_methods_supported"],
    ["resource_mismatch", "resource"],
    ["long_endpoint", "authorization_endpoint"],
    ["long_scopes", "scopes_supported"],
    ["long_resource", "resource"],
  ] as const) {
    it(`is refused with oauth_metadata_invalid (${lie}), and nothing is stored`, async ({ expect }) => {
      const lab = await newLab({ lie });
      const workspace = await createWorkspace();
      const res = await connectOAuthService(workspace, lab);
      expect(res.status).toBe(502);
      expect(errorOf(res.body)).toMatchObject({ code: "oauth_metadata_invalid", details: { field } });
      expect((await api(`/v1/workspaces/${workspace.ws}/services`, { key: workspace.adminKey })).body.services).toEqual([]);
      expect((await lab.state()).registeredClients).toBe(0);
    });
  }

  it("says which bound an oversized endpoint or scope list breaks", async ({ expect }) => {
    for (const [lie, message] of [
      ["long_endpoint", "The authorization server's authorization_endpoint is longer than 2048 characters"],
      ["long_scopes", "The upstream's scopes_supported is longer than 8192 characters"],
      ["long_resource", "The protected resource metadata's resource is longer than 2048 characters"],
    ] as const) {
      const res = await connectOAuthService(await createWorkspace(), await newLab({ lie }));
      expect(errorOf(res.body).message).toBe(message);
    }
  });

  it("is refused when dynamic registration answers a client_id too long for an authorization link, and nothing is stored", async ({
    expect,
  }) => {
    const lab = await newLab({ lie: "long_client_id" });
    const workspace = await createWorkspace();
    const res = await connectOAuthService(workspace, lab);
    expect(res.status).toBe(502);
    expect(errorOf(res.body)).toEqual({
      code: "upstream_protocol_error",
      message: "Dynamic client registration answered a client_id longer than 2048 characters",
    });
    expect((await api(`/v1/workspaces/${workspace.ws}/services`, { key: workspace.adminKey })).body.services).toEqual([]);
  });

  it("refuses an http endpoint of an https issuer", ({ expect }) => {
    const metadata = {
      issuer: "https://as.example.com",
      authorization_endpoint: "https://as.example.com/authorize",
      token_endpoint: "http://as.example.com/token",
      code_challenge_methods_supported: ["S256"],
    };
    expect(() => validateServerMetadata(metadata, new Set())).toThrow(OAuthMetadataInvalid);
    expect(() => validateServerMetadata(metadata, new Set())).toThrow("token_endpoint is refused: only https URLs are allowed");
    expect(validateServerMetadata({ ...metadata, token_endpoint: "https://as.example.com/token" }, new Set())).toMatchObject({
      token_endpoint: "https://as.example.com/token",
    });
  });
});

describe("SSRF through metadata URLs", () => {
  it("refuses a resource_metadata pointing at a cloud metadata address", async ({ expect }) => {
    const lab = await newLab({ lie: "metadata_internal" });
    const res = await connectOAuthService(await createWorkspace(), lab);
    expect(res.status).toBe(400);
    expect(errorOf(res.body)).toMatchObject({ code: "url_not_allowed", message: expect.stringContaining("169.254.169.254") });
  });

  it("refuses an authorization server on a private address", async ({ expect }) => {
    const lab = await newLab({ lie: "as_internal" });
    const res = await connectOAuthService(await createWorkspace(), lab);
    expect(res.status).toBe(400);
    expect(errorOf(res.body)).toMatchObject({ code: "url_not_allowed", message: expect.stringContaining("10.0.0.1") });
  });
});

describe("client registration", () => {
  it("asks for a pre-registered client when the server offers no registration, and uses one the admin enters", async ({ expect }) => {
    const lab = await newLab({ registration: "none" });
    const workspace = await createWorkspace();
    const refused = await connectOAuthService(workspace, lab);
    expect(refused.status).toBe(409);
    expect(errorOf(refused.body)).toMatchObject({ code: "oauth_client_required", details: { field: "json.oauth.clientId" } });

    await lab.addClient({
      client_id: "rayrun-by-hand",
      client_secret: "by-hand-secret",
      redirect_uris: [`${ORIGIN}/oauth/upstream/callback`],
      token_endpoint_auth_method: "client_secret_post",
    });
    const { serviceId } = await authorizedService(workspace, lab, {
      oauth: { clientId: "rayrun-by-hand", clientSecret: "by-hand-secret" },
    });
    const service = await serviceOf(workspace, serviceId);
    expect(service.authorization).toMatchObject({ registration: "pre_registered", clientId: "rayrun-by-hand", status: "authorized" });
    expect(JSON.stringify(service)).not.toContain("by-hand-secret");
  });

  it("uses the gateway's client ID metadata document where the server accepts one", async ({ expect }) => {
    const lab = await newLab({ registration: "cimd" });
    const workspace = await createWorkspace();
    const created = await connectOAuthService(workspace, lab);
    expect(created.status).toBe(201);
    const clientMetadataUrl = `${ORIGIN}/oauth/upstream/client-metadata.json`;
    expect(created.body.service.authorization).toMatchObject({ registration: "client_metadata_document", clientId: clientMetadataUrl });
    const document = await (await SELF.fetch(clientMetadataUrl)).json();
    expect(document).toMatchObject({
      client_id: clientMetadataUrl,
      redirect_uris: [`${ORIGIN}/oauth/upstream/callback`],
      token_endpoint_auth_method: "none",
    });
    await lab.addClient(document);
    const link = await startAuthorize(workspace, created.body.service.id, { key: workspace.adminKey });
    const flow = await authorizeInBrowser(link.body.authorizationUrl);
    expect(flow.callback!.status).toBe(200);
    expect((await lab.state()).tokenRequests).toEqual([
      { grantType: "authorization_code", resource: lab.mcpUrl, clientId: clientMetadataUrl },
    ]);
  });
});

describe("the state parameter", () => {
  async function pendingFlow() {
    const lab = await newLab();
    const workspace = await createWorkspace();
    const created = await connectOAuthService(workspace, lab);
    const serviceId = created.body.service.id as string;
    const link = await startAuthorize(workspace, serviceId, { key: workspace.adminKey });
    return { lab, workspace, serviceId, link: link.body.authorizationUrl as string };
  }

  const callback = async (url: string, cookie = "") => {
    const res = await SELF.fetch(url, { headers: { cookie }, redirect: "manual" });
    return { status: res.status, body: (await res.json()) as unknown };
  };

  it("works once: a replayed callback is refused", async ({ expect }) => {
    const { link } = await pendingFlow();
    const flow = await authorizeInBrowser(link);
    expect(flow.callback!.status).toBe(200);
    const replay = await callback(flow.callbackUrl!, flow.binding);
    expect(replay.status).toBe(400);
    expect(errorOf(replay.body)).toMatchObject({ code: "oauth_state_invalid", details: { reason: "unknown" } });
  });

  it("is refused from another workspace", async ({ expect }) => {
    const { link } = await pendingFlow();
    const other = await createWorkspace();
    const start = await openAuthorizationLink(link);
    const authorizeUrl = new URL(start.headers.get("location")!);
    const state = authorizeUrl.searchParams.get("state")!;
    const moved = `${other.ws}${state.slice(state.indexOf("."))}`;
    const res = await callback(`${ORIGIN}/oauth/upstream/callback?code=x&state=${encodeURIComponent(moved)}`);
    expect(errorOf(res.body)).toMatchObject({ code: "oauth_state_invalid", details: { reason: "unknown" } });
  });

  it("is refused after expiry", async ({ expect }) => {
    const { workspace, link } = await pendingFlow();
    await runInDurableObject(env.WORKSPACE.getByName(workspace.ws), async (_instance, state) => {
      state.storage.sql.exec("UPDATE upstream_oauth_flows SET expires_at = 0");
    });
    const start = await SELF.fetch(link, { redirect: "manual" });
    expect(start.status).toBe(400);
    expect(errorOf(await start.json())).toMatchObject({ code: "oauth_state_invalid", details: { reason: "expired" } });
  });

  it("is refused from a browser other than the one that opened the link", async ({ expect }) => {
    const { link, serviceId, workspace } = await pendingFlow();
    const started = await openAuthorizationLink(link);
    const state = new URL(started.headers.get("location")!).searchParams.get("state")!;
    // The binding cookie the start link set stays in the first browser; another sends none, or a forged one.
    const cookieName = started.headers.getSetCookie()[0]!.split("=")[0]!;
    const res = await callback(`${ORIGIN}/oauth/upstream/callback?code=x&state=${encodeURIComponent(state)}`, `${cookieName}=forged`);
    expect(errorOf(res.body)).toMatchObject({ code: "oauth_state_invalid", details: { reason: "other_browser" } });
    expect((await serviceOf(workspace, serviceId)).authorization.status).toBe("pending");
  });
});

describe("a link bound to no signed-in user", () => {
  // Round 6, finding 4: a link made with a key went straight to the authorization server in whichever browser opened
  // it, so its maker could send it to someone else, whose consent (or a consent the server remembered) gave the
  // maker's workspace or key that person's upstream account, with nothing on the way saying so.
  const textOf = (html: string) => html.replace(/<[^>]+>/g, "");

  it("shows whose grant it makes, and goes on only when the page's own button is pressed", async ({ expect }) => {
    const lab = await newLab();
    const workspace = await createWorkspace("Acme <b>ops</b>");
    const serviceId = (await connectOAuthService(workspace, lab)).body.service.id as string;
    const link = (await startAuthorize(workspace, serviceId, { key: workspace.adminKey })).body.authorizationUrl as string;
    const keys = (await api(`/v1/workspaces/${workspace.ws}/keys`, { key: workspace.adminKey })).body.keys as {
      id: string;
      name: string;
    }[];

    const opened = await SELF.fetch(link, { redirect: "manual" });
    const html = await opened.text();
    expect([opened.status, opened.headers.get("x-frame-options"), opened.headers.getSetCookie()]).toEqual([200, "DENY", []]);
    expect(textOf(html)).toContain(
      `This link was made by the API key “${keys[0]!.name}” (${keys[0]!.id}) of the Rayrun workspace Acme &#60;b&#62;ops&#60;/b&#62;.`,
    );
    expect(textOf(html)).toContain(`Going on takes you to ${new URL(lab.mcpUrl).origin}`);
    expect(textOf(html)).toContain(
      "for the service lab by every agent and key that may call this service in the workspace (a shared grant)",
    );
    // Seeing the page binds nothing: the link still works, in this browser or another.
    expect(confirmationFlow(await (await SELF.fetch(link, { redirect: "manual" })).text())).toBeDefined();

    const onward = await openAuthorizationLink(link);
    expect([onward.status, new URL(onward.headers.get("location")!).origin]).toEqual([303, new URL(lab.mcpUrl).origin]);
    expect(onward.headers.getSetCookie()).toHaveLength(1);
  });

  it("names the key whose own grant a per-user link makes", async ({ expect }) => {
    const lab = await newLab();
    const workspace = await createWorkspace();
    const serviceId = (await connectOAuthService(workspace, lab, { oauth: { mode: "per_user" } })).body.service.id as string;
    const link = (await startAuthorize(workspace, serviceId, { key: workspace.adminKey })).body.authorizationUrl as string;
    const keys = (await api(`/v1/workspaces/${workspace.ws}/keys`, { key: workspace.adminKey })).body.keys as {
      id: string;
      name: string;
    }[];
    const html = textOf(await (await SELF.fetch(link, { redirect: "manual" })).text());
    expect(html).toContain(`for the service lab by the API key “${keys[0]!.name}” (${keys[0]!.id}).`);
  });

  it("refuses the page's form sent from another site, binding nothing", async ({ expect }) => {
    const lab = await newLab();
    const workspace = await createWorkspace();
    const serviceId = (await connectOAuthService(workspace, lab)).body.service.id as string;
    const link = (await startAuthorize(workspace, serviceId, { key: workspace.adminKey })).body.authorizationUrl as string;
    const flow = confirmationFlow(await (await SELF.fetch(link, { redirect: "manual" })).text())!;
    const crossSite: Record<string, string>[] = [{ origin: "https://evil.example", "sec-fetch-site": "cross-site" }, {}];
    for (const headers of crossSite) {
      const posted = await SELF.fetch(`${ORIGIN}/oauth/upstream/start`, {
        method: "POST",
        headers: { ...headers, "content-type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({ flow }),
        redirect: "manual",
      });
      expect([posted.status, posted.headers.getSetCookie(), ((await posted.json()) as { error: { code: string } }).error.code]).toEqual([
        403,
        [],
        "csrf_refused",
      ]);
    }
    // Still unbound: the person it was meant for can go on.
    expect((await openAuthorizationLink(link)).status).toBe(303);
  });

  it("reads the form under the API's body bound, declared or streamed", async ({ expect }) => {
    const oversized = `flow=${"x".repeat(MAX_BODY_BYTES)}`;
    const streamed = () =>
      new ReadableStream<Uint8Array>({
        start(controller) {
          controller.enqueue(new TextEncoder().encode(oversized));
          controller.close();
        },
      });
    for (const body of [oversized, streamed()]) {
      const posted = await SELF.fetch(`${ORIGIN}/oauth/upstream/start`, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded", "sec-fetch-site": "same-origin", origin: ORIGIN },
        body,
        redirect: "manual",
      });
      expect([posted.status, ((await posted.json()) as { error: { code: string } }).error.code]).toEqual([413, "payload_too_large"]);
    }
  });
});

describe("a callback that does not bring tokens", () => {
  it("with an error: the service stays pending, with the server's reason", async ({ expect }) => {
    const lab = await newLab();
    const workspace = await createWorkspace();
    const created = await connectOAuthService(workspace, lab);
    const link = await startAuthorize(workspace, created.body.service.id, { key: workspace.adminKey });
    const flow = await authorizeInBrowser(link.body.authorizationUrl, { decision: "deny" });
    expect(flow.callback!.status).toBe(400);
    expect(errorOf(JSON.parse(flow.callbackBody!))).toMatchObject({ code: "oauth_callback_error", details: { error: "access_denied" } });
    expect(await serviceOf(workspace, created.body.service.id)).toMatchObject({
      requiresAuthorization: true,
      authorization: { status: "pending", pendingReason: { code: "access_denied", message: expect.stringContaining("The user declined") } },
    });
    expect((await lab.state()).tokenRequests).toEqual([]);
  });

  it("from a token endpoint that answers 5 MiB: bounded, refused, still pending", async ({ expect }) => {
    const lab = await newLab({ token: "huge" });
    const workspace = await createWorkspace();
    const created = await connectOAuthService(workspace, lab);
    const link = await startAuthorize(workspace, created.body.service.id, { key: workspace.adminKey });
    const flow = await authorizeInBrowser(link.body.authorizationUrl);
    expect(flow.callback!.status).toBe(502);
    expect(errorOf(JSON.parse(flow.callbackBody!))).toMatchObject({ code: "upstream_response_too_large" });
    expect((await serviceOf(workspace, created.body.service.id)).authorization).toMatchObject({
      status: "pending",
      pendingReason: { code: "upstream_response_too_large" },
    });
  });

  // Round 7, finding 2: a token within the whole answer's 256 KiB bound was kept whatever its size: sealed into the
  // workspace Durable Object (once per grant of a per-user service), opened on every call and sent in every upstream
  // request's Authorization header.
  it("from a token endpoint that answers a 200 KiB access token: refused, nothing stored, still pending", async ({ expect }) => {
    const lab = await newLab({ token: "oversized" });
    const workspace = await createWorkspace();
    const created = await connectOAuthService(workspace, lab);
    const link = await startAuthorize(workspace, created.body.service.id, { key: workspace.adminKey });
    const flow = await authorizeInBrowser(link.body.authorizationUrl);
    expect(flow.callback!.status).toBe(502);
    expect(errorOf(JSON.parse(flow.callbackBody!))).toMatchObject({
      code: "oauth_token_request_failed",
      message: `The token endpoint answered badly: its access_token is ${200 * 1024} characters, over the ${MAX_TOKEN_CHARS} a grant keeps`,
      details: { error: "invalid_response" },
    });
    expect(await grantsOf(workspace)).toEqual([]);
    expect((await serviceOf(workspace, created.body.service.id)).authorization).toMatchObject({
      status: "pending",
      pendingReason: { code: "oauth_token_request_failed" },
    });
  });

  it(
    "from a token endpoint that hangs: stopped at the request deadline, still pending",
    async ({ expect }) => {
      const lab = await newLab({ token: "hang" });
      const workspace = await createWorkspace();
      const created = await connectOAuthService(workspace, lab);
      const link = await startAuthorize(workspace, created.body.service.id, { key: workspace.adminKey });
      const started = Date.now();
      const flow = await authorizeInBrowser(link.body.authorizationUrl);
      expect(flow.callback!.status).toBe(502);
      expect(errorOf(JSON.parse(flow.callbackBody!))).toMatchObject({
        code: "upstream_unreachable",
        message: expect.stringContaining("did not answer"),
      });
      expect(Date.now() - started).toBeGreaterThanOrEqual(OAUTH_REQUEST_TIMEOUT_MS - 100);
      expect((await serviceOf(workspace, created.body.service.id)).authorization.pendingReason.code).toBe("upstream_unreachable");
    },
    OAUTH_REQUEST_TIMEOUT_MS + 20_000,
  );
});

describe("returnTo", () => {
  // Round 6, finding 3: returnTo was checked against the origin of the authorize request, whose Host header any
  // admin key chooses, so the gateway's own callback became a redirect to a site of the caller's.
  it("must be on the console's origin, whatever Host the authorize request names", async ({ expect }) => {
    const lab = await newLab();
    const workspace = await createWorkspace();
    const serviceId = (await connectOAuthService(workspace, lab)).body.service.id as string;
    const authorize = (origin: string, returnTo: string) =>
      SELF.fetch(`${origin}/v1/workspaces/${workspace.ws}/services/${serviceId}/authorize`, {
        method: "POST",
        headers: { authorization: `Bearer ${workspace.adminKey}`, "content-type": "application/json" },
        body: JSON.stringify({ returnTo }),
      });
    const forged = await authorize("https://evil.example", "https://evil.example/landing");
    expect(forged.status).toBe(400);
    expect(errorOf(await forged.json())).toMatchObject({ code: "invalid_request", details: { field: "json.returnTo" } });

    const fromConsole = await authorize(ORIGIN, `${ORIGIN}/#/w/${workspace.ws}/services`);
    expect(fromConsole.status).toBe(200);
    const { authorizationUrl } = (await fromConsole.json()) as { authorizationUrl: string };
    const flow = await authorizeInBrowser(authorizationUrl);
    expect(flow.callback!.status).toBe(302);
    expect(flow.callback!.headers.get("location")).toBe(`${ORIGIN}/#/w/${workspace.ws}/services`);
  });
});

describe("a token endpoint's expires_in", () => {
  // Round 6, finding 2: 1e300 seconds is a finite number oauth4webapi accepts, but no Date can hold the expiry,
  // and every GET …/upstream-grants of the workspace answered 500.
  it("past ten years is taken as no expiry, and the grants still list", async ({ expect }) => {
    const lab = await newLab({ accessTokenTtl: 1e300 });
    const workspace = await createWorkspace();
    const { serviceId } = await authorizedService(workspace, lab);
    const grants = await api(`/v1/workspaces/${workspace.ws}/upstream-grants`, { key: workspace.adminKey });
    expect(grants.status).toBe(200);
    expect(grants.body.grants).toEqual([expect.objectContaining({ serviceId, expiresAt: null })]);
  });
});

describe("tokens go only to their resource", () => {
  it("refuses to point an OAuth service at another URL, where its tokens would follow", async ({ expect }) => {
    const lab = await newLab();
    const workspace = await createWorkspace();
    const { serviceId } = await authorizedService(workspace, lab);
    const moved = await api(`/v1/workspaces/${workspace.ws}/services/${serviceId}`, {
      method: "PATCH",
      key: workspace.adminKey,
      body: { url: "http://127.0.0.1:1/mcp" },
    });
    expect(moved.status).toBe(409);
    expect(errorOf(moved.body)).toMatchObject({ code: "conflict", details: { field: "json.url" } });
    expect((await serviceOf(workspace, serviceId)).url).toBe(lab.mcpUrl);
  });
});

describe("a grant deleted and authorized again", () => {
  // Round 6, finding 1: the new grant's first token had the deleted grant's version (1), so the isolate's pooled
  // upstream session, made with the old token, was reused: calls kept acting as the old upstream account, whose token
  // still worked where the server offers no revocation.
  it("is never served by a session made with the deleted grant's token", async ({ expect }) => {
    const lab = await newLab({ revocation: false });
    const workspace = await createWorkspace();
    const { serviceId } = await authorizedService(workspace, lab, {}, "alice");
    const clientKey = await createKey(workspace, ["tools:call"], workspace.defaultProfileId);
    expect(await whoami(clientKey)).toBe("upstream user: alice");

    const disconnected = await api(`/v1/workspaces/${workspace.ws}/services/${serviceId}/authorization`, {
      method: "DELETE",
      key: workspace.adminKey,
    });
    expect(disconnected.body).toEqual({ grants: 1, revoked: 0 });
    const link = await startAuthorize(workspace, serviceId, { key: workspace.adminKey });
    expect((await authorizeInBrowser(link.body.authorizationUrl, { user: "bob" })).callback!.status).toBe(200);

    expect(await whoami(clientKey)).toBe("upstream user: bob");
    expect((await lab.state()).toolCallsBy).toEqual(["alice", "bob"]);
  });
});

describe("a grant authorized again while its refresh is in flight", () => {
  // Round 7, finding 1: authorizing a grant again keeps its row (same id, next version). A refresh of the old tokens
  // still in flight then wrote them over the new ones when it answered (and asked meanwhile, the new grant joined that
  // refresh), so the service went on acting as the old upstream account, for good: its refresh token kept working.
  // An `invalid_grant` answer deleted the new grant the same way.
  it("keeps the new authorization: the old refresh's answer is not written over it", async ({ expect }) => {
    const lab = await newLab({ accessTokenTtl: 30, refreshDelayMs: 3000 });
    const workspace = await createWorkspace();
    const { serviceId } = await authorizedService(workspace, lab, {}, "alice");
    const clientKey = await createKey(workspace, ["tools:call"], workspace.defaultProfileId);
    const refreshes = async () => (await lab.state()).tokenRequests.filter((request) => request.grantType === "refresh_token").length;
    const before = await refreshes();
    // Its 30 s token is within a minute of expiry: this call refreshes it first, and the lab takes 3 s to answer.
    const inFlight = whoami(clientKey);
    for (let i = 0; i < 100 && (await refreshes()) === before; i++) await new Promise((resolve) => setTimeout(resolve, 20));
    const link = await startAuthorize(workspace, serviceId, { key: workspace.adminKey });
    expect((await authorizeInBrowser(link.body.authorizationUrl, { user: "bob" })).callback!.status).toBe(200);
    // The call that waited for the superseded refresh goes out with the grant as it is now.
    expect(await inFlight).toBe("upstream user: bob");

    expect(await whoami(clientKey)).toBe("upstream user: bob");
    expect(await whoami(clientKey)).toBe("upstream user: bob");
  }, 60_000);
});

describe("a service URL's secret query in OAuth discovery", () => {
  it("is not echoed when the protected resource metadata names another resource", async ({ expect }) => {
    const SECRET = "sk-query-secret-oauth-91c2";
    const lab = await newLab({ lie: "resource_mismatch" });
    const workspace = await createWorkspace();
    // Connected with a personal token, the upstream's 401 only comes once PATCH drops the header for OAuth.
    const created = await api(`/v1/workspaces/${workspace.ws}/services`, {
      key: workspace.adminKey,
      body: {
        slug: "lab",
        url: `${lab.mcpUrl}?api_key=${SECRET}`,
        headers: { authorization: `Bearer ${await lab.personalToken("alice")}` },
      },
    });
    expect(created.status).toBe(201);
    const res = await api(`/v1/workspaces/${workspace.ws}/services/${created.body.service.id}`, {
      method: "PATCH",
      key: workspace.adminKey,
      body: { headers: {}, oauth: {} },
    });
    expect(res.status).toBe(502);
    expect(errorOf(res.body)).toMatchObject({ code: "oauth_metadata_invalid", details: { field: "resource" } });
    expect(errorOf(res.body).message).toContain(lab.mcpUrl);
    expect(JSON.stringify(res.body)).not.toContain(SECRET);
  });
});
