import { env, runInDurableObject } from "cloudflare:test";
import { describe, it } from "vitest";
import {
  addService,
  api,
  connectMcp,
  CONSOLE_HEADERS,
  createKey,
  devLogin,
  newTag,
  upstreamOrigin,
  upstreamReceived,
} from "../../../test/helpers.ts";
import {
  BAD_ARGUMENTS_HOOK,
  hookGateway,
  keyCaller,
  MOCK_RESULT,
  SEARCH_HOOK,
  searchHookVariant,
  type Caller,
} from "./lifecycle.fixtures.ts";
import { HookLifecycle } from "./lifecycle.do.ts";
import { QUOTAS } from "./quotas.do.ts";
import { insertTestRun } from "./test-runs.store.ts";
import { workspaceClient } from "../../workspaces/workspace.client.ts";

const inWorkspaceDO = (ws: string, sql: (storage: SqlStorage) => void) =>
  runInDurableObject(env.WORKSPACE.getByName(ws), (_instance, state) => sql(state.storage.sql));

describe("compile and types", () => {
  it("compiles the draft or a version, and answers a broken one with 422 compile_failed and positioned diagnostics", async ({ expect }) => {
    const g = await hookGateway();
    expect((await g.call(g.writer, `${g.base()}/compile`, { method: "POST" })).status).toBe(404);
    const good = await g.saveLatest({ source: SEARCH_HOOK });
    const compiled = await g.call(g.writer, `${g.base()}/compile`, { method: "POST" });
    expect(compiled.status).toBe(200);
    expect(compiled.body).toMatchObject({ ok: true, stages: ["before", "after"], contract: null, compiledBytes: expect.any(Number) });
    await g.saveLatest({ source: 'import fs from "fs";\nexport default 1;\n' });
    const broken = await g.call(g.writer, `${g.base()}/compile`, { method: "POST" });
    expect(broken.status).toBe(422);
    expect(broken.body.error.code).toBe("compile_failed");
    expect(broken.body.error.details.diagnostics[0]).toMatchObject({ code: "import_forbidden", line: 1, column: expect.any(Number) });
    const byVersion = await g.call(g.writer, `${g.base()}/compile`, { body: { versionId: good.body.versionId } });
    expect(byVersion.status).toBe(200);
  });

  it("serves declarations generated from the tool's upstream schemas", async ({ expect }) => {
    const g = await hookGateway();
    const res = await api(`${g.base()}/types`, { headers: g.writer.headers });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^text\/plain/);
    expect(res.body).toContain("type UpstreamArguments");
    expect(res.body).toContain("query: string;");
    expect(res.body).toContain("defineToolAdapter");
  });
});

describe("tests", () => {
  it("a test still running when the hook is reset leaves no record, so it cannot vouch for the same content later", async ({ expect }) => {
    const g = await hookGateway();
    const saved = await g.saveLatest({ source: SEARCH_HOOK });
    const runFor = (stage: "before" | "after", contentHash: string) => ({
      id: `htr_${crypto.randomUUID()}`,
      workspaceId: g.ws,
      toolUid: g.toolUid,
      contentHash,
      definitionHash: g.tools.find((tool) => tool.uid === g.toolUid)!.definitionHash,
      stage,
      outcome: "continue",
      passed: true,
      errorCode: null,
      actor: { id: "key_race", kind: "key" as const, channel: "api" as const },
      createdAt: new Date().toISOString(),
    });
    const hash = (await g.test({ stage: "before", arguments: { query: "sso" } })).body.contentHash as string;
    // Both tests were read and run against the saved version; the reset lands before they record.
    const reset = await g.call(g.writer, g.base(), { method: "DELETE" });
    expect(reset.status).toBe(200);
    expect(await insertTestRun(env.DB, runFor("before", hash), saved.body.versionId)).toBe(false);
    expect(await insertTestRun(env.DB, runFor("after", hash), saved.body.versionId)).toBe(false);
    const rows = await env.DB.prepare("SELECT COUNT(*) AS n FROM hook_test_runs WHERE workspace_id = ? AND tool_uid = ?")
      .bind(g.ws, g.toolUid)
      .first<{ n: number }>();
    expect(rows?.n).toBe(0);

    // The same content saved again after the reset still needs its own tests.
    const again = await g.saveLatest({ source: SEARCH_HOOK });
    const refused = await g.createRevision(again.body.versionId);
    expect(refused.status).toBe(409);
    expect(refused.body.error.code).toBe("not_tested");
    // While the version exists, a run is recorded as usual.
    expect(await insertTestRun(env.DB, runFor("before", hash), again.body.versionId)).toBe(true);

    // Through the API: a reset whose D1 half has landed while the draft is still being read.
    await env.DB.prepare("DELETE FROM hook_versions WHERE id = ?").bind(again.body.versionId).run();
    const during = await g.test({ stage: "after", arguments: { query: "sso" }, result: MOCK_RESULT });
    expect(during.status).toBe(409);
    expect(during.body.error.code).toBe("hook_reset");
    const after = await env.DB.prepare("SELECT COUNT(*) AS n FROM hook_test_runs WHERE tool_uid = ? AND stage = 'after'")
      .bind(g.toolUid)
      .first<{ n: number }>();
    expect(after?.n).toBe(0);
  });

  it("needs a mock result to test after, and records failing schema checks without contacting the upstream", async ({ expect }) => {
    const g = await hookGateway();
    await g.saveLatest({ source: BAD_ARGUMENTS_HOOK });
    const noResult = await g.test({ stage: "after", arguments: { query: "x" } });
    expect(noResult.status).toBe(400);
    expect(noResult.body.error.details.issues[0].field).toBe("json.result");
    const bad = await g.test({ stage: "before", arguments: { query: "x" } });
    expect(bad.status).toBe(200);
    expect(bad.body).toMatchObject({ passed: false, outcome: "continue", validation: { valid: false } });
    expect(bad.body.validation.checks[1]).toMatchObject({ target: "upstreamArguments", schema: "upstream", valid: false });
    expect(bad.body.validation.checks[1].errors[0].pointer).toBe("/query");
    const publicBad = await g.test({ stage: "before", arguments: { nope: 1 } });
    expect(publicBad.body.validation.checks[0]).toMatchObject({ target: "publicArguments", valid: false });
    const throwing = await g.saveLatest({
      source: SEARCH_HOOK.replace('context.log.info("searching", { query: args.query });', 'throw new Error("boom");'),
    });
    expect(throwing.status).toBe(200);
    const error = await g.test({ stage: "before", arguments: { query: "x" } });
    expect(error.body).toMatchObject({ passed: false, outcome: "error", error: { code: "exception" } });
    expect((await upstreamReceived(g.tag)).calls).toEqual([]);
  });
});

describe("revisions", () => {
  it("refuses a version whose tests never ran, failed, covered one stage only or another config (409 not_tested)", async ({ expect }) => {
    const g = await hookGateway();
    const saved = await g.saveLatest({ source: SEARCH_HOOK, config: { prefix: "a" } });
    const never = await g.createRevision(saved.body.versionId);
    expect(never.status).toBe(409);
    expect(never.body.error).toMatchObject({ code: "not_tested", details: { untestedStages: ["before", "after"] } });

    // Passing tests, but with a config other than the version's: a different source+config.
    await g.testBoth({ prefix: "b" });
    expect((await g.createRevision(saved.body.versionId)).body.error.details.untestedStages).toEqual(["before", "after"]);

    await g.test({ stage: "before", arguments: { query: "sso" } });
    expect((await g.createRevision(saved.body.versionId)).body.error.details.untestedStages).toEqual(["after"]);

    // A failing latest run withdraws an earlier pass.
    await g.test({ stage: "after", arguments: { query: "sso" }, result: MOCK_RESULT });
    await g.test({ stage: "after", arguments: { query: "sso" }, result: { items: "not an array" } });
    const failed = await g.createRevision(saved.body.versionId);
    expect(failed.status).toBe(409);
    expect(failed.body.error.details.untestedStages).toEqual(["after"]);

    await g.test({ stage: "after", arguments: { query: "sso" }, result: MOCK_RESULT });
    expect((await g.createRevision(saved.body.versionId)).status).toBe(201);

    // Tests of a version that fails its own checks never pass, so it can never become a revision.
    const bad = await g.saveLatest({ source: BAD_ARGUMENTS_HOOK });
    await g.test({ stage: "before", arguments: { query: "x" } });
    expect((await g.createRevision(bad.body.versionId)).body.error.code).toBe("not_tested");
  });

  it("answers a version that does not compile with 422 and its diagnostics", async ({ expect }) => {
    const g = await hookGateway();
    const saved = await g.saveLatest({ source: SEARCH_HOOK.replace("rayrun.hooks/v1", "rayrun.hooks/v2") });
    const res = await g.createRevision(saved.body.versionId);
    expect(res.status).toBe(422);
    expect(res.body.error).toMatchObject({ code: "compile_failed", details: { diagnostics: [{ code: "api_version_unsupported" }] } });
    expect((await g.call(g.writer, `${g.base()}/revisions`)).body.revisions).toEqual([]);
    expect((await g.createRevision("hv_unknown")).status).toBe(404);
  });

  it("stores the bundle in R2 and lists revisions newest first", async ({ expect }) => {
    const g = await hookGateway();
    const a = await g.tested();
    const b = await g.tested(searchHookVariant(1));
    const listed = (await g.call(g.writer, `${g.base()}/revisions`)).body.revisions;
    expect(listed.map((revision: { revisionId: string }) => revision.revisionId)).toEqual([b.revisionId, a.revisionId]);
    // Paged by the tool's own revision numbers: the cursor counts nothing of other workspaces.
    const first = (await g.call(g.writer, `${g.base()}/revisions?limit=1`)).body;
    expect(first.nextCursor).toBe("2");
    const second = (await g.call(g.writer, `${g.base()}/revisions?limit=1&cursor=${first.nextCursor}`)).body;
    expect([second.revisions.map((revision: { revisionId: string }) => revision.revisionId), second.nextCursor]).toEqual([
      [a.revisionId],
      null,
    ]);
    const object = await env.BUNDLES.get(`bundles/${g.ws}/${g.toolUid}/${a.revisionId}.js`);
    expect(object).not.toBeNull();
    expect(await object!.text()).toContain("rayrun.hooks/v1");
  });

  it("numbers versions and revisions per tool (v1, v2 … and r1, r2 …), starting again at 1 after a reset", async ({ expect }) => {
    const g = await hookGateway();
    const other = g.tools.find((tool) => tool.name === "lookup_customer")!.uid;
    const a = await g.tested();
    const b = await g.tested(searchHookVariant(1));
    // Another tool counts its own.
    await g.saveLatest(
      {
        source:
          "export default defineToolAdapter({ apiVersion: 'rayrun.hooks/v1', before: ({ arguments: a }) => ({ action: 'continue', arguments: a }) });",
      },
      g.writer,
      other,
    );
    const revisions = (await g.call(g.writer, `${g.base()}/revisions`)).body.revisions;
    expect(revisions.map((revision: { revisionId: string; number: number }) => [revision.revisionId, revision.number])).toEqual([
      [b.revisionId, 2],
      [a.revisionId, 1],
    ]);
    const versions = (await g.call(g.writer, `${g.base()}/versions`)).body.versions;
    expect(versions.map((version: { versionId: string; number: number }) => [version.versionId, version.number])).toEqual([
      [b.versionId, 2],
      [a.versionId, 1],
    ]);
    expect((await g.call(g.writer, `${g.base()}/versions/${a.versionId}`)).body.number).toBe(1);
    expect((await g.call(g.writer, `${g.base(other)}/versions`)).body.versions.map((v: { number: number }) => v.number)).toEqual([1]);

    expect((await g.call(g.writer, g.base(), { method: "DELETE" })).status).toBe(200);
    const again = await g.tested();
    expect((await g.call(g.writer, `${g.base()}/revisions`)).body.revisions).toMatchObject([{ revisionId: again.revisionId, number: 1 }]);
    expect((await g.call(g.writer, `${g.base()}/versions`)).body.versions).toMatchObject([{ versionId: again.versionId, number: 1 }]);
  });
});

describe("deployments", () => {
  it("answers a revision of another tool, or another workspace, with 404", async ({ expect }) => {
    const g = await hookGateway();
    const lookup = g.toolUid;
    const otherTool = g.tools.find((tool) => tool.name === "lookup_customer")!.uid;
    const revision = await g.tested();
    const res = await g.deploy("active", revision.revisionId, g.writer, otherTool);
    expect(res.status).toBe(404);
    expect(res.body.error.code).toBe("not_found");
    expect((await g.deploy("shadow", "rev_unknown")).status).toBe(404);

    const other = await hookGateway();
    expect((await other.deploy("active", revision.revisionId, other.writer, other.toolUid)).status).toBe(404);
    expect((await g.call(g.writer, `${g.base(lookup)}/deployments`)).body.active).toBeNull();
  });

  it("refuses to roll back to a revision compiled against an older upstream definition (409 incompatible_revision)", async ({ expect }) => {
    const g = await hookGateway();
    const key = newTag();
    const setVariant = (variant: number) =>
      fetch(`${upstreamOrigin()}/fixtures/mutable/${key}/state`, { method: "POST", body: JSON.stringify({ variant }) });
    await setVariant(0);
    const { service } = await addService(g, { slug: "mut", url: `${upstreamOrigin()}/fixtures/mutable/${key}/mcp` });
    const tools = async () => (await api(`/v1/workspaces/${g.ws}/tools?serviceId=${service.id}`, { key: g.adminKey })).body.tools;
    const echo = (await tools()).find((tool: { name: string }) => tool.name === "echo");
    const passThrough = (n: number) =>
      `// ${n}\nexport default defineToolAdapter({\n  apiVersion: "rayrun.hooks/v1",\n  before({ arguments: args }) {\n    return { action: "continue", arguments: args };\n  },\n});\n`;
    const revise = async (n: number, args: Record<string, unknown>) => {
      const saved = await g.saveLatest({ source: passThrough(n) }, g.writer, echo.uid);
      expect((await g.test({ stage: "before", arguments: args }, g.writer, echo.uid)).body.passed).toBe(true);
      const revision = await g.createRevision(saved.body.versionId, g.writer, echo.uid);
      expect(revision.status).toBe(201);
      return revision.body;
    };
    const old = await revise(1, { message: "hi" });
    expect((await g.deploy("active", old.revisionId, g.writer, echo.uid)).status).toBe(200);

    await setVariant(1);
    await api(`/v1/workspaces/${g.ws}/services/${service.id}/refresh`, { method: "POST", key: g.adminKey });
    const changed = (await tools()).find((tool: { name: string }) => tool.name === "echo");
    await api(`/v1/workspaces/${g.ws}/tools/${echo.uid}/review`, { key: g.adminKey, body: { definitionHash: changed.definitionHash } });

    const current = await revise(2, { message: "hi", loud: true });
    expect(current.definitionHash).toBe(changed.definitionHash);
    expect((await g.deploy("active", current.revisionId, g.writer, echo.uid)).status).toBe(200);
    const rollback = await g.deploy("active", old.revisionId, g.writer, echo.uid);
    expect(rollback.status).toBe(409);
    expect(rollback.body.error).toMatchObject({
      code: "incompatible_revision",
      details: { revisionDefinitionHash: echo.definitionHash, currentDefinitionHash: changed.definitionHash },
    });
    expect((await g.deploy("shadow", old.revisionId, g.writer, echo.uid)).status).toBe(409);
    expect((await g.call(g.writer, `${g.base(echo.uid)}/deployments`)).body.active.revisionId).toBe(current.revisionId);
  });

  it("keeps active and shadow code of the workspace within 16 MiB (413 deployed_code_full)", async ({ expect }) => {
    const g = await hookGateway();
    const revision = await g.tested();
    await inWorkspaceDO(g.ws, (sql) => {
      sql.exec(
        `INSERT INTO hook_deployments (tool_uid, slot, revision_id, version_id, bundle_key, bundle_bytes, stages, contract, config,
           definition_hash, deployed_by, deployed_at)
         VALUES ('tool_elsewhere', 'active', 'rev_x', 'hv_x', 'k', ?, '[]', NULL, '{}', 'h', 'key_x', '2026-01-01T00:00:00.000Z')`,
        QUOTAS.deployedBytes - 100,
      );
    });
    const res = await g.deploy("shadow", revision.revisionId);
    expect(res.status).toBe(413);
    expect(res.body.error).toMatchObject({
      code: "deployed_code_full",
      details: { usedBytes: QUOTAS.deployedBytes - 100, limitBytes: QUOTAS.deployedBytes },
    });
    expect((await g.call(g.writer, `${g.base()}/deployments`)).body).toMatchObject({ shadow: null, events: [] });
  });
});

/** `db` whose `first()` reads with arguments `holds` picks wait for `hold` after reading. */
function heldDb(db: D1Database, holds: (args: unknown[]) => boolean, hold: () => Promise<void>): D1Database {
  const method = (target: object, property: string | symbol) => {
    const value = Reflect.get(target, property) as unknown;
    return typeof value === "function" ? value.bind(target) : value;
  };
  return new Proxy(db, {
    get(target, property) {
      if (property !== "prepare") return method(target, property);
      return (query: string) =>
        new Proxy(target.prepare(query), {
          get(statement, name) {
            if (name !== "bind") return method(statement, name);
            return (...args: unknown[]) =>
              new Proxy(statement.bind(...args), {
                get(bound, member) {
                  if (member !== "first" || !holds(args)) return method(bound, member);
                  return async (column?: string) => {
                    const row = await (column === undefined ? bound.first() : bound.first(column));
                    await hold();
                    return row;
                  };
                },
              });
          },
        });
    },
  });
}

describe("the deployed-code allowance under concurrent deploys", () => {
  it("lets only one of two deploys to different tools take the last room", async ({ expect }) => {
    const g = await hookGateway();
    const revision = (await g.tested()) as { revisionId: string; versionId: string; compiledBytes: number; definitionHash: string };
    const other = g.tools.find((tool: { name: string }) => tool.name === "lookup_customer")!.uid;
    const otherHash = (await api(`/v1/workspaces/${g.ws}/tools/${other}`, { key: g.adminKey })).body.definitionHash as string;
    // The same bundle as a revision of another tool (another tool's lock), built against that tool's definition.
    await env.DB.prepare(
      `INSERT INTO hook_revisions (id, workspace_id, tool_uid, version_id, content_hash, source_hash, config, bundle_key, compiled_bytes,
         stages, contract, replaces, definition_hash, created_by, channel, created_at, number)
       SELECT 'rev_twin_' || id, workspace_id, ?, version_id, content_hash, source_hash, config, bundle_key, compiled_bytes,
         stages, contract, replaces, ?, created_by, channel, created_at, 1
       FROM hook_revisions WHERE id = ?`,
    )
      .bind(other, otherHash, revision.revisionId)
      .run();
    // Both tools have a (1-byte) active revision, so each deploy names its action from D1 (an await) before it
    // writes; the rest of the allowance leaves room for one of the two new bundles, not both.
    await inWorkspaceDO(g.ws, (sql) => {
      const pointer = (tool: string, bytes: number) =>
        sql.exec(
          `INSERT INTO hook_deployments (tool_uid, slot, revision_id, version_id, bundle_key, bundle_bytes, stages, contract, config,
             definition_hash, deployed_by, deployed_at)
           VALUES (?, 'active', 'rev_x', 'hv_x', 'k', ?, '[]', NULL, '{}', 'h', 'key_x', '2026-01-01T00:00:00.000Z')`,
          tool,
          bytes,
        );
      pointer(g.toolUid, 1);
      pointer(other, 1);
      pointer("tool_elsewhere", QUOTAS.deployedBytes - revision.compiledBytes - 1);
    });
    // Both deploys are held on the D1 read that names their action (the active revision they replace), as two
    // deploy requests arriving together are when D1 is slow: each must still see the other's bytes.
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let waiting = 0;
    const db = heldDb(
      env.DB,
      (args) => args.includes("rev_x"),
      async () => {
        waiting += 1;
        await held;
      },
    );
    const answers = await runInDurableObject(env.WORKSPACE.getByName(g.ws), async (_instance, state) => {
      const hooks = new HookLifecycle(state.storage.sql, { ...env, DB: db });
      const actor = { id: "key_race", kind: "key", channel: "api" } as const;
      const deploy = (toolUid: string, revisionId: string, currentDefinitionHash: string) =>
        hooks.deploy({ workspaceId: g.ws, toolUid, slot: "active", revisionId, currentDefinitionHash, actor });
      const both = Promise.all([
        deploy(g.toolUid, revision.revisionId, revision.definitionHash),
        deploy(other, `rev_twin_${revision.revisionId}`, otherHash),
      ]);
      while (waiting < 2) await new Promise((resolve) => setTimeout(resolve, 5));
      release();
      return both;
    });
    expect(answers.map((answer) => (answer.ok ? "ok" : answer.code)).sort()).toEqual(["deployed_code_full", "ok"]);
    const usage = (await g.call(g.writer, `/v1/workspaces/${g.ws}/hooks/usage`)).body;
    expect(usage.deployedBytes.used).toBeLessThanOrEqual(QUOTAS.deployedBytes);
  });
});

describe("compile quota", () => {
  it("counts compiles, tests and revision creation per key, and answers the 121st attempt with 429 and Retry-After", async ({ expect }) => {
    const g = await hookGateway();
    const keys = (await api(`/v1/workspaces/${g.ws}/keys`, { key: g.adminKey })).body.keys as { id: string; prefix: string }[];
    const writerId = keys.find((key) => g.writerKey.startsWith(key.prefix))!.id;
    await runInDurableObject(env.ACTOR_QUOTA.getByName(`key:${writerId}`), (_instance, state) => {
      for (let n = 0; n < QUOTAS.compilesPerHour - 4; n++) {
        state.storage.sql.exec(
          "INSERT INTO quota_events (quota, subject, at) VALUES ('compile_attempts', ?, ?)",
          writerId,
          Date.now() - 60_000,
        );
      }
    });
    const saved = await g.saveLatest({ source: SEARCH_HOOK });
    await g.testBoth(); // 118
    expect((await g.createRevision(saved.body.versionId)).status).toBe(201); // 119
    expect((await g.call(g.writer, `${g.base()}/compile`, { method: "POST" })).status).toBe(200); // 120
    const over = await g.call(g.writer, `${g.base()}/compile`, { method: "POST" });
    expect(over.status).toBe(429);
    expect(over.body.error).toMatchObject({ code: "rate_limited", details: { quota: "compile_attempts", used: 120, limit: 120 } });
    expect(Number(over.headers.get("retry-after"))).toBeGreaterThan(3000);
    expect((await g.test({ stage: "before", arguments: { query: "x" } })).status).toBe(429);

    // Another key of the same workspace has its own allowance.
    const other = keyCaller(await createKey(g, ["hooks:write"]));
    expect((await g.call(other, `${g.base()}/compile`, { method: "POST" })).status).toBe(200);
  });

  it("counts a browser user's attempts across every workspace they are a member of", async ({ expect }) => {
    const [a, b] = [await hookGateway(), await hookGateway()];
    const email = `${crypto.randomUUID().slice(0, 8)}@rayrun.test`;
    const memberIds = new Set<string>();
    for (const g of [a, b]) {
      const member = await api(`/v1/workspaces/${g.ws}/members`, { method: "PUT", key: g.adminKey, body: { email, role: "editor" } });
      memberIds.add(member.body.id);
      await g.saveLatest({ source: SEARCH_HOOK });
    }
    expect(memberIds.size).toBe(1); // one user, a member of both
    const [userId] = memberIds;
    const user: Caller = { headers: { cookie: await devLogin(email), ...CONSOLE_HEADERS } };
    await runInDurableObject(env.ACTOR_QUOTA.getByName(`user:${userId}`), (_instance, state) => {
      for (let n = 0; n < QUOTAS.compilesPerHour - 1; n++) {
        state.storage.sql.exec(
          "INSERT INTO quota_events (quota, subject, at) VALUES ('compile_attempts', ?, ?)",
          userId,
          Date.now() - 60_000,
        );
      }
    });

    expect((await a.call(user, `${a.base()}/compile`, { method: "POST" })).status).toBe(200); // 120, in workspace A
    const over = await b.call(user, `${b.base()}/compile`, { method: "POST" });
    expect(over.status).toBe(429);
    expect(over.body.error).toMatchObject({ code: "rate_limited", details: { quota: "compile_attempts", used: 120, limit: 120 } });
    expect(Number(over.headers.get("retry-after"))).toBe(over.body.error.details.retryAfterSeconds);
    expect((await b.call(user, `/v1/workspaces/${b.ws}/hooks/usage`)).body.compileAttempts).toEqual({ used: 120, limit: 120 });
    // The workspace's keys keep their own allowance.
    expect((await b.call(b.writer, `${b.base()}/compile`, { method: "POST" })).status).toBe(200);
  });
});

describe("reset and service deletion", () => {
  it("reset while shadow and active are deployed removes both, the bundles and the history; the reset event remains", async ({
    expect,
  }) => {
    const g = await hookGateway();
    const a = await g.tested(SEARCH_HOOK, { prefix: "release " });
    const b = await g.tested(searchHookVariant(1));
    await g.deploy("active", a.revisionId);
    await g.deploy("shadow", b.revisionId);
    const client = await connectMcp(g.clientKey);
    await client.callTool({ name: "demo__search_release_notes", arguments: { query: "sso" } });
    expect((await upstreamReceived(g.tag)).calls.map((call) => call.arguments)).toEqual([{ query: "release sso" }]);

    const reset = await g.call(g.writer, g.base(), { method: "DELETE" });
    expect(reset.status).toBe(200);
    expect(reset.body.reset).toMatchObject({
      versionsRemoved: 2,
      revisionsRemoved: 2,
      bundlesRemoved: 2,
      channel: "api",
      actorKind: "key",
    });

    expect(await workspaceClient(env, g.ws).toolDeployments(g.toolUid)).toEqual({});
    expect((await env.BUNDLES.list({ prefix: `bundles/${g.ws}/${g.toolUid}/` })).objects).toEqual([]);
    for (const table of ["hook_versions", "hook_test_runs", "hook_revisions", "hook_deployment_events"]) {
      const row = await env.DB.prepare(`SELECT COUNT(*) AS n FROM ${table} WHERE tool_uid = ?`).bind(g.toolUid).first<{ n: number }>();
      expect(row!.n, table).toBe(0);
    }
    expect((await g.call(g.writer, `${g.base()}/resets`)).body.resets).toHaveLength(1);
    expect((await g.call(g.writer, `/v1/workspaces/${g.ws}/hooks/usage`)).body).toMatchObject({
      historyBytes: { used: 0 },
      deployedBytes: { used: 0 },
    });

    const result = await client.callTool({ name: "demo__search_release_notes", arguments: { query: "sso" } });
    expect(result.isError).toBeFalsy();
    expect((await upstreamReceived(g.tag)).calls.map((call) => call.arguments)).toEqual([{ query: "release sso" }, { query: "sso" }]);

    // The hook starts over from an empty draft.
    expect((await g.save({ source: SEARCH_HOOK }, '"empty"')).status).toBe(200);
  });

  it("refuses to delete a service whose tools have hook history (409) until their hooks are reset", async ({ expect }) => {
    const g = await hookGateway();
    await g.saveLatest({ source: SEARCH_HOOK });
    const refused = await api(`/v1/workspaces/${g.ws}/services/${g.service.id}`, { method: "DELETE", key: g.adminKey });
    expect(refused.status).toBe(409);
    expect(refused.body.error).toMatchObject({
      code: "hook_history_exists",
      details: { tools: [g.toolUid], toolNames: ["demo__search_release_notes"] },
    });
    expect((await g.call(g.writer, g.base(), { method: "DELETE" })).status).toBe(200);
    expect((await api(`/v1/workspaces/${g.ws}/services/${g.service.id}`, { method: "DELETE", key: g.adminKey })).status).toBe(204);
  });

  it("keeps a history-only cleanup view for a service deleted before hook history blocked deletion", async ({ expect }) => {
    const g = await hookGateway();
    const saved = await g.saveLatest({ source: SEARCH_HOOK });
    // A legacy deletion: the service went away while its tool still had hook history.
    await env.DB.prepare("UPDATE services SET deleted_at = ? WHERE id = ?").bind(new Date().toISOString(), g.service.id).run();

    const view = await g.call(g.writer, `/v1/workspaces/${g.ws}/services/${g.service.id}/hook-history`);
    expect(view.status).toBe(200);
    expect(view.body.service.deletedAt).not.toBeNull();
    expect(view.body.tools).toEqual([
      { toolUid: g.toolUid, name: "search_release_notes", versions: 1, revisions: 0, lastChangeAt: expect.any(String) },
    ]);
    const exported = await g.call(g.writer, `${g.base()}/export`);
    expect(exported.body.versions.map((version: { versionId: string }) => version.versionId)).toEqual([saved.body.versionId]);
    expect((await g.call(g.writer, `${g.base()}/versions`)).status).toBe(200);

    const save = await g.save({ source: searchHookVariant(1) }, saved.body.etag);
    expect(save.status).toBe(409);
    expect(save.body.error.code).toBe("service_deleted");
    expect((await g.call(g.writer, `${g.base()}/compile`, { method: "POST" })).body.error.code).toBe("service_deleted");

    expect((await g.call(g.writer, g.base(), { method: "DELETE" })).status).toBe(200);
    expect((await g.call(g.writer, `/v1/workspaces/${g.ws}/services/${g.service.id}/hook-history`)).body.tools).toEqual([]);
  });
});
