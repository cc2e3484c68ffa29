import { env } from "cloudflare:test";
import { describe, it } from "vitest";
import { api, connectMcp, createKey, createWorkspace, demoGateway, demoUpstreamUrl, newTag, upstreamReceived } from "../../test/helpers.ts";
import { MAX_TOOL_POLICIES } from "./policy.store.ts";
import { MAX_PROFILES } from "./profiles.store.ts";

type Gateway = Awaited<ReturnType<typeof demoGateway>>;

const profiles = (gateway: Gateway) => `/v1/workspaces/${gateway.ws}/profiles`;
const matrix = (gateway: Gateway, query = "", key = gateway.adminKey) => api(`/v1/workspaces/${gateway.ws}/policy/matrix${query}`, { key });
const setMode = (gateway: Gateway, tool: string, profileId: string, mode: string) =>
  api(`/v1/workspaces/${gateway.ws}/tools/${gateway.toolUid(tool)}/policy`, {
    method: "PUT",
    key: gateway.adminKey,
    body: { profileId, mode },
  });

interface Cell {
  profileId: string;
  mode: string;
  override: string | null;
  floor: { hint: string; mode: string } | null;
}
interface Row {
  publicName: string;
  status: string;
  modes: Cell[];
}

/** The matrix as `{ tool: { profile name: mode } }`, for reading in an assertion. */
async function modesByName(gateway: Gateway, query = ""): Promise<Record<string, Record<string, string>>> {
  const page = await matrix(gateway, query);
  if (page.status !== 200) throw new Error(`matrix: ${page.status} ${JSON.stringify(page.body)}`);
  const names = new Map((page.body.profiles as { id: string; name: string }[]).map((profile) => [profile.id, profile.name]));
  return Object.fromEntries(
    (page.body.tools as Row[]).map((row) => [
      row.publicName,
      Object.fromEntries(row.modes.map((cell) => [names.get(cell.profileId), cell.mode])),
    ]),
  );
}

describe("access profiles", () => {
  it("creates a profile that blocks every tool unless it says otherwise, and its clients see nothing", async ({ expect }) => {
    const gateway = await demoGateway();
    const created = await api(profiles(gateway), { key: gateway.adminKey, body: { name: "new agents" } });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ name: "new agents", defaultMode: "block", discovery: "direct" });
    const client = await connectMcp(await createKey(gateway, ["tools:call"], created.body.id));
    expect((await client.listTools()).tools).toEqual([]);

    const open = await api(profiles(gateway), { key: gateway.adminKey, body: { name: "open", defaultMode: "allow" } });
    expect(open.body.defaultMode).toBe("allow");
  });

  it("renames a profile, keeping its keys, and refuses a name another profile has or an empty one", async ({ expect }) => {
    const gateway = await demoGateway();
    const created = await api(profiles(gateway), { key: gateway.adminKey, body: { name: "ci", defaultMode: "allow" } });
    const key = await createKey(gateway, ["tools:call"], created.body.id);
    const patch = (body: unknown) => api(`${profiles(gateway)}/${created.body.id}`, { method: "PATCH", key: gateway.adminKey, body });

    const renamed = await patch({ name: "ci runners" });
    expect(renamed.status).toBe(200);
    expect(renamed.body).toMatchObject({ id: created.body.id, name: "ci runners", defaultMode: "allow", updatedBy: expect.any(String) });
    const taken = await patch({ name: "default" });
    expect(taken.status).toBe(409);
    expect(taken.body.error).toMatchObject({ code: "conflict", details: { field: "json.name" } });
    // Its own name again is no conflict.
    expect((await patch({ name: "ci runners" })).status).toBe(200);
    const empty = await patch({ name: "   " });
    expect(empty.status).toBe(400);
    expect(empty.body.error).toMatchObject({ code: "invalid_request", details: { issues: [{ field: "json.name" }] } });
    expect((await patch({ name: "x".repeat(101) })).body.error.details.issues[0].field).toBe("json.name");
    expect((await api(`${profiles(gateway)}/prof_nope`, { method: "PATCH", key: gateway.adminKey, body: { name: "y" } })).status).toBe(404);

    const client = await connectMcp(key);
    expect((await client.listTools()).tools.length).toBeGreaterThan(0);
  });

  it("refuses to delete a profile an unrevoked key belongs to, naming the keys, then deletes it with its modes", async ({ expect }) => {
    const gateway = await demoGateway();
    const created = await api(profiles(gateway), { key: gateway.adminKey, body: { name: "temporary", defaultMode: "allow" } });
    const profileId = created.body.id as string;
    expect((await setMode(gateway, "delete_record", profileId, "block")).status).toBe(200);
    const keyRes = await api(`/v1/workspaces/${gateway.ws}/keys`, {
      key: gateway.adminKey,
      body: { name: "temp agent", scopes: ["tools:call"], profileId },
    });
    const remove = () => api(`${profiles(gateway)}/${profileId}`, { method: "DELETE", key: gateway.adminKey });

    const refused = await remove();
    expect(refused.status).toBe(409);
    expect(refused.body.error).toEqual({
      code: "profile_in_use",
      message: "1 unrevoked key belongs to this profile; revoke it first",
      details: { keys: [{ id: keyRes.body.key.id, name: "temp agent" }] },
    });
    expect((await matrix(gateway)).body.profiles.map((p: { id: string }) => p.id)).toContain(profileId);

    const reader = await createKey(gateway, ["hooks:read", "hooks:write"]);
    expect((await api(`${profiles(gateway)}/${profileId}`, { method: "DELETE", key: reader })).status).toBe(403);

    await api(`/v1/workspaces/${gateway.ws}/keys/${keyRes.body.key.id}`, { method: "DELETE", key: gateway.adminKey });
    const deleted = await remove();
    expect(deleted.status).toBe(204);
    expect((await api(profiles(gateway), { key: gateway.adminKey })).body.profiles.map((p: { name: string }) => p.name)).toEqual([
      "default",
    ]);
    expect((await matrix(gateway)).body.profiles.map((p: { id: string }) => p.id)).toEqual([gateway.defaultProfileId]);
    const keys = (await api(`/v1/workspaces/${gateway.ws}/keys`, { key: gateway.adminKey })).body.keys as {
      id: string;
      profileId: string | null;
    }[];
    expect(keys.find((key) => key.id === keyRes.body.key.id)?.profileId).toBeNull();
    expect((await remove()).status).toBe(404);
    // A profile of that name can be made again, with none of the old one's modes.
    const again = await api(profiles(gateway), { key: gateway.adminKey, body: { name: "temporary", defaultMode: "allow" } });
    expect((await modesByName(gateway))["demo__delete_record"]).toEqual({ default: "allow", temporary: "allow" });
    expect(again.status).toBe(201);
  });

  it(`holds at most ${MAX_PROFILES} profiles per workspace (413 too_many_profiles)`, async ({ expect }) => {
    const workspace = await createWorkspace();
    const create = (name: string) => api(`/v1/workspaces/${workspace.ws}/profiles`, { key: workspace.adminKey, body: { name } });
    // The default profile is the first.
    await Promise.all(Array.from({ length: MAX_PROFILES - 1 }, (_, n) => create(`p${n}`)));
    const full = await create("one too many");
    expect(full.status).toBe(413);
    expect(full.body.error).toEqual({
      code: "too_many_profiles",
      message: `A workspace holds at most ${MAX_PROFILES} access profiles; delete one first`,
      details: { limit: MAX_PROFILES },
    });
    // A taken name is still a conflict, not a full workspace.
    expect((await create("p0")).body.error.code).toBe("conflict");
    expect((await api(`/v1/workspaces/${workspace.ws}/profiles`, { key: workspace.adminKey })).body.profiles).toHaveLength(MAX_PROFILES);
  });
});

describe("the policy matrix", () => {
  it("shows every tool's effective mode under every profile, with overrides and risk floors, as /mcp enforces it", async ({ expect }) => {
    const gateway = await demoGateway();
    const careful = await api(profiles(gateway), {
      key: gateway.adminKey,
      body: { name: "careful", defaultMode: "allow", riskRules: { destructiveHint: { mode: "block" } }, discovery: "both" },
    });
    const carefulId = careful.body.id as string;
    // An override cannot lift the risk floor: delete_record stays blocked under careful.
    await setMode(gateway, "delete_record", carefulId, "allow");
    await setMode(gateway, "lookup_customer", carefulId, "block");
    await setMode(gateway, "export_report", gateway.defaultProfileId, "approval");

    const page = await matrix(gateway);
    expect(page.status).toBe(200);
    expect(page.body.profiles.map((p: { name: string }) => p.name)).toEqual(["careful", "default"]);
    expect(page.body.total).toBe(4);
    expect(page.body.nextCursor).toBeNull();
    const cell = (tool: string, profileId: string) =>
      (page.body.tools as Row[]).find((row) => row.publicName === tool)!.modes.find((c) => c.profileId === profileId);
    expect(cell("demo__delete_record", carefulId)).toEqual({
      profileId: carefulId,
      mode: "block",
      override: "allow",
      floor: { hint: "destructiveHint", mode: "block" },
    });
    expect(cell("demo__lookup_customer", carefulId)).toEqual({ profileId: carefulId, mode: "block", override: "block", floor: null });
    expect(cell("demo__search_release_notes", carefulId)).toEqual({ profileId: carefulId, mode: "allow", override: null, floor: null });
    expect(cell("demo__export_report", gateway.defaultProfileId)).toMatchObject({ mode: "approval", override: "approval" });

    // What the matrix says is what /mcp does, directly and through run_code.
    const client = await connectMcp(await createKey(gateway, ["tools:call"], carefulId));
    // export_report says nothing about destructiveHint, which the rule reads as true (the MCP default).
    expect(cell("demo__export_report", carefulId)).toMatchObject({ mode: "block", floor: { hint: "destructiveHint", mode: "block" } });
    expect((await client.listTools()).tools.map((tool) => tool.name).sort()).toEqual([
      "demo__search_release_notes",
      "describe_tools",
      "run_code",
    ]);
    await expect(client.callTool({ name: "demo__lookup_customer", arguments: { email: "ada@example.com" } })).rejects.toMatchObject({
      code: -32602,
    });
    const viaCode = await client.callTool({
      name: "run_code",
      arguments: { code: "return await tools.demo__lookup_customer({ email: 'ada@example.com' });" },
    });
    expect(viaCode.isError).toBe(true);
    expect(JSON.stringify(viaCode.content)).toContain("Unknown tool");
    expect((await upstreamReceived(gateway.tag)).calls).toEqual([]);
  });

  it("removes an override, so the profile's default mode applies again", async ({ expect }) => {
    const gateway = await demoGateway();
    const strict = await api(profiles(gateway), { key: gateway.adminKey, body: { name: "strict" } });
    await setMode(gateway, "search_release_notes", strict.body.id, "allow");
    expect((await modesByName(gateway))["demo__search_release_notes"]).toEqual({ default: "allow", strict: "allow" });
    const client = await connectMcp(await createKey(gateway, ["tools:call"], strict.body.id));
    expect((await client.callTool({ name: "demo__search_release_notes", arguments: { query: "sso" } })).isError).toBeFalsy();

    const path = (tool: string, profileId: string) => `/v1/workspaces/${gateway.ws}/tools/${tool}/policy/${profileId}`;
    const removed = await api(path(gateway.toolUid("search_release_notes"), strict.body.id), { method: "DELETE", key: gateway.adminKey });
    expect(removed.status).toBe(204);
    expect((await modesByName(gateway))["demo__search_release_notes"]).toEqual({ default: "allow", strict: "block" });
    expect(
      (await api(`/v1/workspaces/${gateway.ws}/tools/${gateway.toolUid("search_release_notes")}/policy`, { key: gateway.adminKey })).body
        .policies,
    ).toEqual([]);
    await expect(client.callTool({ name: "demo__search_release_notes", arguments: { query: "sso" } })).rejects.toMatchObject({
      code: -32602,
    });
    // Removing again is no error; an unknown tool or profile is.
    expect(
      (await api(path(gateway.toolUid("search_release_notes"), strict.body.id), { method: "DELETE", key: gateway.adminKey })).status,
    ).toBe(204);
    const unknownTool = await api(path("tool_nope", strict.body.id), { method: "DELETE", key: gateway.adminKey });
    expect(unknownTool.body.error).toEqual({ code: "not_found", message: "Tool not found" });
    const unknownProfile = await api(path(gateway.toolUid("search_release_notes"), "prof_nope"), {
      method: "DELETE",
      key: gateway.adminKey,
    });
    expect(unknownProfile.body.error).toEqual({ code: "not_found", message: "Access profile not found" });
  });

  it("searches and filters by text, service, review state and mode, and pages", async ({ expect }) => {
    const gateway = await demoGateway();
    const strict = await api(profiles(gateway), { key: gateway.adminKey, body: { name: "strict" } });
    await setMode(gateway, "export_report", strict.body.id, "approval");
    const names = async (query: string) => Object.keys(await modesByName(gateway, query));

    expect(await names("?q=RELEASE")).toEqual(["demo__search_release_notes"]);
    expect(await names("?q=customer")).toEqual(["demo__lookup_customer"]);
    expect(await names(`?serviceId=${gateway.service.id}&status=active`)).toHaveLength(4);
    expect(await names("?status=review_required")).toEqual([]);
    expect(await names(`?mode=approval&profileId=${strict.body.id}`)).toEqual(["demo__export_report"]);
    expect(await names(`?mode=block&profileId=${strict.body.id}`)).toEqual([
      "demo__delete_record",
      "demo__lookup_customer",
      "demo__search_release_notes",
    ]);
    expect(await names(`?mode=block&profileId=${gateway.defaultProfileId}`)).toEqual([]);
    // Without a profile, a tool matches when any profile's cell does.
    expect(await names("?mode=approval")).toEqual(["demo__export_report"]);

    const first = await matrix(gateway, "?limit=3");
    expect(first.body).toMatchObject({ total: 4, nextCursor: "3" });
    expect(first.body.tools).toHaveLength(3);
    const second = await matrix(gateway, "?limit=3&cursor=3");
    expect(second.body).toMatchObject({ total: 4, nextCursor: null });
    expect(second.body.tools.map((row: Row) => row.publicName)).toEqual(["demo__search_release_notes"]);

    for (const [query, field] of [
      ["?limit=0", "query.limit"],
      ["?limit=101", "query.limit"],
      ["?cursor=abc", "query.cursor"],
      ["?mode=sometimes", "query.mode"],
      [`?q=${"x".repeat(201)}`, "query.q"],
      ["?mode=block&profileId=prof_nope", "query.profileId"],
    ]) {
      const refused = await matrix(gateway, query);
      expect(refused.status, query).toBe(400);
      expect(refused.body.error).toMatchObject({ code: "invalid_request", details: { issues: [{ field }] } });
    }
    // Readable with hooks:read, as the rest of policy is; another workspace's matrix is not found.
    const reader = await createKey(gateway, ["hooks:read"]);
    expect((await matrix(gateway, "", reader)).status).toBe(200);
    const other = await createWorkspace();
    expect((await api(`/v1/workspaces/${gateway.ws}/policy/matrix`, { key: other.adminKey })).status).toBe(404);
  });

  it("tells a tool in review that was never approved (a new tool) from an approved one, by approvedHash", async ({ expect }) => {
    const gateway = await demoGateway();
    const held = await api(`/v1/workspaces/${gateway.ws}/services`, {
      key: gateway.adminKey,
      body: { slug: "held", url: demoUpstreamUrl(newTag()), reviewInitialTools: true },
    });
    expect(held.status).toBe(201);
    const rows = async (query: string) => (await matrix(gateway, query)).body.tools as (Row & { approvedHash: string | null })[];
    const inReview = await rows("?status=review_required");
    expect(inReview.map((row) => row.publicName)).toEqual([
      "held__delete_record",
      "held__export_report",
      "held__lookup_customer",
      "held__search_release_notes",
    ]);
    expect(inReview.every((row) => row.approvedHash === null)).toBe(true);
    const active = await rows(`?status=active&serviceId=${gateway.service.id}`);
    expect(active).toHaveLength(4);
    expect(active.every((row) => /^[0-9a-f]{64}$/.test(row.approvedHash ?? ""))).toBe(true);
  });
});

describe("actors", () => {
  it("names members by email and keys by name, revoked keys too, for hooks:read", async ({ expect }) => {
    const workspace = await createWorkspace("Actors", `${crypto.randomUUID().slice(0, 8)}@rayrun.test`);
    const keyRes = await api(`/v1/workspaces/${workspace.ws}/keys`, {
      key: workspace.adminKey,
      body: { name: "ci deploys", scopes: ["hooks:write"] },
    });
    await api(`/v1/workspaces/${workspace.ws}/keys/${keyRes.body.key.id}`, { method: "DELETE", key: workspace.adminKey });
    const reader = await api(`/v1/workspaces/${workspace.ws}/keys`, {
      key: workspace.adminKey,
      body: { name: "reader", scopes: ["hooks:read"] },
    });
    const members = (await api(`/v1/workspaces/${workspace.ws}/members`, { key: workspace.adminKey })).body.members;

    const listed = await api(`/v1/workspaces/${workspace.ws}/actors`, { key: reader.body.secret });
    expect(listed.status).toBe(200);
    expect(listed.body.actors).toEqual([
      { id: members[0].id, kind: "user", name: members[0].email, revoked: false },
      { id: expect.stringMatching(/^key_/), kind: "key", name: "bootstrap admin", revoked: false },
      { id: keyRes.body.key.id, kind: "key", name: "ci deploys", revoked: true },
      { id: reader.body.key.id, kind: "key", name: "reader", revoked: false },
    ]);
    const other = await createWorkspace();
    expect((await api(`/v1/workspaces/${workspace.ws}/actors`, { key: other.adminKey })).status).toBe(404);
  });
});

describe("a workspace's per-tool overrides", () => {
  it(`are at most ${MAX_TOOL_POLICIES}: a new one past that is refused 413 too_many_tool_policies, a change of one is not`, async ({
    expect,
  }) => {
    const gateway = await demoGateway();
    expect((await setMode(gateway, "search_release_notes", gateway.defaultProfileId, "approval")).status).toBe(200);
    // The rest, written straight to D1 on tools the upstream no longer lists: every override counts, live tool or not.
    const series = "WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < ?3)";
    const now = "strftime('%Y-%m-%dT%H:%M:%fZ', 'now')";
    const serviceId = (await api(`/v1/workspaces/${gateway.ws}/tools`, { key: gateway.adminKey })).body.tools[0].serviceId as string;
    await env.DB.batch([
      env.DB.prepare(
        `${series} INSERT INTO tools (uid, workspace_id, service_id, name, definition, definition_hash, status, first_seen_at, updated_at)
         SELECT 'tool_fill_' || ?2 || '_' || i, ?2, ?1, 'fill_' || i, '{}', 'hash', 'removed', ${now}, ${now} FROM s`,
      ).bind(serviceId, gateway.ws, MAX_TOOL_POLICIES - 1),
      env.DB.prepare(
        `${series} INSERT INTO tool_policies (profile_id, tool_uid, workspace_id, mode, updated_by, updated_at)
         SELECT ?1, 'tool_fill_' || ?2 || '_' || i, ?2, 'block', 'bootstrap', ${now} FROM s`,
      ).bind(gateway.defaultProfileId, gateway.ws, MAX_TOOL_POLICIES - 1),
    ]);

    const refused = await setMode(gateway, "lookup_customer", gateway.defaultProfileId, "block");
    expect(refused.status).toBe(413);
    expect(refused.body.error).toEqual({
      code: "too_many_tool_policies",
      message: `A workspace holds at most ${MAX_TOOL_POLICIES} per-tool overrides over all its profiles; remove some first`,
      details: { limit: MAX_TOOL_POLICIES },
    });
    const changed = await setMode(gateway, "search_release_notes", gateway.defaultProfileId, "allow");
    expect(changed.status).toBe(200);
    expect(changed.body).toMatchObject({ mode: "allow" });

    // Removing one makes room.
    const removed = await api(
      `/v1/workspaces/${gateway.ws}/tools/${gateway.toolUid("search_release_notes")}/policy/${gateway.defaultProfileId}`,
      {
        method: "DELETE",
        key: gateway.adminKey,
      },
    );
    expect(removed.status).toBe(204);
    expect((await setMode(gateway, "lookup_customer", gateway.defaultProfileId, "block")).status).toBe(200);
  }, 60_000);
});
