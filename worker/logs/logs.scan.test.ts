/**
 * What one page of a small workspace's logs costs the database every workspace shares: its time filters are read
 * through the workspace's own index, never through an index over every tenant's rows, whatever statistics the
 * planner has (ANALYZE, or the `PRAGMA optimize` D1 recommends after creating indexes).
 */
import { env } from "cloudflare:test";
import { describe, it } from "vitest";
import { api, createKey, createWorkspace, demoGateway, newTag } from "../../test/helpers.ts";
import { callsScan } from "./calls.store.ts";
import { LOG_DETAIL_PAGE_ROWS, LOG_DETAIL_ROW_BYTES } from "./log-details.ts";
import { stageRowsScan } from "./logs.store.ts";
import { LOG_SCAN_ROWS, readScannedPage, ROW_LANDING_SLACK_MS, scanStatements } from "./scan-window.ts";

const DAY_START = Date.parse("2026-03-01T00:00:00.000Z") / 1000;
const BUSY_ROWS = 50_000;

/** `count` call rows and as many stage rows of `workspace`'s tool `tool`, spread over the day from DAY_START. */
async function rows(workspace: string, tool: string, count: number): Promise<void> {
  const series = "WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < ?1)";
  const at = "strftime('%Y-%m-%dT%H:%M:%fZ', ?3 + (i - 1) * 86400.0 / ?1, 'unixepoch')";
  await env.DB.batch([
    env.DB.prepare(
      `${series} INSERT INTO calls (workspace_id, request_id, kind, call_index, created_at, actor, key_id, tool_uid, name, outcome,
         duration_ms, gateway_ms, hooks_ms, upstream_ms, duration_bucket, bytes_in, bytes_out, workspace_seq)
       SELECT ?2, 'req_' || i, 'tools/call', -1, ${at}, 'key:k', 'k', ?4, 'demo__search', 'ok', 1, 1, 0, 0, 1, 0, 0, i FROM s`,
    ).bind(count, workspace, DAY_START, tool),
    env.DB.prepare(
      `${series} INSERT INTO call_logs (workspace_id, tool_uid, request_id, stage, channel, outcome, duration_ms, created_at,
         row_seq, workspace_seq)
       SELECT ?2, ?4, 'req_' || i, 'before', 'active', 'continue', 1, ${at}, 0, i FROM s`,
    ).bind(count, workspace, DAY_START, tool),
  ]);
}

describe("a log page's reads", () => {
  it("a small workspace's since/until reads its own rows, not every tenant's in that window", async ({ expect }) => {
    const [busy, small] = [`ws_busy_${newTag()}`, `ws_small_${newTag()}`];
    await rows(busy, "tool_busy", BUSY_ROWS);
    await rows(small, "tool_small", 10);
    await env.DB.prepare("ANALYZE").run();

    const window = { since: "2026-03-01T00:00:00.000Z", until: "2026-03-02T00:00:00.000Z", limit: 100 };
    const calls = await scanStatements(env.DB, callsScan(small, window)).page.all();
    expect(calls.results).toHaveLength(10);
    // Before: SQLite chose calls_by_time and read all 50,000 of the busy workspace's rows for this page.
    expect(calls.meta.rows_read).toBeLessThan(100);

    const stages = await scanStatements(env.DB, stageRowsScan(small, "tool_small", window)).page.all();
    expect(stages.results).toHaveLength(10);
    expect(stages.meta.rows_read).toBeLessThan(100);
  }, 60_000);

  it("a page with details holds at most LOG_DETAIL_PAGE_ROWS rows: megabytes, not a day's 32 MiB allowance", async ({ expect }) => {
    const gateway = await demoGateway();
    const toolUid = gateway.toolUid("search_release_notes");
    // 1,000 stage rows with details near the row bound: what a day's detail allowance holds.
    await env.DB.prepare(
      `WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < 1000)
       INSERT INTO call_logs (workspace_id, tool_uid, request_id, stage, channel, outcome, duration_ms, created_at, row_seq,
         workspace_seq, details, detail_bytes)
       SELECT ?1, ?2, 'req_' || i, 'before', 'active', 'continue', 1, strftime('%Y-%m-%dT%H:%M:%fZ', 'now'), 0, i,
         json_object('message', replace(hex(zeroblob(?3)), '0', 'x')), ?3 * 2 FROM s`,
    )
      .bind(gateway.ws, toolUid, (LOG_DETAIL_ROW_BYTES - 1024) / 2)
      .run();
    const path = `/v1/workspaces/${gateway.ws}/tools/${toolUid}/hook/logs`;

    const detailReader = await createKey(gateway, ["hooks:read", "hooks:write"]);
    const ids = new Set<number>();
    let cursor: string | null = null;
    let pages = 0;
    do {
      const page: { status: number; body: { logs: { id: number; details?: unknown }[]; nextCursor: string | null } } = await api(
        `${path}?limit=1000${cursor ? `&cursor=${cursor}` : ""}`,
        { key: detailReader },
      );
      expect(page.status).toBe(200);
      // Before: the first page held all 1,000 rows, about 31 MiB of JSON.
      expect(page.body.logs.length).toBeLessThanOrEqual(LOG_DETAIL_PAGE_ROWS);
      expect(JSON.stringify(page.body).length).toBeLessThan(4 * 1024 * 1024);
      for (const row of page.body.logs) if (row.details) ids.add(row.id);
      cursor = page.body.nextCursor;
      pages++;
    } while (cursor && pages < 20);
    // Paging with the cursor still reaches every row, each with its details.
    expect(ids.size).toBe(1000);

    // Without details (metadata only) a page still holds up to 1,000 rows.
    const metadataReader = await createKey(gateway, ["hooks:read"]);
    const page = await api(`${path}?limit=1000`, { key: metadataReader });
    expect(page.body.logs).toHaveLength(1000);
    expect(page.body.logs[0].details).toBeUndefined();
  }, 60_000);
});

describe("a page whose filter the index cannot serve", () => {
  /** Pages through `path` (a list answering `key` with rows and `nextCursor`) to the end; the rows of every page. */
  async function everyPage(path: string, key: string, rowsOf: (body: any) => unknown[]) {
    const pages: unknown[][] = [];
    let cursor: string | null = null;
    do {
      const page: { status: number; body: any } = await api(
        `${path}${path.includes("?") ? "&" : "?"}limit=100${cursor ? `&cursor=${cursor}` : ""}`,
        { key },
      );
      if (page.status !== 200) throw new Error(`${path}: ${page.status} ${JSON.stringify(page.body)}`);
      pages.push(rowsOf(page.body));
      cursor = page.body.nextCursor;
    } while (cursor && pages.length < 20);
    return pages;
  }

  it(`reads at most ${LOG_SCAN_ROWS} of the workspace's rows, and the cursor goes on from where it stopped`, async ({ expect }) => {
    const workspace = await createWorkspace();
    await rows(workspace.ws, "tool_scanned", 25_000);
    // One row deep in the history matches: the only `refused` call, 20,000 rows below the newest.
    await env.DB.prepare("UPDATE calls SET outcome = 'refused' WHERE workspace_id = ? AND workspace_seq = 5000").bind(workspace.ws).run();

    // Before: one page read all 25,000 rows to answer it; now each page reads at most one window of them.
    const first = await scanStatements(env.DB, callsScan(workspace.ws, { outcome: "refused", limit: 100 })).page.all();
    expect(first.results).toEqual([]);
    expect(first.meta.rows_read).toBeLessThanOrEqual(2 * LOG_SCAN_ROWS + 10);

    const pages = await everyPage(`/v1/workspaces/${workspace.ws}/logs?outcome=refused`, workspace.adminKey, (body) => body.calls);
    // Windows of 10,000 rows, 25,000 to 15,001, 15,000 to 5,001, then the rest: the match is on the third page.
    expect(pages.map((page) => page.length)).toEqual([0, 0, 1]);
    expect(pages[2]).toMatchObject([{ id: 5000, outcome: "refused" }]);

    // A kind no row has (Code Mode runs) pages the same way, to the end.
    const runs = await everyPage(`/v1/workspaces/${workspace.ws}/code-runs`, workspace.adminKey, (body) => body.runs);
    expect(runs).toEqual([[], [], []]);

    // A filter the index serves (the tool) reads the page's rows and no more, as before.
    const tool = await scanStatements(env.DB, callsScan(workspace.ws, { tool: "tool_scanned", limit: 100 })).page.all();
    expect(tool.results).toHaveLength(100);
    expect(tool.meta.rows_read).toBeLessThan(200);
  }, 120_000);

  it("ends a `since` listing once its scan reaches rows that landed before `since` could start", async ({ expect }) => {
    const workspace = await createWorkspace();
    // 25,000 rows over 2026-03-01; the listing asks for calls since 03-03, more than the landing slack later.
    await rows(workspace.ws, "tool_scanned", 25_000);
    const since = new Date(Date.parse("2026-03-02T00:00:00.000Z") + ROW_LANDING_SLACK_MS).toISOString();
    const pages = await everyPage(`/v1/workspaces/${workspace.ws}/logs?since=${since}`, workspace.adminKey, (body) => body.calls);
    expect(pages).toEqual([[]]);

    // Within the slack the listing goes on: a row landing late may still have started after `since`.
    const close = await everyPage(
      `/v1/workspaces/${workspace.ws}/logs?since=2026-03-01T23:00:00.000Z`,
      workspace.adminKey,
      (body) => body.calls,
    );
    expect(close.flat().length).toBeGreaterThan(0);
    expect(close.length).toBeGreaterThan(1);

    // Stage rows too: their pages are read the same way.
    const stages = await readScannedPage(env.DB, stageRowsScan(workspace.ws, "tool_scanned", { outcome: "nothing", limit: 100 }));
    expect(stages).toEqual({ rows: [], resumeBelow: 25_000 - LOG_SCAN_ROWS + 1 });
  }, 120_000);
});
