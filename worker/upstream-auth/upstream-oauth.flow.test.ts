import { describe, it } from "vitest";
import { api, connectMcp, createKey, createWorkspace, eventually, gatewayError } from "../../test/helpers.ts";
import {
  authorizedService,
  authorizeInBrowser,
  connectOAuthService,
  grantsOf,
  newLab,
  serviceOf,
  startAuthorize,
} from "./upstream-oauth.fixtures.ts";

const whoami = async (key: string) => {
  const client = await connectMcp(key);
  try {
    return await client.callTool({ name: "lab__whoami", arguments: {} });
  } finally {
    await client.close();
  }
};

const textOf = (result: unknown) => ((result as { content?: { text?: string }[] }).content ?? [])[0]?.text;

describe("an OAuth-protected upstream, end to end", () => {
  it("connects pending, discovers and registers, authorizes with PKCE for the resource, indexes and calls", async ({ expect }) => {
    const lab = await newLab();
    const workspace = await createWorkspace();
    const created = await connectOAuthService(workspace, lab);
    expect(created.status).toBe(201);
    expect(created.body.index).toBeNull();
    expect(created.body.service).toMatchObject({
      requiresAuthorization: true,
      authorization: {
        kind: "oauth",
        mode: "shared",
        status: "pending",
        pendingReason: { code: "connected" },
        resource: lab.mcpUrl,
        issuer: `${lab.origin}/`,
        scopes: ["mcp:tools"],
        registration: "dynamic",
        revocation: true,
      },
    });
    expect(JSON.stringify(created.body)).not.toMatch(/client_?secret/i);
    // Nothing is indexed until it is authorized.
    const serviceId = created.body.service.id;
    const before = await api(`/v1/workspaces/${workspace.ws}/tools`, { key: workspace.adminKey });
    expect(before.body.tools).toEqual([]);
    expect((await lab.state()).registeredClients).toBe(1);

    const link = await startAuthorize(workspace, serviceId, { key: workspace.adminKey });
    expect(link.status).toBe(200);
    expect(link.body.authorizationUrl).toMatch(/^https:\/\/rayrun\.test\/oauth\/upstream\/start\?flow=ws_/);
    const flow = await authorizeInBrowser(link.body.authorizationUrl);
    const authorize = new URL(flow.authorizeUrl!);
    expect(authorize.origin).toBe(lab.origin);
    expect(authorize.searchParams.get("code_challenge_method")).toBe("S256");
    expect(authorize.searchParams.get("resource")).toBe(lab.mcpUrl);
    expect(authorize.searchParams.get("redirect_uri")).toBe("https://rayrun.test/oauth/upstream/callback");
    expect(authorize.searchParams.get("state")).toMatch(new RegExp(`^${workspace.ws}\\.`));
    expect(flow.binding).toMatch(/^rr_upstream_oauth_[0-9a-f]{16}=/);
    expect(flow.callback!.status).toBe(200);
    expect(flow.callbackBody).toContain("is authorized");

    const service = await serviceOf(workspace, serviceId);
    expect(service).toMatchObject({ requiresAuthorization: false, authorization: { status: "authorized", pendingReason: null } });
    expect(service.indexedAt).not.toBeNull();
    const tools = (await api(`/v1/workspaces/${workspace.ws}/tools`, { key: workspace.adminKey })).body.tools;
    expect(tools.map((tool: { publicName: string }) => tool.publicName)).toEqual(["lab__whoami"]);

    const clientKey = await createKey(workspace, ["tools:call"], workspace.defaultProfileId);
    const result = await whoami(clientKey);
    expect(textOf(result)).toBe("upstream user: alice");

    const state = await lab.state();
    expect(state.tokenRequests).toEqual([
      { grantType: "authorization_code", resource: lab.mcpUrl, clientId: state.tokenRequests[0]!.clientId },
    ]);
    // The gateway's own credentials never reach the upstream: only the upstream's bearer tokens do.
    // Only the connect-time probe (its `server/discover`, answered 401) went without credentials.
    const firstAuthorized = state.mcpAuthorizations.findIndex(Boolean);
    expect(state.mcpAuthorizations.slice(0, firstAuthorized)).toEqual([""]);
    const authorized = state.mcpAuthorizations.slice(firstAuthorized);
    expect(authorized.length).toBeGreaterThan(0);
    expect(authorized.every((header) => /^Bearer at_/.test(header))).toBe(true);
    expect(state.mcpAuthorizations.some((header) => header.includes(clientKey) || header.includes(workspace.adminKey))).toBe(false);

    const grants = await grantsOf(workspace);
    expect(grants).toEqual([
      expect.objectContaining({
        serviceId,
        serviceSlug: "lab",
        mode: "shared",
        subject: "workspace",
        scopes: ["mcp:tools"],
        authorizedBy: expect.stringMatching(/^key_/),
      }),
    ]);
    expect(grants[0]!.lastUsedAt).not.toBeNull();
    expect(JSON.stringify(grants)).not.toMatch(/at_|rt_/);
  });

  it("refreshes an expired token on the upstream's 401 and retries once, for the same resource", async ({ expect }) => {
    const lab = await newLab();
    const workspace = await createWorkspace();
    await authorizedService(workspace, lab);
    const clientKey = await createKey(workspace, ["tools:call"], workspace.defaultProfileId);
    expect(textOf(await whoami(clientKey))).toBe("upstream user: alice");
    await lab.control("expire-access-tokens");
    expect(textOf(await whoami(clientKey))).toBe("upstream user: alice");
    const state = await lab.state();
    expect(state.tokenRequests.map((request) => [request.grantType, request.resource])).toEqual([
      ["authorization_code", lab.mcpUrl],
      ["refresh_token", lab.mcpUrl],
    ]);
    expect((await grantsOf(workspace))[0]!.refreshedAt).not.toBeNull();
  });

  it("refreshes ahead of expiry, and racing calls share one refresh", async ({ expect }) => {
    const lab = await newLab({ accessTokenTtl: 30, refreshedAccessTokenTtl: 3600, refreshDelayMs: 300 });
    const workspace = await createWorkspace();
    await authorizedService(workspace, lab);
    const clientKey = await createKey(workspace, ["tools:call"], workspace.defaultProfileId);
    const afterIndexing = (await lab.state()).mcpAuthorizations.length;
    // Indexing used the 30 s token; it is within a minute of expiry, so the next calls refresh before they are sent.
    const results = await Promise.all(Array.from({ length: 6 }, () => whoami(clientKey)));
    expect(results.map(textOf)).toEqual(Array(6).fill("upstream user: alice"));
    const state = await lab.state();
    expect(state.tokenRequests.filter((request) => request.grantType === "refresh_token")).toHaveLength(1);
    // Every call went out with the refreshed token: no 401 was needed.
    const sent = state.mcpAuthorizations.slice(afterIndexing);
    expect(new Set(sent).size).toBe(1);
  });

  it("returns the service to pending when the refresh token is revoked, says why, and refuses calls", async ({ expect }) => {
    const lab = await newLab();
    const workspace = await createWorkspace();
    const { serviceId } = await authorizedService(workspace, lab);
    const clientKey = await createKey(workspace, ["tools:call"], workspace.defaultProfileId);
    await lab.control("revoke-refresh-tokens");
    await lab.control("expire-access-tokens");
    const refused = await whoami(clientKey);
    expect(refused.isError).toBe(true);
    expect(gatewayError(refused)).toMatchObject({
      code: "upstream_authorization_required",
      details: { service: "lab", mode: "shared" },
    });
    expect(await serviceOf(workspace, serviceId)).toMatchObject({
      requiresAuthorization: true,
      authorization: { status: "pending", pendingReason: { code: "invalid_grant", message: expect.stringContaining("invalid_grant") } },
    });
    expect(await grantsOf(workspace)).toEqual([]);
    const calls = (await lab.state()).toolCallsBy.length;
    const again = await whoami(clientKey);
    expect(gatewayError(again).code).toBe("upstream_authorization_required");
    expect((await lab.state()).toolCallsBy.length).toBe(calls);
  });

  it("disconnects: revokes the grant at the authorization server, deletes it, and the service waits again", async ({ expect }) => {
    const lab = await newLab();
    const workspace = await createWorkspace();
    const { serviceId } = await authorizedService(workspace, lab);
    const disconnected = await api(`/v1/workspaces/${workspace.ws}/services/${serviceId}/authorization`, {
      method: "DELETE",
      key: workspace.adminKey,
    });
    expect(disconnected).toMatchObject({ status: 200, body: { grants: 1, revoked: 1 } });
    expect((await lab.state()).revocations).toEqual([
      { hint: "refresh_token", known: true },
      { hint: "access_token", known: true },
    ]);
    expect(await grantsOf(workspace)).toEqual([]);
    expect((await serviceOf(workspace, serviceId)).authorization).toMatchObject({
      status: "pending",
      pendingReason: { code: "disconnected" },
    });
    const clientKey = await createKey(workspace, ["tools:call"], workspace.defaultProfileId);
    expect(gatewayError(await whoami(clientKey)).code).toBe("upstream_authorization_required");
  });

  it("authorizing again revokes the tokens it replaces, and the new ones stand", async ({ expect }) => {
    const lab = await newLab();
    const workspace = await createWorkspace();
    const { serviceId } = await authorizedService(workspace, lab, {}, "alice");
    const clientKey = await createKey(workspace, ["tools:call"], workspace.defaultProfileId);
    expect((await whoami(clientKey)).content).toEqual([{ type: "text", text: "upstream user: alice" }]);
    expect((await lab.state()).revocations).toEqual([]);

    const link = await startAuthorize(workspace, serviceId, { key: workspace.adminKey });
    expect((await authorizeInBrowser(link.body.authorizationUrl, { user: "bob" })).callback!.status).toBe(200);
    // Revoked after the callback's answer: alice's tokens, the only ones the authorization server knew to revoke.
    const revocations = await eventually(
      async () => (await lab.state()).revocations,
      (list) => list.length === 2,
    );
    expect(revocations).toEqual([
      { hint: "refresh_token", known: true },
      { hint: "access_token", known: true },
    ]);
    expect((await whoami(clientKey)).content).toEqual([{ type: "text", text: "upstream user: bob" }]);
    expect((await grantsOf(workspace)).map((grant) => grant.subject)).toEqual(["workspace"]);
  });

  it("authorizing the same account again revokes none of the tokens the server handed out again", async ({ expect }) => {
    // Every call refreshes (the access token lives a second), so a revoked refresh token would show at once.
    const lab = await newLab({ sameRefreshToken: true, accessTokenTtl: 1 });
    const workspace = await createWorkspace();
    const { serviceId } = await authorizedService(workspace, lab, {}, "alice");
    const clientKey = await createKey(workspace, ["tools:call"], workspace.defaultProfileId);
    const link = await startAuthorize(workspace, serviceId, { key: workspace.adminKey });
    expect((await authorizeInBrowser(link.body.authorizationUrl, { user: "alice" })).callback!.status).toBe(200);
    // Only the replaced access token goes (a refresh token would have gone first): the refresh token is the new grant's.
    const revocations = await eventually(
      async () => (await lab.state()).revocations,
      (list) => list.some((revocation) => revocation.hint === "access_token"),
    );
    expect(revocations).toEqual([{ hint: "access_token", known: true }]);
    expect((await whoami(clientKey)).content).toEqual([{ type: "text", text: "upstream user: alice" }]);
  });

  it("revoking a key ends the authorization links it made: one cannot replace the shared grant afterwards", async ({ expect }) => {
    const lab = await newLab();
    const workspace = await createWorkspace();
    const { serviceId } = await authorizedService(workspace, lab, {}, "alice");
    const clientKey = await createKey(workspace, ["tools:call"], workspace.defaultProfileId);
    const made = await api(`/v1/workspaces/${workspace.ws}/keys`, { key: workspace.adminKey, body: { name: "ops", scopes: ["admin"] } });
    const link = await startAuthorize(workspace, serviceId, { key: made.body.secret });
    expect(link.status).toBe(200);
    const revoked = await api(`/v1/workspaces/${workspace.ws}/keys/${made.body.key.id}`, { method: "DELETE", key: workspace.adminKey });
    expect(revoked.status).toBe(200);

    const flow = await authorizeInBrowser(link.body.authorizationUrl, { user: "mallory" });
    expect(flow.callback).toBeUndefined();
    expect(flow.start.status).toBe(400);
    expect(JSON.parse(flow.startBody!).error).toMatchObject({ code: "oauth_state_invalid", details: { reason: "unknown" } });
    expect((await whoami(clientKey)).content).toEqual([{ type: "text", text: "upstream user: alice" }]);
  });

  it("deleting the service deletes and revokes its grants", async ({ expect }) => {
    const lab = await newLab();
    const workspace = await createWorkspace();
    const { serviceId } = await authorizedService(workspace, lab);
    const deleted = await api(`/v1/workspaces/${workspace.ws}/services/${serviceId}`, { method: "DELETE", key: workspace.adminKey });
    expect(deleted.status).toBe(204);
    expect(await grantsOf(workspace)).toEqual([]);
    expect((await lab.state()).revocations.filter((revocation) => revocation.known)).toHaveLength(2);
  });

  it("never shows a hook the token: its context is the documented non-secret fields", async ({ expect }) => {
    const lab = await newLab();
    const workspace = await createWorkspace();
    await authorizedService(workspace, lab);
    const tools = (await api(`/v1/workspaces/${workspace.ws}/tools`, { key: workspace.adminKey })).body.tools;
    const base = `/v1/workspaces/${workspace.ws}/tools/${tools[0].uid}/hook`;
    const source = `export default defineToolAdapter({
  apiVersion: "rayrun.hooks/v1",
  before({ arguments: args, context }) {
    return { action: "reject", reason: "context_seen", message: JSON.stringify({ args, context, keys: Object.keys(context) }) };
  },
});
`;
    const draft = await api(`${base}/draft`, { key: workspace.adminKey });
    const saved = await api(`${base}/draft`, {
      method: "PUT",
      key: workspace.adminKey,
      body: { source, config: {} },
      headers: { "if-match": draft.body.etag },
    });
    expect(saved.status).toBe(200);
    expect((await api(`${base}/test`, { key: workspace.adminKey, body: { stage: "before", arguments: {} } })).status).toBe(200);
    const revision = await api(`${base}/revisions`, { key: workspace.adminKey, body: { versionId: saved.body.versionId } });
    expect(revision.status).toBe(201);
    expect(
      (await api(`${base}/deployments/active`, { method: "PUT", key: workspace.adminKey, body: { revisionId: revision.body.revisionId } }))
        .status,
    ).toBe(200);

    const clientKey = await createKey(workspace, ["tools:call"], workspace.defaultProfileId);
    const seen = gatewayError(await whoami(clientKey));
    expect(seen.code).toBe("context_seen");
    const { context, keys } = JSON.parse(seen.message);
    expect(keys.sort()).toEqual([
      "calledAt",
      "config",
      "connectionId",
      "encoding",
      "log",
      "requestId",
      "toolName",
      "toolUid",
      "workspaceUid",
    ]);
    // The connect-time probe went without credentials; every later request carried a token.
    const tokens = (await lab.state()).mcpAuthorizations.filter(Boolean).map((header) => header.replace("Bearer ", ""));
    expect(tokens.length).toBeGreaterThan(0);
    for (const token of tokens) expect(seen.message).not.toContain(token);
    expect(JSON.stringify(context)).not.toMatch(/at_|rt_|Bearer/);
  });
});

describe("finding 9 (issue 26): an OAuth service's first indexing is its connection's", () => {
  it("indexes its tools active after authorization, or in review when connected with reviewInitialTools", async ({ expect }) => {
    for (const reviewInitialTools of [false, true]) {
      const lab = await newLab();
      const workspace = await createWorkspace();
      const { serviceId } = await authorizedService(workspace, lab, { reviewInitialTools });
      expect((await serviceOf(workspace, serviceId)).reviewInitialTools).toBe(reviewInitialTools);
      const tools = (await api(`/v1/workspaces/${workspace.ws}/tools`, { key: workspace.adminKey })).body.tools;
      expect(tools.map((tool: { name: string; status: string }) => [tool.name, tool.status])).toEqual([
        ["whoami", reviewInitialTools ? "review_required" : "active"],
      ]);
    }
  });
});
