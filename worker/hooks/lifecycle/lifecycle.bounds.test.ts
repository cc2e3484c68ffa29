import { env, runInDurableObject } from "cloudflare:test";
import { describe, it, vi } from "vitest";
import { prettierPathologicalSource, exponentialRefTool, unrelatedVersions } from "../compiler/compiler.attacks.fixtures.ts";
import { formatHookSource } from "../compiler/compiler.format.ts";
import { DECLARATIONS_MAX_CHARS } from "../compiler/index.ts";
import { hookGateway, SEARCH_HOOK, searchHookVariant } from "./lifecycle.fixtures.ts";
import { QUOTAS } from "./quotas.do.ts";
import { DIFF_MAX_EDIT_LINES, minimumEditLines } from "./version-diff.ts";

// Spied, not replaced: the formatter runs for real, and the tests see whether a save ran it.
vi.mock(import("../compiler/compiler.format.ts"), { spy: true });

const UNFORMATTED = SEARCH_HOOK.replaceAll("  ", "    ");

/** Fills the workspace's draft-save quota, as if 120 saves happened a minute ago. */
const useUpSaveQuota = (ws: string) =>
  runInDurableObject(env.WORKSPACE.getByName(ws), async (instance, state) => {
    await (instance as unknown as { hookDraft(toolUid: string): unknown }).hookDraft("tool_none");
    for (let n = 0; n < QUOTAS.draftSavesPerHour; n++) {
      state.storage.sql.exec("INSERT INTO quota_events (quota, subject, at) VALUES ('draft_saves', ?, ?)", ws, Date.now() - 60_000);
    }
  });

describe("draft saves refuse before formatting", () => {
  it("a stale etag is answered 412 without running Prettier", async ({ expect }) => {
    const g = await hookGateway();
    const first = await g.save({ source: SEARCH_HOOK }, '"empty"');
    vi.mocked(formatHookSource).mockClear();
    const stale = await g.save({ source: prettierPathologicalSource(12) }, '"empty"');
    expect(stale.status).toBe(412);
    expect(stale.body.error).toMatchObject({ code: "precondition_failed", details: { etag: first.body.etag } });
    expect(formatHookSource).not.toHaveBeenCalled();
    const missing = await g.save({ source: UNFORMATTED }, undefined);
    expect(missing.status).toBe(428);
    expect(formatHookSource).not.toHaveBeenCalled();
  });

  it("a used-up save quota is answered 429 without running Prettier; an identical save is still free", async ({ expect }) => {
    const g = await hookGateway();
    const first = await g.save({ source: SEARCH_HOOK }, '"empty"');
    await useUpSaveQuota(g.ws);
    vi.mocked(formatHookSource).mockClear();
    const over = await g.save({ source: UNFORMATTED }, first.body.etag);
    expect(over.status).toBe(429);
    expect(over.body.error).toMatchObject({ code: "rate_limited", details: { quota: "draft_saves" } });
    expect(formatHookSource).not.toHaveBeenCalled();
    const identical = await g.save({ source: SEARCH_HOOK }, first.body.etag);
    expect(identical.body).toMatchObject({ created: false, formatted: true });
  });

  it("formats a save within bounds and says so", async ({ expect }) => {
    const g = await hookGateway();
    const saved = await g.save({ source: UNFORMATTED }, '"empty"');
    expect(saved.body).toMatchObject({ created: true, formatted: true });
    expect(saved.body.formatSkipped).toBeUndefined();
    expect((await g.draft()).body.source).toBe(SEARCH_HOOK);
  });

  it("stores source past the formatting bound as sent, with formatSkipped", async ({ expect }) => {
    const g = await hookGateway();
    const attack = `${prettierPathologicalSource()}${UNFORMATTED}`;
    const nested = await g.save({ source: attack }, '"empty"');
    expect(nested.status).toBe(200);
    expect(nested.body).toMatchObject({ created: true, formatted: false, formatSkipped: "too_nested" });
    expect((await g.draft()).body.source).toBe(attack);
    const large = `${"// padding\n".repeat(3000)}${UNFORMATTED}`;
    const big = await g.save({ source: large }, nested.body.etag);
    expect(big.body).toMatchObject({ created: true, formatted: false, formatSkipped: "too_large" });
    expect((await g.draft()).body.source).toBe(large);
    const broken = await g.save({ source: "export default defineToolAdapter({" }, big.body.etag);
    expect(broken.body).toMatchObject({ formatted: false, formatSkipped: "unparsable" });
  });
});

describe("version diffs are bounded", () => {
  it("diffs ordinary versions; past 400 differing lines answers tooLarge with both texts", async ({ expect }) => {
    const g = await hookGateway();
    const small = await g.save({ source: searchHookVariant(1), config: { n: 1 } }, '"empty"');
    const { before, after } = unrelatedVersions();
    const first = await g.save({ source: before }, small.body.etag);
    const second = await g.save({ source: after, config: { n: 2 } }, first.body.etag);
    expect(second.status).toBe(200);

    const ordinary = (await g.call(g.writer, `${g.base()}/versions/${small.body.versionId}/diff`)).body;
    expect(ordinary).toMatchObject({ tooLarge: false, previousVersionId: null, source: expect.stringContaining("+// variant 1") });
    expect(ordinary.texts).toBeUndefined();

    const res = await g.call(g.writer, `${g.base()}/versions/${second.body.versionId}/diff`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      versionId: second.body.versionId,
      previousVersionId: first.body.versionId,
      tooLarge: true,
      source: null,
      config: null,
      texts: { previous: { source: before, config: "{}\n" }, current: { source: after, config: '{\n  "n": 2\n}\n' } },
    });
  });

  it("stops Myers' diff at 400 edits when the versions hold the same lines in another order", async ({ expect }) => {
    const g = await hookGateway();
    const lines = Array.from({ length: 3000 }, (_, n) => `// line ${n}`);
    const changed = (count: number) => lines.map((line, n) => (n < count ? `${line} changed` : line)).join("\n");
    const base = await g.save({ source: lines.join("\n") }, '"empty"');
    const within = await g.save({ source: changed(DIFF_MAX_EDIT_LINES / 2) }, base.body.etag);
    const reversed = await g.save({ source: [...lines].reverse().join("\n") }, within.body.etag);
    const restored = await g.save({ source: lines.join("\n") }, reversed.body.etag);
    const past = await g.save({ source: changed(DIFF_MAX_EDIT_LINES / 2 + 1) }, restored.body.etag);
    const diffOf = async (versionId: string) => (await g.call(g.writer, `${g.base()}/versions/${versionId}/diff`)).body;

    const ok = await diffOf(within.body.versionId);
    expect(ok.tooLarge).toBe(false);
    expect(ok.source.match(/^\+\/\/ line \d+ changed$/gm)).toHaveLength(DIFF_MAX_EDIT_LINES / 2);
    // Reversed against its predecessor, the linear count of lines either lacks is within the bound, so
    // Myers' diff runs, and stops at its bound.
    expect(minimumEditLines(changed(DIFF_MAX_EDIT_LINES / 2), [...lines].reverse().join("\n"))).toBe(DIFF_MAX_EDIT_LINES);
    expect(await diffOf(reversed.body.versionId)).toMatchObject({ tooLarge: true, source: null, config: null });
    // Asked again, the same answer (from this isolate's recent diffs).
    expect(await diffOf(reversed.body.versionId)).toMatchObject({ tooLarge: true });
    // One changed line past the bound: 402 edits.
    expect(await diffOf(past.body.versionId)).toMatchObject({ tooLarge: true });
  });
});

describe("declarations are bounded", () => {
  const setInputSchema = (ws: string, toolUid: string, inputSchema: Record<string, unknown>) =>
    env.DB.prepare("UPDATE tools SET definition = json_set(definition, '$.inputSchema', json(?)) WHERE workspace_id = ? AND uid = ?")
      .bind(JSON.stringify(inputSchema), ws, toolUid)
      .run();

  it("serves declarations for a schema whose reference graph doubles at each of 25 levels", async ({ expect }) => {
    const g = await hookGateway();
    await setInputSchema(g.ws, g.toolUid, exponentialRefTool(25).inputSchema);
    const res = await g.call(g.writer, `${g.base()}/types`);
    expect(res.status).toBe(200);
    expect(res.body).toContain("left?: UpstreamArguments_properties_l25;");
  });

  it("answers 422 declarations_too_large past 1 Mi characters", async ({ expect }) => {
    const g = await hookGateway();
    const properties = Object.fromEntries(Array.from({ length: 2000 }, (_, n) => [`p${n}`, { enum: [`${n}`.padEnd(600, "x")] }]));
    await setInputSchema(g.ws, g.toolUid, { type: "object", properties });
    const res = await g.call(g.writer, `${g.base()}/types`);
    expect(res.status).toBe(422);
    expect(res.body.error).toMatchObject({ code: "declarations_too_large", details: { limitChars: DECLARATIONS_MAX_CHARS } });
  });
});

describe("recompiling a stored version", () => {
  it("is charged to the caller's compile quota like any compile", async ({ expect }) => {
    const g = await hookGateway();
    const saved = await g.save({ source: SEARCH_HOOK }, '"empty"');
    const usage = async () => (await g.call(g.writer, `/v1/workspaces/${g.ws}/hooks/usage`)).body.compileAttempts.used;
    const before = await usage();
    for (let n = 0; n < 3; n++) {
      expect((await g.call(g.writer, `${g.base()}/compile`, { body: { versionId: saved.body.versionId } })).status).toBe(200);
    }
    expect(await usage()).toBe(before + 3);
  });
});
