import { env, runInDurableObject } from "cloudflare:test";
import { describe, it } from "vitest";
import { api, createKey, createWorkspace } from "../../../test/helpers.ts";
import { HOOK_JSON_MAX_DEPTH } from "../../../schema/api/hooks.ts";
import { SOURCE_MAX_BYTES } from "../compiler/index.ts";
import { browserCaller, hookGateway, keyCaller, SEARCH_HOOK, searchHookVariant } from "./lifecycle.fixtures.ts";
import { QUOTAS } from "./quotas.do.ts";

const versionCount = async (ws: string, toolUid: string) =>
  (await env.DB.prepare("SELECT COUNT(*) AS n FROM hook_versions WHERE workspace_id = ? AND tool_uid = ?")
    .bind(ws, toolUid)
    .first<{ n: number }>())!.n;

/** Runs SQL inside the workspace's Durable Object, where quotas and allowances live. */
const inWorkspaceDO = (ws: string, sql: (storage: SqlStorage) => void) =>
  runInDurableObject(env.WORKSPACE.getByName(ws), (_instance, state) => sql(state.storage.sql));

describe("draft saves and etags", () => {
  it("requires If-Match (428) and refuses a stale etag (412 with the current etag), writing nothing", async ({ expect }) => {
    const g = await hookGateway();
    const missing = await g.save({ source: SEARCH_HOOK }, undefined);
    expect(missing.status).toBe(428);
    expect(missing.body.error.code).toBe("precondition_required");

    const first = await g.save({ source: SEARCH_HOOK }, '"empty"');
    expect(first.status).toBe(200);
    const stale = await g.save({ source: searchHookVariant(1) }, '"empty"');
    expect(stale.status).toBe(412);
    expect(stale.body.error).toMatchObject({ code: "precondition_failed", details: { etag: first.body.etag } });
    expect(stale.headers.get("etag")).toBe(first.body.etag);
    expect(await versionCount(g.ws, g.toolUid)).toBe(1);
    expect((await g.draft()).body.etag).toBe(first.body.etag);
  });

  it("lets exactly one of two concurrent saves holding the same etag through", async ({ expect }) => {
    const g = await hookGateway();
    const { etag } = (await g.draft()).body;
    const results = await Promise.all([g.save({ source: searchHookVariant(1) }, etag), g.save({ source: searchHookVariant(2) }, etag)]);
    expect(results.map((result) => result.status).sort()).toEqual([200, 412]);
    expect(await versionCount(g.ws, g.toolUid)).toBe(1);
    const winner = results.find((result) => result.status === 200)!;
    expect((await g.draft()).body.versionId).toBe(winner.body.versionId);
  });

  it("stores source that does not parse unchanged, and lists and restores it like any version", async ({ expect }) => {
    const g = await hookGateway();
    const broken = "export default defineToolAdapter({\n   before( {\n";
    const saved = await g.save({ source: broken, note: "wip" }, '"empty"');
    expect(saved.status).toBe(200);
    expect((await g.draft()).body.source).toBe(broken);
    const next = await g.save({ source: SEARCH_HOOK }, saved.body.etag);
    const listed = (await g.call(g.writer, `${g.base()}/versions`)).body.versions;
    expect(listed.map((version: { versionId: string }) => version.versionId)).toEqual([next.body.versionId, saved.body.versionId]);
    const restored = await g.call(g.writer, `${g.base()}/versions/${saved.body.versionId}/restore`, {
      method: "POST",
      headers: { "if-match": next.body.etag },
    });
    expect(restored.status).toBe(200);
    expect((await g.draft()).body).toMatchObject({ source: broken, versionId: restored.body.versionId });
  });

  it("refuses a restore with a stale etag (412) and never rewrites history", async ({ expect }) => {
    const g = await hookGateway();
    const first = await g.save({ source: SEARCH_HOOK }, '"empty"');
    await g.save({ source: searchHookVariant(1) }, first.body.etag);
    const stale = await g.call(g.writer, `${g.base()}/versions/${first.body.versionId}/restore`, {
      method: "POST",
      headers: { "if-match": first.body.etag },
    });
    expect(stale.status).toBe(412);
    expect(stale.body.error.code).toBe("precondition_failed");
    const missing = await g.call(g.writer, `${g.base()}/versions/${first.body.versionId}/restore`, { method: "POST" });
    expect(missing.status).toBe(428);
    expect(await versionCount(g.ws, g.toolUid)).toBe(2);
  });

  it("answers a save of 100 KiB + 1 with 413 source_too_large and writes nothing", async ({ expect }) => {
    const g = await hookGateway();
    const source = `// ${"x".repeat(SOURCE_MAX_BYTES - 3)}\n`;
    expect(new TextEncoder().encode(source).byteLength).toBe(SOURCE_MAX_BYTES + 1);
    const res = await g.save({ source }, '"empty"');
    expect(res.status).toBe(413);
    expect(res.body.error).toMatchObject({
      code: "source_too_large",
      details: { bytes: SOURCE_MAX_BYTES + 1, limitBytes: SOURCE_MAX_BYTES },
    });
    expect(await versionCount(g.ws, g.toolUid)).toBe(0);
    expect((await g.draft()).body.versionId).toBeNull();
    expect((await g.call(g.writer, `/v1/workspaces/${g.ws}/hooks/usage`)).body.draftSaves.used).toBe(0);

    const exactly = await g.save({ source: source.slice(1) }, '"empty"');
    expect(exactly.status).toBe(200);
  });

  it("refuses config that is not an object (400) or over 16 KiB (413 config_too_large)", async ({ expect }) => {
    const g = await hookGateway();
    const array = await g.save({ source: SEARCH_HOOK, config: [1] as unknown as Record<string, unknown> }, '"empty"');
    expect(array.status).toBe(400);
    expect(array.body.error.code).toBe("invalid_request");
    const big = await g.save({ source: SEARCH_HOOK, config: { blob: "x".repeat(16 * 1024) } }, '"empty"');
    expect(big.status).toBe(413);
    expect(big.body.error.code).toBe("config_too_large");
    expect(await versionCount(g.ws, g.toolUid)).toBe(0);
  });

  it("refuses config, test arguments or a mock result nested deeper than 64 levels with 400 invalid_request, writing nothing", async ({
    expect,
  }) => {
    const g = await hookGateway();
    // 3,000 levels in 6 KB: under the size limit, deep enough to overflow any recursive walk.
    const deep = { a: JSON.parse(`${"[".repeat(3000)}1${"]".repeat(3000)}`) as unknown };
    const saved = await g.save({ source: SEARCH_HOOK, config: deep }, '"empty"');
    expect(saved.status).toBe(400);
    expect(saved.body.error).toEqual({
      code: "invalid_request",
      message: `Invalid json.config: Nested deeper than ${HOOK_JSON_MAX_DEPTH} levels`,
      details: { issues: [{ field: "json.config", message: `Nested deeper than ${HOOK_JSON_MAX_DEPTH} levels` }] },
    });
    expect(await versionCount(g.ws, g.toolUid)).toBe(0);

    const nested = (depth: number): Record<string, unknown> => (depth === 1 ? { leaf: 1 } : { a: nested(depth - 1) });
    const atLimit = await g.save({ source: SEARCH_HOOK, config: nested(HOOK_JSON_MAX_DEPTH) }, '"empty"');
    expect(atLimit.status).toBe(200);
    expect((await g.save({ source: SEARCH_HOOK, config: nested(HOOK_JSON_MAX_DEPTH + 1) }, atLimit.body.etag)).status).toBe(400);
    for (const [field, body] of [
      ["config", { stage: "before", arguments: { query: "sso" }, config: deep }],
      ["arguments", { stage: "before", arguments: deep }],
      ["result", { stage: "after", arguments: { query: "sso" }, result: deep }],
    ] as const) {
      const tested = await g.test(body);
      expect(tested.status).toBe(400);
      expect(tested.body.error.details.issues).toEqual([{ field: `json.${field}`, message: expect.stringContaining("Nested deeper") }]);
    }
  });

  it("answers a save past the 64 MiB history allowance with 413 history_full and writes nothing", async ({ expect }) => {
    const g = await hookGateway();
    const first = await g.save({ source: SEARCH_HOOK }, '"empty"');
    // Another tool's history already fills the allowance to within 100 bytes.
    await inWorkspaceDO(g.ws, (sql) => {
      sql.exec("INSERT INTO hook_history_usage (tool_uid, bytes) VALUES ('tool_elsewhere', ?)", QUOTAS.historyBytes - 100);
    });
    const full = await g.save({ source: searchHookVariant(1) }, first.body.etag);
    expect(full.status).toBe(413);
    expect(full.body.error).toMatchObject({ code: "history_full", details: { limitBytes: QUOTAS.historyBytes } });
    expect(full.body.error.details.usedBytes).toBeGreaterThan(QUOTAS.historyBytes - 100);
    expect(await versionCount(g.ws, g.toolUid)).toBe(1);
    expect((await g.draft()).body.etag).toBe(first.body.etag);
    const usage = (await g.call(g.writer, `/v1/workspaces/${g.ws}/hooks/usage`)).body;
    expect(usage.draftSaves.used).toBe(1);

    // A reset of this tool reclaims only its own bytes; the other tool's history still fills the allowance.
    expect((await g.call(g.writer, g.base(), { method: "DELETE" })).status).toBe(200);
    expect((await g.call(g.writer, `/v1/workspaces/${g.ws}/hooks/usage`)).body.historyBytes.used).toBe(QUOTAS.historyBytes - 100);
  });
});

describe("draft save quota", () => {
  it("answers the 121st save in an hour with 429 and Retry-After; identical saves are free", async ({ expect }) => {
    const g = await hookGateway();
    let etag = '"empty"';
    for (let n = 0; n < QUOTAS.draftSavesPerHour; n++) {
      const saved = await g.save({ source: searchHookVariant(n) }, etag);
      expect(saved.status).toBe(200);
      etag = saved.body.etag;
    }
    const identical = await g.save({ source: searchHookVariant(QUOTAS.draftSavesPerHour - 1) }, etag);
    expect(identical.body.created).toBe(false);
    const over = await g.save({ source: searchHookVariant(1000) }, etag);
    expect(over.status).toBe(429);
    expect(over.body.error).toMatchObject({ code: "rate_limited", details: { quota: "draft_saves", used: 120, limit: 120 } });
    const retryAfter = Number(over.headers.get("retry-after"));
    expect(retryAfter).toBeGreaterThan(3500);
    expect(retryAfter).toBeLessThanOrEqual(3600);
    expect(await versionCount(g.ws, g.toolUid)).toBe(120);
  });

  it("lets concurrent saves at 119 use exactly the one remaining save", async ({ expect }) => {
    const g = await hookGateway();
    const now = Date.now();
    await inWorkspaceDO(g.ws, (sql) => {
      for (let n = 0; n < QUOTAS.draftSavesPerHour - 1; n++) {
        sql.exec("INSERT INTO quota_events (quota, subject, at) VALUES ('draft_saves', ?, ?)", g.ws, now - 1000);
      }
    });
    // One save per tool, all at once: without the quota every one of them would succeed.
    const results = await Promise.all(
      g.tools.flatMap((tool) => [1, 2].map((n) => g.save({ source: searchHookVariant(n) }, '"empty"', g.writer, tool.uid))),
    );
    const statuses = results.map((result) => result.status);
    expect(statuses.filter((status) => status === 200)).toHaveLength(1);
    expect(statuses.filter((status) => status === 429).length + statuses.filter((status) => status === 412).length).toBe(
      results.length - 1,
    );
    const total = (await env.DB.prepare("SELECT COUNT(*) AS n FROM hook_versions WHERE workspace_id = ?")
      .bind(g.ws)
      .first<{ n: number }>())!.n;
    expect(total).toBe(1);
    expect((await g.call(g.writer, `/v1/workspaces/${g.ws}/hooks/usage`)).body.draftSaves.used).toBe(120);
  });
});

describe("history reads", () => {
  it("pages versions newest first and diffs the first version against empty", async ({ expect }) => {
    const g = await hookGateway();
    const ids: string[] = [];
    let etag = '"empty"';
    for (let n = 0; n < 5; n++) {
      const saved = await g.save({ source: searchHookVariant(n), config: { n } }, etag);
      ids.push(saved.body.versionId);
      etag = saved.body.etag;
    }
    const seen: string[] = [];
    const cursors: string[] = [];
    let cursor: string | null = null;
    do {
      const page: { versions: { versionId: string }[]; nextCursor: string | null } = (
        await g.call(g.writer, `${g.base()}/versions?limit=2${cursor ? `&cursor=${cursor}` : ""}`)
      ).body;
      expect(page.versions.length).toBeLessThanOrEqual(2);
      seen.push(...page.versions.map((version) => version.versionId));
      cursor = page.nextCursor;
      if (cursor) cursors.push(cursor);
    } while (cursor);
    expect(seen).toEqual([...ids].reverse());
    // Cursors are the tool's own version numbers (v4, v2), not a sequence that counts every workspace's saves.
    expect(cursors).toEqual(["4", "2"]);

    const firstDiff = (await g.call(g.writer, `${g.base()}/versions/${ids[0]}/diff`)).body;
    expect(firstDiff.previousVersionId).toBeNull();
    expect(firstDiff.source).toContain("+// variant 0");
    const diff = (await g.call(g.writer, `${g.base()}/versions/${ids[3]}/diff`)).body;
    expect(diff.source).toContain("-// variant 2");
    expect(diff.source).toContain("+// variant 3");
    expect(diff.config).toContain('-  "n": 2');

    expect((await g.call(g.writer, `${g.base()}/versions?cursor=abc`)).status).toBe(400);
    expect((await g.call(g.writer, `${g.base()}/versions/hv_nope`)).status).toBe(404);
  });
});

describe("access", () => {
  it("answers a stale save or restore by a hooks:write key without hooks:read with a 412 that carries no etag", async ({ expect }) => {
    const g = await hookGateway();
    const first = await g.save({ source: SEARCH_HOOK }, '"empty"');
    const second = await g.save({ source: searchHookVariant(1) }, first.body.etag);
    const writeOnly = keyCaller(await createKey(g, ["hooks:write"]));
    expect((await g.draft(writeOnly)).status).toBe(403);

    const stale = await g.save({ source: searchHookVariant(2) }, '"empty"', writeOnly);
    expect(stale.status).toBe(412);
    expect(stale.body).toEqual({
      error: {
        code: "precondition_failed",
        message: "The If-Match etag is not the draft's current one; reading the current etag needs the 'hooks:read' scope",
      },
    });
    expect(stale.headers.get("etag")).toBeNull();
    const restore = await g.call(writeOnly, `${g.base()}/versions/${first.body.versionId}/restore`, {
      method: "POST",
      headers: { "if-match": first.body.etag },
    });
    expect(restore.status).toBe(412);
    expect(restore.body.error.details).toBeUndefined();
    expect(restore.headers.get("etag")).toBeNull();

    // With the etag it was given, the same key writes as usual; a reader still gets the etag on a 412.
    expect((await g.save({ source: searchHookVariant(2) }, second.body.etag, writeOnly)).status).toBe(200);
    const readerStale = await g.save({ source: searchHookVariant(3) }, '"empty"');
    expect(readerStale.body.error.details.etag).toMatch(/^"hv_/);
    expect(await versionCount(g.ws, g.toolUid)).toBe(3);
  });

  it("needs hooks:read to read and hooks:write to change; other workspaces' tools are not found", async ({ expect }) => {
    const g = await hookGateway();
    const reader = keyCaller(await createKey(g, ["hooks:read"]));
    const viewer = await browserCaller(g.ws, g.adminKey, "viewer");
    const caller = keyCaller(g.clientKey);
    expect((await g.draft(reader)).status).toBe(200);
    expect((await g.draft(viewer)).status).toBe(200);
    const denied = await g.save({ source: SEARCH_HOOK }, '"empty"', reader);
    expect(denied.status).toBe(403);
    expect(denied.body.error).toMatchObject({ code: "forbidden", details: { required: "hooks:write" } });
    expect((await g.save({ source: SEARCH_HOOK }, '"empty"', viewer)).status).toBe(403);
    expect((await g.draft(caller)).status).toBe(403);
    for (const [method, path] of [
      ["POST", "test"],
      ["POST", "compile"],
      ["POST", "revisions"],
      ["PUT", "deployments/active"],
      ["DELETE", "deployments/shadow"],
    ] as const) {
      expect((await g.call(reader, `${g.base()}/${path}`, { method, body: method === "DELETE" ? undefined : {} })).status).toBe(403);
    }
    expect((await g.call(reader, g.base(), { method: "DELETE" })).status).toBe(403);

    const other = await createWorkspace();
    const res = await api(`/v1/workspaces/${other.ws}/tools/${g.toolUid}/hook/draft`, { key: other.adminKey });
    expect(res.status).toBe(404);
    expect((await api(`/v1/workspaces/${g.ws}/tools/${g.toolUid}/hook/draft`, { key: other.adminKey })).status).toBe(404);
  });
});
