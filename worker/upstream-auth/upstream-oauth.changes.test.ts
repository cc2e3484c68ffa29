// Changing an existing service's upstream OAuth with PATCH, against the lab (a real authorization server and MCP
// server over HTTP): switching the mode, changing or forgetting the client, removing OAuth for a static header the
// upstream accepts, and adding OAuth when the upstream starts asking for it. docs/upstream-oauth.md, "Changing a
// service's OAuth".
import { describe, it } from "vitest";
import { api, connectMcp, createKey, createWorkspace, gatewayError, type TestWorkspace } from "../../test/helpers.ts";
import { authorizedService, authorizeInBrowser, grantsOf, newLab, serviceOf, startAuthorize, type Lab } from "./upstream-oauth.fixtures.ts";

async function whoami(key: string) {
  const client = await connectMcp(key);
  try {
    return await client.callTool({ name: "lab__whoami", arguments: {} });
  } finally {
    await client.close();
  }
}

const textOf = (result: unknown) => ((result as { content?: { text?: string }[] }).content ?? [])[0]?.text;

const patch = (workspace: TestWorkspace, serviceId: string, body: Record<string, unknown>) =>
  api(`/v1/workspaces/${workspace.ws}/services/${serviceId}`, { method: "PATCH", key: workspace.adminKey, body });

/** Authorizes the service again as the workspace's admin key, as `user` at the authorization server. */
async function authorizeAgain(workspace: TestWorkspace, serviceId: string, user: string) {
  const link = await startAuthorize(workspace, serviceId, { key: workspace.adminKey });
  if (link.status !== 200) throw new Error(`authorize: ${link.status} ${JSON.stringify(link.body)}`);
  const flow = await authorizeInBrowser(link.body.authorizationUrl, { user });
  if (flow.callback?.status !== 200) throw new Error(`callback: ${flow.callback?.status} ${flow.callbackBody}`);
}

const knownRevocations = async (lab: Lab) => (await lab.state()).revocations.filter((revocation) => revocation.known).length;

describe("changing a service's OAuth mode", () => {
  it("switches shared to per user and back: every grant is revoked at the server, and the service waits for an admin", async ({
    expect,
  }) => {
    const lab = await newLab();
    const workspace = await createWorkspace();
    const { serviceId } = await authorizedService(workspace, lab);
    const clientKey = await createKey(workspace, ["tools:call"], workspace.defaultProfileId);
    expect(textOf(await whoami(clientKey))).toBe("upstream user: alice");

    const perUser = await patch(workspace, serviceId, { oauth: { mode: "per_user" } });
    expect(perUser.status).toBe(200);
    expect(perUser.body).toMatchObject({
      requiresAuthorization: true,
      authorization: {
        kind: "oauth",
        mode: "per_user",
        status: "pending",
        authorizedBy: null,
        pendingReason: { code: "oauth_changed", message: expect.stringContaining("from shared to per user") },
      },
    });
    // The workspace's grant was the shared mode's: revoked at the authorization server (both tokens), and gone.
    expect(await knownRevocations(lab)).toBe(2);
    expect(await grantsOf(workspace)).toEqual([]);
    expect(gatewayError(await whoami(clientKey))).toMatchObject({
      code: "upstream_authorization_required",
      details: { tool: "lab__whoami" },
    });

    // Authorized again per user: the admin's grant indexes it, and a caller now needs a grant of their own.
    await authorizeAgain(workspace, serviceId, "admin-upstream");
    const own = gatewayError(await whoami(clientKey));
    expect(own).toMatchObject({
      code: "upstream_authorization_required",
      details: { mode: "per_user", authorizationUrl: expect.any(String) },
    });
    expect((await authorizeInBrowser(own.details.authorizationUrl, { user: "bob" })).callback!.status).toBe(200);
    expect(textOf(await whoami(clientKey))).toBe("upstream user: bob");
    expect((await grantsOf(workspace)).map((grant) => grant.mode)).toEqual(["per_user", "per_user"]);

    // Back to shared: both per-user grants go.
    const shared = await patch(workspace, serviceId, { oauth: { mode: "shared" } });
    expect(shared.body.authorization).toMatchObject({
      mode: "shared",
      status: "pending",
      pendingReason: { code: "oauth_changed", message: expect.stringContaining("from per user to shared") },
    });
    expect(await knownRevocations(lab)).toBe(6);
    expect(await grantsOf(workspace)).toEqual([]);
    await authorizeAgain(workspace, serviceId, "carol");
    expect(textOf(await whoami(clientKey))).toBe("upstream user: carol");
  });

  it("changes nothing when the mode and client are what they were", async ({ expect }) => {
    const lab = await newLab();
    const workspace = await createWorkspace();
    const { serviceId } = await authorizedService(workspace, lab);
    const same = await patch(workspace, serviceId, { oauth: { mode: "shared", clientId: null } });
    expect(same.body.authorization).toMatchObject({ mode: "shared", status: "authorized", registration: "dynamic" });
    expect(await grantsOf(workspace)).toHaveLength(1);
    expect((await lab.state()).revocations).toEqual([]);
  });
});

describe("changing a service's OAuth client", () => {
  it("moves to a pre-registered client (revoking with the old one), keeps grants when only its secret is given again, and forgets it", async ({
    expect,
  }) => {
    const lab = await newLab();
    const workspace = await createWorkspace();
    const { serviceId } = await authorizedService(workspace, lab);
    const dynamicClient = (await serviceOf(workspace, serviceId)).authorization.clientId;
    const byHand = await lab.registerClient();

    const moved = await patch(workspace, serviceId, { oauth: { clientId: byHand.client_id, clientSecret: byHand.client_secret } });
    expect(moved.status).toBe(200);
    expect(moved.body.authorization).toMatchObject({
      registration: "pre_registered",
      clientId: byHand.client_id,
      status: "pending",
      pendingReason: { code: "oauth_changed", message: expect.stringContaining(`its client changed to ${byHand.client_id}`) },
    });
    expect(JSON.stringify(moved.body)).not.toContain(byHand.client_secret);
    expect(await knownRevocations(lab)).toBe(2);
    await authorizeAgain(workspace, serviceId, "alice");
    const clientKey = await createKey(workspace, ["tools:call"], workspace.defaultProfileId);
    expect(textOf(await whoami(clientKey))).toBe("upstream user: alice");
    const exchanged = (await lab.state()).tokenRequests.map((request) => request.clientId);
    expect(exchanged).toEqual([dynamicClient, byHand.client_id]);

    // The same client with its secret entered again: the grants are that client's, so they stand, and the resealed
    // secret is the one the next refresh authenticates with.
    const resealed = await patch(workspace, serviceId, { oauth: { clientId: byHand.client_id, clientSecret: byHand.client_secret } });
    expect(resealed.body.authorization).toMatchObject({ status: "authorized", clientId: byHand.client_id });
    expect(await grantsOf(workspace)).toHaveLength(1);
    await lab.control("expire-access-tokens");
    expect(textOf(await whoami(clientKey))).toBe("upstream user: alice");
    expect((await lab.state()).tokenRequests.at(-1)).toMatchObject({ grantType: "refresh_token", clientId: byHand.client_id });

    // Forgetting the pre-registered client registers the gateway's own way again.
    const registered = (await lab.state()).registeredClients;
    const forgotten = await patch(workspace, serviceId, { oauth: { clientId: null } });
    expect(forgotten.body.authorization).toMatchObject({ registration: "dynamic", status: "pending" });
    expect(forgotten.body.authorization.clientId).not.toBe(byHand.client_id);
    expect((await lab.state()).registeredClients).toBe(registered + 1);
    expect(await grantsOf(workspace)).toEqual([]);
    expect(await knownRevocations(lab)).toBe(4);
  });
});

describe("removing and adding OAuth", () => {
  it("removes OAuth once the upstream answers to the service's headers alone, and refuses while it still asks for OAuth", async ({
    expect,
  }) => {
    const lab = await newLab();
    const workspace = await createWorkspace();
    const { serviceId } = await authorizedService(workspace, lab);

    const refused = await patch(workspace, serviceId, { oauth: null });
    expect(refused.status).toBe(409);
    expect(refused.body.error).toMatchObject({ code: "oauth_still_required", details: { field: "json.oauth" } });
    // Nothing changed: still authorized, the grant still there and unrevoked.
    expect((await serviceOf(workspace, serviceId)).authorization).toMatchObject({ kind: "oauth", status: "authorized" });
    expect(await grantsOf(workspace)).toHaveLength(1);
    expect((await lab.state()).revocations).toEqual([]);

    // A personal access token as a secret header: the upstream takes it, so OAuth goes.
    const token = await lab.personalToken("carol");
    const removed = await patch(workspace, serviceId, { oauth: null, headers: { authorization: `Bearer ${token}` } });
    expect(removed.status).toBe(200);
    expect(removed.body).toMatchObject({
      authorization: { kind: "none" },
      requiresAuthorization: false,
      secretHeaderNames: ["authorization"],
    });
    expect(JSON.stringify(removed.body)).not.toContain(token);
    expect(await grantsOf(workspace)).toEqual([]);
    expect(await knownRevocations(lab)).toBe(2);
    const clientKey = await createKey(workspace, ["tools:call"], workspace.defaultProfileId);
    expect(textOf(await whoami(clientKey))).toBe("upstream user: carol");
    expect((await lab.state()).mcpAuthorizations.at(-1)).toBe(`Bearer ${token}`);
  });

  it("adds OAuth to a service whose upstream asks for it now, and refuses when the upstream answers without it", async ({ expect }) => {
    const lab = await newLab();
    const workspace = await createWorkspace();
    const token = await lab.personalToken("carol");
    const created = await api(`/v1/workspaces/${workspace.ws}/services`, {
      key: workspace.adminKey,
      body: { slug: "lab", url: lab.mcpUrl, headers: { authorization: `Bearer ${token}` } },
    });
    expect(created.status).toBe(201);
    expect(created.body.service.authorization).toEqual({ kind: "none" });
    const serviceId = created.body.service.id as string;
    const clientKey = await createKey(workspace, ["tools:call"], workspace.defaultProfileId);
    expect(textOf(await whoami(clientKey))).toBe("upstream user: carol");

    // Removing OAuth it does not have changes nothing.
    expect((await patch(workspace, serviceId, { oauth: null })).body.authorization).toEqual({ kind: "none" });
    // With the token still in its headers, the upstream does not ask for OAuth.
    const notAsked = await patch(workspace, serviceId, { oauth: {} });
    expect(notAsked.status).toBe(409);
    expect(notAsked.body.error).toMatchObject({ code: "service_not_oauth", details: { field: "json.oauth" } });
    expect((await lab.state()).registeredClients).toBe(0);

    // Without it the upstream answers 401: discovered, registered, and pending; the indexed tool is refused until then.
    const added = await patch(workspace, serviceId, { oauth: { mode: "shared" }, headers: {} });
    expect(added.status).toBe(200);
    expect(added.body).toMatchObject({
      secretHeaderNames: [],
      requiresAuthorization: true,
      authorization: {
        kind: "oauth",
        mode: "shared",
        status: "pending",
        registration: "dynamic",
        resource: lab.mcpUrl,
        pendingReason: { code: "connected" },
      },
    });
    expect(gatewayError(await whoami(clientKey)).code).toBe("upstream_authorization_required");
    await authorizeAgain(workspace, serviceId, "alice");
    expect(textOf(await whoami(clientKey))).toBe("upstream user: alice");
  });
});

describe("bad OAuth changes", () => {
  it("are refused with 400 naming the field, and change nothing", async ({ expect }) => {
    const lab = await newLab();
    const workspace = await createWorkspace();
    const { serviceId } = await authorizedService(workspace, lab);
    const bad: [Record<string, unknown>, string][] = [
      [{ oauth: { clientSecret: "s3cret" } }, "json.oauth"],
      [{ oauth: { mode: "sometimes" } }, "json.oauth.mode"],
      [{ oauth: { clientId: "" } }, "json.oauth.clientId"],
      [{ oauth: "off" }, "json.oauth"],
    ];
    for (const [body, field] of bad) {
      const res = await patch(workspace, serviceId, body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.error.code).toBe("invalid_request");
      expect(res.body.error.details.issues[0].field, JSON.stringify(body)).toBe(field);
    }
    expect(await grantsOf(workspace)).toHaveLength(1);
    expect((await serviceOf(workspace, serviceId)).authorization).toMatchObject({ status: "authorized" });
  });
});
