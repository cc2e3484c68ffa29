/**
 * How many keys and members one workspace holds: both lists are returned whole, every isolate may cache each key,
 * and every added email makes a user row, so both are bounded, in the write itself.
 */
import { env } from "cloudflare:test";
import { describe, it } from "vitest";
import { api, createWorkspace, newTag } from "../../test/helpers.ts";
import { MAX_ACTIVE_KEYS } from "../auth/keys.store.ts";
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
