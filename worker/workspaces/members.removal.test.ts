import { env } from "cloudflare:test";
import { describe, it } from "vitest";
import { api, CONSOLE_HEADERS, connectMcp, createKey, createWorkspace, devLogin, gatewayError } from "../../test/helpers.ts";
import { exchange } from "../oauth/oauth.fixtures.ts";
import { authorizeInBrowser, connectOAuthService, grantsOf, newLab, startAuthorize } from "../upstream-auth/upstream-oauth.fixtures.ts";

/** A workspace whose admin member stays: the member a test removes is never its last admin. */
const withOwner = () => createWorkspace("Test workspace", `owner-${crypto.randomUUID().slice(0, 8)}@rayrun.test`);

async function whoami(key: string) {
  const client = await connectMcp(key);
  try {
    return await client.callTool({ name: "lab__whoami", arguments: {} });
  } finally {
    await client.close();
  }
}

describe("removing a member", () => {
  it("ends their access, and revokes their keys, their upstream grants and the OAuth grants they consented to", async ({ expect }) => {
    const lab = await newLab();
    const workspace = await withOwner();
    const serviceId = (await connectOAuthService(workspace, lab, { oauth: { mode: "per_user" } })).body.service.id as string;
    const link = await startAuthorize(workspace, serviceId, { key: workspace.adminKey });
    expect((await authorizeInBrowser(link.body.authorizationUrl, { user: "admin-upstream" })).callback!.status).toBe(200);

    // Bob, an admin member: a key of his own, his own upstream grant, and an app he let into the workspace.
    const email = `bob-${crypto.randomUUID().slice(0, 8)}@rayrun.test`;
    const added = await api(`/v1/workspaces/${workspace.ws}/members`, {
      method: "PUT",
      key: workspace.adminKey,
      body: { email, role: "admin" },
    });
    const bobId = added.body.id as string;
    const cookie = await devLogin(email);
    const asBob = { headers: { cookie, ...CONSOLE_HEADERS } };
    const made = await api(`/v1/workspaces/${workspace.ws}/keys`, {
      ...asBob,
      body: { name: "bob's agent", scopes: ["tools:call"], profileId: workspace.defaultProfileId },
    });
    expect(made.status).toBe(201);
    const bobKey = made.body.secret as string;
    const own = gatewayError(await whoami(bobKey)).details.authorizationUrl;
    expect((await authorizeInBrowser(own, { cookie, user: "bob-upstream" })).callback!.status).toBe(200);
    expect((await whoami(bobKey)).content).toEqual([{ type: "text", text: "upstream user: bob-upstream" }]);
    const app = await exchange(cookie, `${workspace.ws} ${workspace.defaultProfileId}`);
    expect((await (await connectMcp(app.token)).listTools()).tools.length).toBeGreaterThan(0);
    expect((await grantsOf(workspace)).map((grant) => grant.subject)).toContain(`user:${bobId}`);
    const revocationsBefore = (await lab.state()).revocations.length;

    const removed = await api(`/v1/workspaces/${workspace.ws}/members/${bobId}`, { method: "DELETE", key: workspace.adminKey });
    expect(removed.status).toBe(200);
    expect(removed.body).toEqual({
      id: bobId,
      email,
      role: "admin",
      revokedKeys: [made.body.key.id],
      upstreamGrants: 1,
      oauthGrants: 1,
      cancelledApprovals: [],
      sharedGrantsAuthorized: [],
      effectiveAt: expect.any(String),
    });
    expect(removed.headers.get("rayrun-effective-at")).toBe(removed.body.effectiveAt);

    // In force at once: his console session, his key and the app are refused; his upstream tokens are revoked where issued.
    const console = await api(`/v1/workspaces/${workspace.ws}/members`, asBob);
    expect(console.status).toBe(404);
    expect(console.body.error).toEqual({ code: "not_found", message: "Workspace not found" });
    const keyCall = await api("/mcp", {
      key: bobKey,
      body: { jsonrpc: "2.0", id: 1, method: "tools/list" },
      headers: { accept: "application/json, text/event-stream" },
    });
    expect(keyCall.status).toBe(401);
    const appCall = await api("/mcp", {
      key: app.token,
      body: { jsonrpc: "2.0", id: 1, method: "tools/list" },
      headers: { accept: "application/json, text/event-stream" },
    });
    expect(appCall.status).toBe(401);
    expect((await grantsOf(workspace)).map((grant) => grant.subject)).not.toContain(`user:${bobId}`);
    expect((await lab.state()).revocations.slice(revocationsBefore)).toEqual(
      expect.arrayContaining([{ hint: "access_token", known: true }]),
    );
    const members = await api(`/v1/workspaces/${workspace.ws}/members`, { key: workspace.adminKey });
    expect(members.body.members.map((member: { id: string }) => member.id)).not.toContain(bobId);
    // The admin's grant, which indexes the service, stays.
    expect(await grantsOf(workspace)).toHaveLength(1);
  });

  it("revokes the keys made with the member's keys too, however deep, and their upstream grants", async ({ expect }) => {
    const lab = await newLab();
    const workspace = await withOwner();
    const serviceId = (await connectOAuthService(workspace, lab, { oauth: { mode: "per_user" } })).body.service.id as string;
    const link = await startAuthorize(workspace, serviceId, { key: workspace.adminKey });
    expect((await authorizeInBrowser(link.body.authorizationUrl, { user: "admin-upstream" })).callback!.status).toBe(200);
    const email = `mallory-${crypto.randomUUID().slice(0, 8)}@rayrun.test`;
    const added = await api(`/v1/workspaces/${workspace.ws}/members`, {
      method: "PUT",
      key: workspace.adminKey,
      body: { email, role: "admin" },
    });
    const asMallory = { headers: { cookie: await devLogin(email), ...CONSOLE_HEADERS } };
    // Mallory's key makes a key, which makes another: neither was made by her, both with her standing.
    const own = await api(`/v1/workspaces/${workspace.ws}/keys`, { ...asMallory, body: { name: "own", scopes: ["admin"] } });
    const child = await api(`/v1/workspaces/${workspace.ws}/keys`, {
      key: own.body.secret,
      body: { name: "child", scopes: ["admin", "tools:call"], profileId: workspace.defaultProfileId },
    });
    const grandchild = await api(`/v1/workspaces/${workspace.ws}/keys`, {
      key: child.body.secret,
      body: { name: "grandchild", scopes: ["admin"] },
    });
    expect([own.status, child.status, grandchild.status]).toEqual([201, 201, 201]);
    // The child key's own upstream grant (`key:<id>`: no member made it).
    const childLink = gatewayError(await whoami(child.body.secret)).details.authorizationUrl;
    expect((await authorizeInBrowser(childLink, { user: "mallory-upstream" })).callback!.status).toBe(200);
    expect((await grantsOf(workspace)).map((grant) => grant.subject)).toContain(`key:${child.body.key.id}`);

    const removed = await api(`/v1/workspaces/${workspace.ws}/members/${added.body.id}`, { method: "DELETE", key: workspace.adminKey });
    expect(removed.status).toBe(200);
    expect(removed.body.revokedKeys).toEqual([own.body.key.id, child.body.key.id, grandchild.body.key.id].sort());
    expect(removed.body.upstreamGrants).toBe(1);
    for (const key of [own, child, grandchild]) {
      const refused = await api(`/v1/workspaces/${workspace.ws}/members`, { key: key.body.secret });
      expect(refused.status).toBe(401);
    }
    expect((await grantsOf(workspace)).map((grant) => grant.subject)).not.toContain(`key:${child.body.key.id}`);
    expect(await grantsOf(workspace)).toHaveLength(1);
  });

  it("ends the authorization links the member and their keys made: none can replace a shared grant after they leave", async ({
    expect,
  }) => {
    const [lab, otherLab] = [await newLab(), await newLab()];
    const workspace = await withOwner();
    const clientKey = await createKey(workspace, ["tools:call"], workspace.defaultProfileId);
    const services: string[] = [];
    for (const [upstream, slug] of [
      [lab, "lab"],
      [otherLab, "other"],
    ] as const) {
      const serviceId = (await connectOAuthService(workspace, upstream, { slug })).body.service.id as string;
      const link = await startAuthorize(workspace, serviceId, { key: workspace.adminKey });
      expect((await authorizeInBrowser(link.body.authorizationUrl, { user: "team-upstream" })).callback!.status).toBe(200);
      services.push(serviceId);
    }
    const email = `trent-${crypto.randomUUID().slice(0, 8)}@rayrun.test`;
    const added = await api(`/v1/workspaces/${workspace.ws}/members`, {
      method: "PUT",
      key: workspace.adminKey,
      body: { email, role: "admin" },
    });
    const cookie = await devLogin(email);
    // Links for the workspace's shared grants, made by the admin signed in and by a key of his, opened after he left.
    const bySession = await startAuthorize(workspace, services[0]!, { cookie });
    const made = await api(`/v1/workspaces/${workspace.ws}/keys`, {
      headers: { cookie, ...CONSOLE_HEADERS },
      body: { name: "k", scopes: ["admin"] },
    });
    const byKey = await startAuthorize(workspace, services[1]!, { key: made.body.secret });
    expect([bySession.status, byKey.status]).toEqual([200, 200]);

    const removed = await api(`/v1/workspaces/${workspace.ws}/members/${added.body.id}`, { method: "DELETE", key: workspace.adminKey });
    expect(removed.status).toBe(200);
    for (const [link, signedIn] of [
      [bySession.body.authorizationUrl, cookie],
      [byKey.body.authorizationUrl, undefined],
    ] as const) {
      const flow = await authorizeInBrowser(link, { cookie: signedIn, user: "trent-upstream" });
      expect(flow.callback).toBeUndefined();
      expect(flow.start.status).toBe(400);
      expect(JSON.parse(flow.startBody!).error).toEqual({
        code: "oauth_state_invalid",
        message: "This authorization link or state is unknown or was already used",
        details: { reason: "unknown" },
      });
    }
    const client = await connectMcp(clientKey);
    try {
      for (const name of ["lab__whoami", "other__whoami"]) {
        expect((await client.callTool({ name, arguments: {} })).content).toEqual([{ type: "text", text: "upstream user: team-upstream" }]);
      }
    } finally {
      await client.close();
    }
  });

  it("can be retried when it fails part-way: the member stays until everything they hold is revoked", async ({ expect }) => {
    const workspace = await withOwner();
    const email = `peggy-${crypto.randomUUID().slice(0, 8)}@rayrun.test`;
    const added = await api(`/v1/workspaces/${workspace.ws}/members`, {
      method: "PUT",
      key: workspace.adminKey,
      body: { email, role: "admin" },
    });
    const app = await exchange(await devLogin(email), `${workspace.ws} ${workspace.defaultProfileId}`);
    // The OAuth grants' store fails while the removal lists them (an entry it cannot read).
    const broken = `grant:${workspace.ws}:unreadable`;
    await env.OAUTH_KV.put(broken, "{");
    const failed = await api(`/v1/workspaces/${workspace.ws}/members/${added.body.id}`, { method: "DELETE", key: workspace.adminKey });
    expect(failed.status).toBe(500);
    await env.OAUTH_KV.delete(broken);

    const removed = await api(`/v1/workspaces/${workspace.ws}/members/${added.body.id}`, { method: "DELETE", key: workspace.adminKey });
    expect(removed.status).toBe(200);
    expect(removed.body).toMatchObject({ id: added.body.id, oauthGrants: 1 });
    const appCall = await api("/mcp", {
      key: app.token,
      body: { jsonrpc: "2.0", id: 1, method: "tools/list" },
      headers: { accept: "application/json, text/event-stream" },
    });
    expect(appCall.status).toBe(401);
  });

  it("answers 404 for someone who is no member, and needs the admin scope", async ({ expect }) => {
    const workspace = await withOwner();
    const missing = await api(`/v1/workspaces/${workspace.ws}/members/usr_nobody`, { method: "DELETE", key: workspace.adminKey });
    expect(missing.status).toBe(404);
    expect(missing.body.error).toEqual({ code: "not_found", message: "Member not found" });
    const email = `eve-${crypto.randomUUID().slice(0, 8)}@rayrun.test`;
    const eve = await api(`/v1/workspaces/${workspace.ws}/members`, {
      method: "PUT",
      key: workspace.adminKey,
      body: { email, role: "editor" },
    });
    const asEve = { headers: { cookie: await devLogin(email), ...CONSOLE_HEADERS } };
    const refused = await api(`/v1/workspaces/${workspace.ws}/members/${eve.body.id}`, { method: "DELETE", ...asEve });
    expect(refused.status).toBe(403);
    expect(refused.body.error).toMatchObject({ code: "forbidden", details: { required: "admin" } });
    const members = await api(`/v1/workspaces/${workspace.ws}/members`, { key: workspace.adminKey });
    expect(members.body.members.map((member: { id: string }) => member.id)).toContain(eve.body.id);
  });
});
