import { describe, it } from "vitest";
import { api, CONSOLE_HEADERS, createWorkspace, devLogin, makeKey, newTag, type TestWorkspace } from "../../test/helpers.ts";

const emailOf = (name: string) => `${name}-${newTag()}@rayrun.test`;

async function addMember(workspace: TestWorkspace, email: string, role: "admin" | "editor" | "viewer") {
  const added = await api(`/v1/workspaces/${workspace.ws}/members`, { method: "PUT", key: workspace.adminKey, body: { email, role } });
  if (added.status !== 200) throw new Error(`member: ${added.status} ${JSON.stringify(added.body)}`);
  return { id: added.body.id as string, email, session: { cookie: await devLogin(email), ...CONSOLE_HEADERS } };
}

async function rolesOf(workspace: TestWorkspace): Promise<Record<string, string>> {
  const listed = await api(`/v1/workspaces/${workspace.ws}/members`, { key: workspace.adminKey });
  return Object.fromEntries(listed.body.members.map((member: { id: string; role: string }) => [member.id, member.role]));
}

const lastAdminError = (email: string, userId: string, change: "removed" | "demoted") => ({
  code: "last_admin",
  message: `${email} is the workspace's last admin and cannot be ${change}: make another member admin first`,
  details: { userId },
});

describe("the last admin member", () => {
  it("cannot be removed or demoted, and a refused removal revokes nothing", async ({ expect }) => {
    const workspace = await createWorkspace();
    const owner = await addMember(workspace, emailOf("owner"), "admin");
    const ownKey = await api(`/v1/workspaces/${workspace.ws}/keys`, { headers: owner.session, body: { name: "own", scopes: ["admin"] } });
    expect(ownKey.status).toBe(201);

    const removal = await api(`/v1/workspaces/${workspace.ws}/members/${owner.id}`, { method: "DELETE", key: workspace.adminKey });
    expect(removal.status).toBe(409);
    expect(removal.body).toEqual({ error: lastAdminError(owner.email, owner.id, "removed") });
    // Removing oneself is no way around it.
    const ownRemoval = await api(`/v1/workspaces/${workspace.ws}/members/${owner.id}`, { method: "DELETE", headers: owner.session });
    expect(ownRemoval.status).toBe(409);
    expect(ownRemoval.body.error.code).toBe("last_admin");

    for (const role of ["editor", "viewer"]) {
      const demotion = await api(`/v1/workspaces/${workspace.ws}/members`, {
        method: "PUT",
        headers: owner.session,
        body: { email: owner.email.toUpperCase(), role },
      });
      expect(demotion.status).toBe(409);
      expect(demotion.body).toEqual({ error: lastAdminError(owner.email, owner.id, "demoted") });
    }
    // Saying again that they are admin is no change, and allowed.
    const same = await api(`/v1/workspaces/${workspace.ws}/members`, {
      method: "PUT",
      key: workspace.adminKey,
      body: { email: owner.email, role: "admin" },
    });
    expect(same.status).toBe(200);

    // Still an admin member, with the console and the key they made.
    expect(await rolesOf(workspace)).toEqual({ [owner.id]: "admin" });
    expect((await api(`/v1/workspaces/${workspace.ws}/members`, { headers: owner.session })).status).toBe(200);
    expect((await api(`/v1/workspaces/${workspace.ws}/members`, { key: ownKey.body.secret })).status).toBe(200);
  });

  it("can go once another admin remains; editors and viewers go whatever the admins", async ({ expect }) => {
    // No admin member at all (keys only): other members can be removed.
    const workspace = await createWorkspace();
    const viewer = await addMember(workspace, emailOf("viewer"), "viewer");
    const removedViewer = await api(`/v1/workspaces/${workspace.ws}/members/${viewer.id}`, { method: "DELETE", key: workspace.adminKey });
    expect(removedViewer.status).toBe(200);

    const [first, second] = [await addMember(workspace, emailOf("first"), "admin"), await addMember(workspace, emailOf("second"), "admin")];
    const editor = await addMember(workspace, emailOf("editor"), "editor");
    // Two admins: one can step down (the other remains), and then the other is the last.
    const demoted = await api(`/v1/workspaces/${workspace.ws}/members`, {
      method: "PUT",
      headers: second.session,
      body: { email: first.email, role: "editor" },
    });
    expect(demoted.status).toBe(200);
    expect(demoted.body).toEqual({ id: first.id, email: first.email, role: "editor" });
    const lastOne = await api(`/v1/workspaces/${workspace.ws}/members/${second.id}`, { method: "DELETE", key: workspace.adminKey });
    expect(lastOne.status).toBe(409);
    expect(lastOne.body.error).toEqual(lastAdminError(second.email, second.id, "removed"));

    // Promoted again, the first admin can remove the second.
    await addMember(workspace, first.email, "admin");
    const removed = await api(`/v1/workspaces/${workspace.ws}/members/${second.id}`, { method: "DELETE", headers: first.session });
    expect(removed.status).toBe(200);
    expect(removed.body).toMatchObject({ id: second.id, role: "admin" });
    const removedEditor = await api(`/v1/workspaces/${workspace.ws}/members/${editor.id}`, { method: "DELETE", headers: first.session });
    expect(removedEditor.status).toBe(200);
    expect(await rolesOf(workspace)).toEqual({ [first.id]: "admin" });
  });

  it("holds when two admins remove each other at once: one goes, the other stays admin", async ({ expect }) => {
    for (let round = 0; round < 4; round++) {
      const workspace = await createWorkspace();
      const [a, b] = [await addMember(workspace, emailOf("a"), "admin"), await addMember(workspace, emailOf("b"), "admin")];
      const answers = await Promise.all([
        api(`/v1/workspaces/${workspace.ws}/members/${b.id}`, { method: "DELETE", headers: a.session }),
        api(`/v1/workspaces/${workspace.ws}/members/${a.id}`, { method: "DELETE", headers: b.session }),
      ]);
      const statuses = answers.map((answer) => answer.status);
      expect(statuses.filter((status) => status === 200)).toHaveLength(1);
      // The other was refused as the last admin, or (when the first removal had already ended) its session has no
      // workspace any more.
      const refused = answers.find((answer) => answer.status !== 200)!;
      expect([
        { status: 409, code: "last_admin" },
        { status: 404, code: "not_found" },
      ]).toContainEqual({ status: refused.status, code: refused.body.error.code });
      const roles = Object.values(await rolesOf(workspace));
      expect(roles).toEqual(["admin"]);
    }
  });

  it("holds when two admins demote each other at once, and when one is demoted while the other is removed", async ({ expect }) => {
    for (let round = 0; round < 4; round++) {
      const workspace = await createWorkspace();
      const [a, b] = [await addMember(workspace, emailOf("a"), "admin"), await addMember(workspace, emailOf("b"), "admin")];
      const answers = await Promise.all([
        api(`/v1/workspaces/${workspace.ws}/members`, { method: "PUT", key: workspace.adminKey, body: { email: a.email, role: "viewer" } }),
        api(`/v1/workspaces/${workspace.ws}/members`, { method: "PUT", key: workspace.adminKey, body: { email: b.email, role: "viewer" } }),
      ]);
      expect(answers.map((answer) => answer.status).sort()).toEqual([200, 409]);
      expect(Object.values(await rolesOf(workspace)).sort()).toEqual(["admin", "viewer"]);

      const other = await createWorkspace();
      const [c, d] = [await addMember(other, emailOf("c"), "admin"), await addMember(other, emailOf("d"), "admin")];
      const mixed = await Promise.all([
        api(`/v1/workspaces/${other.ws}/members/${c.id}`, { method: "DELETE", key: other.adminKey }),
        api(`/v1/workspaces/${other.ws}/members`, { method: "PUT", key: other.adminKey, body: { email: d.email, role: "editor" } }),
      ]);
      expect(mixed.map((answer) => answer.status).sort()).toEqual([200, 409]);
      expect(Object.values(await rolesOf(other))).toContain("admin");
    }
  });
});

/** The id of the admin key the workspace was made with (its only key at first). */
async function rootKeyId(workspace: TestWorkspace): Promise<string> {
  const listed = await api(`/v1/workspaces/${workspace.ws}/keys`, { key: workspace.adminKey });
  return listed.body.keys[0].id as string;
}

const lastAdminKeyError = (keyId: string) => ({
  code: "last_admin",
  message: `${keyId} (or a key made with it) is the workspace's last admin key and the workspace has no admin member: make another admin key, or add an admin member, first`,
  details: { keyId },
});

describe("the last admin key of a workspace without an admin member", () => {
  it("cannot be revoked, with or without the keys made with it, and the refusal revokes nothing", async ({ expect }) => {
    const workspace = await createWorkspace();
    const root = await rootKeyId(workspace);
    const caller = await makeKey(workspace, workspace.adminKey, "caller", ["tools:call"]);
    const second = await makeKey(workspace, workspace.adminKey, "second admin", ["admin"]);

    // Revoking the root key would revoke the second admin key too (it was made with it): nobody could administer.
    const refused = await api(`/v1/workspaces/${workspace.ws}/keys/${root}`, { method: "DELETE", key: workspace.adminKey });
    expect(refused.status).toBe(409);
    expect(refused.body.error).toEqual(lastAdminKeyError(root));
    const listed = await api(`/v1/workspaces/${workspace.ws}/keys`, { key: workspace.adminKey });
    expect(listed.status).toBe(200);
    expect(listed.body.keys.map((key: { revokedAt: string | null }) => key.revokedAt)).toEqual([null, null, null]);
    // 403 for want of hooks:read, not 401: the key is still good.
    expect((await api(`/v1/workspaces/${workspace.ws}/tools`, { key: caller.secret })).status).toBe(403);
    expect((await api(`/v1/workspaces/${workspace.ws}/keys`, { key: second.secret })).status).toBe(200);
    // Whoever asks: the second admin key is refused the same.
    const bySecond = await api(`/v1/workspaces/${workspace.ws}/keys/${root}`, { method: "DELETE", key: second.secret });
    expect(bySecond.status).toBe(409);
    expect(bySecond.body.error).toEqual(lastAdminKeyError(root));

    // Another admin key that stays (the root key) lets a key with admin go, even by its own hand; a key without admin
    // never counted.
    const gone = await api(`/v1/workspaces/${workspace.ws}/keys/${second.id}`, { method: "DELETE", key: second.secret });
    expect(gone.status).toBe(200);
    expect((await api(`/v1/workspaces/${workspace.ws}/keys/${caller.id}`, { method: "DELETE", key: workspace.adminKey })).status).toBe(200);
    const alone = await api(`/v1/workspaces/${workspace.ws}/keys/${root}`, { method: "DELETE", key: workspace.adminKey });
    expect(alone.status).toBe(409);
    expect(alone.body.error).toEqual(lastAdminKeyError(root));
    expect((await api(`/v1/workspaces/${workspace.ws}/keys`, { key: workspace.adminKey })).status).toBe(200);
  });

  it("can be revoked once the workspace has an admin member, who keeps it administrable", async ({ expect }) => {
    const workspace = await createWorkspace();
    const root = await rootKeyId(workspace);
    const owner = await addMember(workspace, emailOf("owner"), "admin");
    const revoked = await api(`/v1/workspaces/${workspace.ws}/keys/${root}`, { method: "DELETE", key: workspace.adminKey });
    expect(revoked.status).toBe(200);
    expect(revoked.body).toMatchObject({ id: root, revokedAt: expect.any(String) });
    expect((await api(`/v1/workspaces/${workspace.ws}/keys`, { key: workspace.adminKey })).status).toBe(401);
    expect((await api(`/v1/workspaces/${workspace.ws}/keys`, { headers: owner.session })).status).toBe(200);
  });
});
