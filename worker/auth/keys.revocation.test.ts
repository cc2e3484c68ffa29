import { describe, it } from "vitest";
import { api, connectMcp, createWorkspace, gatewayError, makeKey, type TestWorkspace } from "../../test/helpers.ts";
import { EFFECTIVE_AT_HEADER } from "../leases/change-window.ts";
import { authorizeInBrowser, connectOAuthService, grantsOf, newLab, startAuthorize } from "../upstream-auth/upstream-oauth.fixtures.ts";

const listTools = (secret: string) =>
  api("/mcp", {
    key: secret,
    body: { jsonrpc: "2.0", id: 1, method: "tools/list" },
    headers: { accept: "application/json, text/event-stream" },
  });

/** What a request with the key gets: the REST answer and the /mcp answer, headers by name. */
async function refusalsOf(workspace: TestWorkspace, secret: string) {
  const rest = await api(`/v1/workspaces/${workspace.ws}/tools`, { key: secret });
  const mcp = await listTools(secret);
  return {
    rest: { status: rest.status, body: rest.body },
    mcp: { status: mcp.status, body: mcp.body, challenge: mcp.headers.get("www-authenticate") },
  };
}

describe("revoking a key", () => {
  it("revokes the keys made with it, however deep, each refused as a revoked key", async ({ expect }) => {
    const workspace = await createWorkspace();
    // A makes B, which makes C; D is made by the workspace's admin key, beside A.
    const a = await makeKey(workspace, workspace.adminKey, "a", ["admin"]);
    const b = await makeKey(workspace, a.secret, "b", ["admin", "tools:call"]);
    const c = await makeKey(workspace, b.secret, "c", ["tools:call"]);
    const d = await makeKey(workspace, workspace.adminKey, "d", ["tools:call"]);
    for (const key of [b, c, d]) expect((await listTools(key.secret)).status).toBe(200);

    const revoked = await api(`/v1/workspaces/${workspace.ws}/keys/${a.id}`, { method: "DELETE", key: workspace.adminKey });
    expect(revoked.status).toBe(200);
    expect(revoked.body).toMatchObject({ id: a.id, name: "a", revokedAt: expect.any(String) });

    // B and C are refused exactly as A, a revoked key, is: on the REST API and on /mcp.
    const refusal = await refusalsOf(workspace, a.secret);
    expect(refusal.rest.status).toBe(401);
    expect(refusal.rest.body.error.code).toBe("unauthorized");
    expect(refusal.mcp.status).toBe(401);
    for (const key of [b, c]) expect(await refusalsOf(workspace, key.secret)).toEqual(refusal);
    // Nor can B make another key.
    const more = await api(`/v1/workspaces/${workspace.ws}/keys`, { key: b.secret, body: { name: "e", scopes: ["admin"] } });
    expect(more.status).toBe(401);
    expect(more.body.error.code).toBe("unauthorized");
    expect(revoked.body.revokedKeys).toEqual([b.id, c.id].sort());
    expect(revoked.body.effectiveAt).toBe(revoked.headers.get(EFFECTIVE_AT_HEADER));
    // D was not made with A, nor is the admin key.
    expect((await listTools(d.secret)).status).toBe(200);
    const listed = await api(`/v1/workspaces/${workspace.ws}/keys`, { key: workspace.adminKey });
    expect(listed.status).toBe(200);
    const revokedIds = listed.body.keys
      .filter((key: { revokedAt: string | null }) => key.revokedAt !== null)
      .map((key: { id: string }) => key.id);
    expect(revokedIds.sort()).toEqual([a.id, b.id, c.id].sort());
  });

  it("revokes only below the key it is given, and again revokes what a key made that is still active", async ({ expect }) => {
    const workspace = await createWorkspace();
    const a = await makeKey(workspace, workspace.adminKey, "a", ["admin"]);
    const b = await makeKey(workspace, a.secret, "b", ["admin"]);
    const c = await makeKey(workspace, b.secret, "c", ["admin"]);
    const middle = await api(`/v1/workspaces/${workspace.ws}/keys/${b.id}`, { method: "DELETE", key: workspace.adminKey });
    expect(middle.status).toBe(200);
    expect(middle.body.revokedKeys).toEqual([c.id]);
    expect((await api(`/v1/workspaces/${workspace.ws}/tools`, { key: a.secret })).status).toBe(200);
    expect((await api(`/v1/workspaces/${workspace.ws}/tools`, { key: c.secret })).status).toBe(401);

    // A key revoked before this release left the keys it made active: revoking it again revokes them.
    const old = await makeKey(workspace, a.secret, "old", ["admin"]);
    const oldChild = await makeKey(workspace, old.secret, "old child", ["admin"]);
    await api(`/v1/workspaces/${workspace.ws}/keys/${old.id}`, { method: "DELETE", key: workspace.adminKey });
    const again = await api(`/v1/workspaces/${workspace.ws}/keys/${old.id}`, { method: "DELETE", key: workspace.adminKey });
    expect(again.status).toBe(200);
    expect(again.body.revokedKeys).toEqual([]);
    expect((await api(`/v1/workspaces/${workspace.ws}/tools`, { key: oldChild.secret })).status).toBe(401);

    const missing = await api(`/v1/workspaces/${workspace.ws}/keys/key_nothing`, { method: "DELETE", key: workspace.adminKey });
    expect(missing.status).toBe(404);
    expect(missing.body.error).toEqual({ code: "not_found", message: "Key not found" });
  });

  it("leaves no key made while it runs: a key made at once with a key being revoked is revoked too, or never made", async ({ expect }) => {
    for (let round = 0; round < 4; round++) {
      const workspace = await createWorkspace();
      const a = await makeKey(workspace, workspace.adminKey, "a", ["admin"]);
      const b = await makeKey(workspace, a.secret, "b", ["admin"]);
      const [revoked, made] = await Promise.all([
        api(`/v1/workspaces/${workspace.ws}/keys/${a.id}`, { method: "DELETE", key: workspace.adminKey }),
        api(`/v1/workspaces/${workspace.ws}/keys`, { key: b.secret, body: { name: "racing", scopes: ["admin"] } }),
      ]);
      expect(revoked.status).toBe(200);
      if (made.status === 201) {
        expect(revoked.body.revokedKeys).toContain(made.body.key.id);
        expect((await api(`/v1/workspaces/${workspace.ws}/tools`, { key: made.body.secret })).status).toBe(401);
      } else {
        expect(made.status).toBe(401);
        expect(made.body.error.code).toBe("unauthorized");
      }
      const active = (await api(`/v1/workspaces/${workspace.ws}/keys`, { key: workspace.adminKey })).body.keys.filter(
        (key: { revokedAt: string | null }) => key.revokedAt === null,
      );
      expect(active).toHaveLength(1);
    }
  });

  it("revokes the upstream grants of the keys made with it", async ({ expect }) => {
    const lab = await newLab();
    const workspace = await createWorkspace();
    const serviceId = (await connectOAuthService(workspace, lab, { oauth: { mode: "per_user" } })).body.service.id as string;
    const link = await startAuthorize(workspace, serviceId, { key: workspace.adminKey });
    expect((await authorizeInBrowser(link.body.authorizationUrl, { user: "admin-upstream" })).callback!.status).toBe(200);
    const a = await makeKey(workspace, workspace.adminKey, "a", ["admin"]);
    const b = await makeKey(workspace, a.secret, "b", ["tools:call"]);
    const client = await connectMcp(b.secret);
    let own: string;
    try {
      own = gatewayError(await client.callTool({ name: "lab__whoami", arguments: {} })).details.authorizationUrl;
    } finally {
      await client.close();
    }
    expect((await authorizeInBrowser(own, { user: "b-upstream" })).callback!.status).toBe(200);
    expect((await grantsOf(workspace)).map((grant) => grant.subject)).toContain(`key:${b.id}`);

    const revoked = await api(`/v1/workspaces/${workspace.ws}/keys/${a.id}`, { method: "DELETE", key: workspace.adminKey });
    expect(revoked.status).toBe(200);
    expect(revoked.body.revokedKeys).toEqual([b.id]);
    expect((await grantsOf(workspace)).map((grant) => grant.subject)).not.toContain(`key:${b.id}`);
    expect(await grantsOf(workspace)).toHaveLength(1);
  });
});

describe("rotating a key", () => {
  it("gives it a new secret and keeps the rest: the old secret is refused once the answer comes, the keys made with it still work", async ({
    expect,
  }) => {
    const workspace = await createWorkspace();
    const a = await makeKey(workspace, workspace.adminKey, "a", ["admin", "tools:call"]);
    const b = await makeKey(workspace, a.secret, "b", ["tools:call"]);
    const before = (await api(`/v1/workspaces/${workspace.ws}/keys`, { key: workspace.adminKey })).body.keys.find(
      (key: { id: string }) => key.id === a.id,
    );

    const rotated = await api(`/v1/workspaces/${workspace.ws}/keys/${a.id}/rotate`, { method: "POST", key: a.secret });
    expect(rotated.status).toBe(200);
    expect(rotated.body.secret).toMatch(/^rr_/);
    expect(rotated.body.secret).not.toBe(a.secret);
    expect(rotated.body.key).toEqual({ ...before, prefix: rotated.body.secret.slice(0, 10) });
    expect(rotated.body.effectiveAt).toBe(rotated.headers.get(EFFECTIVE_AT_HEADER));

    const old = await refusalsOf(workspace, a.secret);
    expect(old.rest.status).toBe(401);
    expect(old.rest.body.error.code).toBe("unauthorized");
    expect(old.mcp.status).toBe(401);
    expect((await listTools(rotated.body.secret)).status).toBe(200);
    expect((await api(`/v1/workspaces/${workspace.ws}/keys`, { key: rotated.body.secret })).status).toBe(200);
    expect((await listTools(b.secret)).status).toBe(200);
  });

  it("lets a workspace without an admin member replace the secret of the key it was created with", async ({ expect }) => {
    const workspace = await createWorkspace();
    const root = (await api(`/v1/workspaces/${workspace.ws}/keys`, { key: workspace.adminKey })).body.keys[0].id as string;
    expect((await api(`/v1/workspaces/${workspace.ws}/keys/${root}`, { method: "DELETE", key: workspace.adminKey })).status).toBe(409);
    const rotated = await api(`/v1/workspaces/${workspace.ws}/keys/${root}/rotate`, { method: "POST", key: workspace.adminKey });
    expect(rotated.status).toBe(200);
    expect((await api(`/v1/workspaces/${workspace.ws}/keys`, { key: workspace.adminKey })).status).toBe(401);
    expect((await api(`/v1/workspaces/${workspace.ws}/keys`, { key: rotated.body.secret })).status).toBe(200);
  });

  it("refuses a revoked key (409 key_revoked), an unknown or another workspace's key (404) and a key without admin (403)", async ({
    expect,
  }) => {
    const workspace = await createWorkspace();
    const other = await createWorkspace();
    const gone = await makeKey(workspace, workspace.adminKey, "gone", ["hooks:read"]);
    const reader = await makeKey(workspace, workspace.adminKey, "reader", ["hooks:read"]);
    expect((await api(`/v1/workspaces/${workspace.ws}/keys/${gone.id}`, { method: "DELETE", key: workspace.adminKey })).status).toBe(200);
    const rotate = (keyId: string, key = workspace.adminKey, ws = workspace.ws) =>
      api(`/v1/workspaces/${ws}/keys/${keyId}/rotate`, { method: "POST", key });

    const revoked = await rotate(gone.id);
    expect(revoked.status).toBe(409);
    expect(revoked.body.error).toEqual({
      code: "key_revoked",
      message: `${gone.id} is revoked: make a new key instead`,
      details: { keyId: gone.id },
    });
    const unknown = await rotate("key_nope");
    expect(unknown.status).toBe(404);
    expect(unknown.body.error.code).toBe("not_found");
    const across = await rotate(reader.id, other.adminKey, other.ws);
    expect(across.status).toBe(404);
    const forbidden = await rotate(reader.id, reader.secret);
    expect(forbidden.status).toBe(403);
    expect(forbidden.body.error).toMatchObject({ code: "forbidden", details: { required: "admin" } });
    // Nothing changed: the reader's secret still works.
    expect((await api(`/v1/workspaces/${workspace.ws}/tools`, { key: reader.secret })).status).toBe(200);
  });
});
