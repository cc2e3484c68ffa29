/**
 * How many keys and members one workspace holds: both lists are returned whole, every isolate may cache each key,
 * and every added email makes a user row, so both are bounded, in the write itself.
 */
import { env } from "cloudflare:test";
import { describe, it } from "vitest";
import { api, createWorkspace, newTag } from "../../test/helpers.ts";
import { MAX_ACTIVE_KEYS, MAX_LISTED_REVOKED_KEYS } from "../auth/keys.store.ts";
import { MAX_MEMBERS } from "../auth/users.store.ts";

const STAMP = "strftime('%Y-%m-%dT%H:%M:%fZ', 'now')";
const SERIES = "WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < ?2)";

/** `count` unrevoked keys written straight to D1 (only their number matters here), with ids `key_fill_<tag>_<i>`. */
async function fillKeys(workspace: string, count: number, tag: string): Promise<void> {
  await env.DB.prepare(
    `${SERIES} INSERT INTO api_keys (id, workspace_id, name, key_hash, prefix, scopes, created_by, created_at)
     SELECT 'key_fill_' || ?3 || '_' || i, ?1, 'fill ' || i, 'hash_' || ?3 || '_' || i, 'rr_fill', '["hooks:read"]', 'bootstrap', ${STAMP} FROM s`,
  )
    .bind(workspace, count, tag)
    .run();
}

/** `count` revoked keys, key `key_gone_<tag>_<i>` revoked i seconds ago (so 1 is the newest revocation). */
async function fillRevokedKeys(workspace: string, count: number, tag: string): Promise<void> {
  await env.DB.prepare(
    `${SERIES} INSERT INTO api_keys (id, workspace_id, name, key_hash, prefix, scopes, created_by, created_at, revoked_at)
     SELECT 'key_gone_' || ?3 || '_' || i, ?1, 'gone ' || i, 'hash_gone_' || ?3 || '_' || i, 'rr_gone', '["hooks:read"]', 'bootstrap',
            strftime('%Y-%m-%dT%H:%M:%fZ', 'now', '-1 day'), strftime('%Y-%m-%dT%H:%M:%fZ', 'now', '-' || i || ' seconds') FROM s`,
  )
    .bind(workspace, count, tag)
    .run();
}

/** `count` viewer members (users `fill-<i>-<tag>@rayrun.test`) written straight to D1, with ids `usr_fill_<tag>_<i>`. */
async function fillMembers(workspace: string, count: number, tag: string): Promise<void> {
  await env.DB.batch([
    env.DB.prepare(
      `${SERIES} INSERT INTO users (id, email, created_at) SELECT 'usr_fill_' || ?3 || '_' || i, 'fill-' || i || '-' || ?3 || '@rayrun.test', ${STAMP} FROM s`,
    ).bind(workspace, count, tag),
    env.DB.prepare(
      `${SERIES} INSERT INTO memberships (workspace_id, user_id, role, created_at) SELECT ?1, 'usr_fill_' || ?3 || '_' || i, 'viewer', ${STAMP} FROM s`,
    ).bind(workspace, count, tag),
  ]);
}

describe("a workspace's keys and members", () => {
  it(`holds at most ${MAX_ACTIVE_KEYS} unrevoked keys: the next is refused 413 too_many_keys until one is revoked`, async ({ expect }) => {
    const workspace = await createWorkspace();
    const tag = newTag();
    // With the workspace's first admin key, exactly the bound.
    await fillKeys(workspace.ws, MAX_ACTIVE_KEYS - 1, tag);
    const create = () =>
      api(`/v1/workspaces/${workspace.ws}/keys`, { key: workspace.adminKey, body: { name: "one more", scopes: ["hooks:read"] } });

    const refused = await create();
    expect(refused.status).toBe(413);
    expect(refused.body.error).toEqual({
      code: "too_many_keys",
      message: `A workspace holds at most ${MAX_ACTIVE_KEYS} unrevoked API keys; revoke one first`,
      details: { limit: MAX_ACTIVE_KEYS },
    });

    // Revoked keys do not count.
    const revoked = await api(`/v1/workspaces/${workspace.ws}/keys/key_fill_${tag}_1`, { method: "DELETE", key: workspace.adminKey });
    expect(revoked.status).toBe(200);
    expect((await create()).status).toBe(201);
    expect((await create()).body.error.code).toBe("too_many_keys");
  });

  it(`lists every unrevoked key and the ${MAX_LISTED_REVOKED_KEYS} most recently revoked, saying when older ones are left out`, async ({
    expect,
  }) => {
    const workspace = await createWorkspace();
    const tag = newTag();
    const list = async () => (await api(`/v1/workspaces/${workspace.ws}/keys`, { key: workspace.adminKey })).body;
    await fillRevokedKeys(workspace.ws, MAX_LISTED_REVOKED_KEYS, tag);
    expect((await list()).olderRevokedKeysOmitted).toBe(false);

    await fillRevokedKeys(workspace.ws, MAX_LISTED_REVOKED_KEYS + 500, `${tag}b`);
    const caller = await api(`/v1/workspaces/${workspace.ws}/keys`, {
      key: workspace.adminKey,
      body: { name: "new", scopes: ["hooks:read"] },
    });
    expect(caller.status).toBe(201);
    const listed = await list();
    expect(listed.olderRevokedKeysOmitted).toBe(true);
    const ids: string[] = listed.keys.map((key: { id: string }) => key.id);
    expect(ids).toHaveLength(2 + MAX_LISTED_REVOKED_KEYS);
    // Both unrevoked keys, oldest first as ever (the fill keys were made a day ago), then the newest revocations:
    // of each fill the first 500, revoked in the same seconds.
    expect(ids.slice(-2)).toEqual([expect.stringMatching(/^key_/), caller.body.key.id]);
    const revoked = listed.keys.filter((key: { revokedAt: string | null }) => key.revokedAt !== null);
    expect(revoked).toHaveLength(MAX_LISTED_REVOKED_KEYS);
    expect(Math.min(...revoked.map((key: { revokedAt: string }) => Date.parse(key.revokedAt)))).toBeGreaterThan(Date.now() - 505_000);
    expect(ids).toContain(`key_gone_${tag}_1`);
    expect(ids).not.toContain(`key_gone_${tag}b_${MAX_LISTED_REVOKED_KEYS + 500}`);

    // The actors list names the same keys.
    const actors = await api(`/v1/workspaces/${workspace.ws}/actors`, { key: workspace.adminKey });
    expect(actors.body.actors.filter((actor: { kind: string }) => actor.kind === "key")).toHaveLength(2 + MAX_LISTED_REVOKED_KEYS);
  });

  it("lets only one of two key creations racing for the last place in", async ({ expect }) => {
    const workspace = await createWorkspace();
    await fillKeys(workspace.ws, MAX_ACTIVE_KEYS - 2, newTag());
    const raced = await Promise.all(
      ["a", "b", "c"].map((name) =>
        api(`/v1/workspaces/${workspace.ws}/keys`, { key: workspace.adminKey, body: { name, scopes: ["hooks:read"] } }),
      ),
    );
    expect(raced.map((res) => res.status).sort()).toEqual([201, 413, 413]);
    const active = await env.DB.prepare("SELECT COUNT(*) AS active FROM api_keys WHERE workspace_id = ? AND revoked_at IS NULL")
      .bind(workspace.ws)
      .first("active");
    expect(active).toBe(MAX_ACTIVE_KEYS);
  });

  it(`holds at most ${MAX_MEMBERS} members: a new one is refused 413 too_many_members, with no user made; a member's role still changes`, async ({
    expect,
  }) => {
    const workspace = await createWorkspace();
    const tag = newTag();
    await fillMembers(workspace.ws, MAX_MEMBERS, tag);
    const put = (email: string, role: string) =>
      api(`/v1/workspaces/${workspace.ws}/members`, { method: "PUT", key: workspace.adminKey, body: { email, role } });

    const newcomer = `new-${tag}@rayrun.test`;
    const refused = await put(newcomer, "viewer");
    expect(refused.status).toBe(413);
    expect(refused.body.error).toEqual({
      code: "too_many_members",
      message: `A workspace holds at most ${MAX_MEMBERS} members; remove one first`,
      details: { limit: MAX_MEMBERS },
    });
    expect(await env.DB.prepare("SELECT id FROM users WHERE email = ?").bind(newcomer).first()).toBeNull();

    // An existing member is never refused for the bound: their role changes (email matched in any case).
    const changed = await put(`FILL-7-${tag}@rayrun.test`, "editor");
    expect(changed.status).toBe(200);
    expect(changed.body).toMatchObject({ id: `usr_fill_${tag}_7`, role: "editor" });

    const removed = await api(`/v1/workspaces/${workspace.ws}/members/usr_fill_${tag}_1`, { method: "DELETE", key: workspace.adminKey });
    expect(removed.status).toBe(200);
    expect((await put(newcomer, "viewer")).status).toBe(200);
  });
});
