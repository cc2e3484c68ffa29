/**
 * What the logs API shows of a row's place: its number within its workspace, and signed cursors. Two workspaces'
 * rows land interleaved through the real queue consumer and D1; neither's ids or cursors say anything about the
 * other's, and paging sees every row once while rows keep landing.
 */
import { createExecutionContext, createMessageBatch, env, getQueueResult } from "cloudflare:test";
import { describe, it } from "vitest";
import worker from "../index.ts";
import { api, demoGateway, newTag } from "../../test/helpers.ts";
import { callLogMessage, gatewayCallRow, jsonBytes, stageRow } from "../calls/call-rows.ts";
import type { CallLogMessage } from "./call-log.ts";
import { applyLogRetention } from "./logs.store.ts";

type Gateway = Awaited<ReturnType<typeof demoGateway>>;

/** One call of `gateway` with one stage row for its search tool, as the call path's message carries it. */
function message(gateway: Gateway, requestId: string): CallLogMessage {
  const call = gatewayCallRow(
    { workspaceId: gateway.ws, actor: "key:key_ids", keyId: "key_ids", grantedBy: null, profileId: null },
    {
      requestId,
      callIndex: null,
      name: "demo__search_release_notes",
      bytesIn: jsonBytes({}),
      bytesOut: jsonBytes(null),
      startedAt: Date.now(),
      durationMs: 1,
      outcome: "refused",
      code: "invalid_arguments",
    },
  );
  const toolUid = gateway.toolUid("search_release_notes");
  return callLogMessage(call, [stageRow({ toolUid, requestId }, { stage: "pre_dispatch", outcome: "refused" })], false);
}

/** Delivers `messages` to the consumer as one batch (a redelivery when they were delivered before). */
async function deliver(messages: CallLogMessage[]): Promise<void> {
  const batch = createMessageBatch<CallLogMessage>(
    "rayrun-call-logs",
    messages.map((body) => ({ id: `ids-${newTag()}`, timestamp: new Date(), attempts: 1, body })),
  );
  const ctx = createExecutionContext();
  await worker.queue(batch as MessageBatch<unknown>, env);
  await getQueueResult(batch, ctx);
}

/** `count` new calls of each gateway, interleaved in one batch. */
async function interleaved(gateways: { gateway: Gateway; count: number }[]): Promise<void> {
  const lists = gateways.map(({ gateway, count }) => Array.from({ length: count }, () => message(gateway, `req_${newTag()}`)));
  const longest = Math.max(...lists.map((list) => list.length));
  await deliver(Array.from({ length: longest }, (_, index) => lists.flatMap((list) => list[index] ?? [])).flat());
}

const callsPath = (g: Gateway) => `/v1/workspaces/${g.ws}/logs`;
const stagesPath = (g: Gateway) => `/v1/workspaces/${g.ws}/tools/${g.toolUid("search_release_notes")}/hook/logs`;

/** Every id of a list, newest first, one page of `limit` at a time; `between` runs before each next page. */
async function pageThrough(path: string, key: string, rowsOf: "calls" | "logs", limit: number, between = async () => {}) {
  const ids: number[] = [];
  let cursor: string | null = null;
  do {
    const page: { status: number; body: Record<string, unknown> } = await api(
      `${path}?limit=${limit}${cursor ? `&cursor=${cursor}` : ""}`,
      {
        key,
      },
    );
    if (page.status !== 200) throw new Error(`page: ${page.status} ${JSON.stringify(page.body)}`);
    ids.push(...(page.body[rowsOf] as { id: number }[]).map((row) => row.id));
    cursor = page.body.nextCursor as string | null;
    if (cursor) await between();
  } while (cursor);
  return ids;
}

const countdown = (from: number) => Array.from({ length: from }, (_, index) => from - index);

describe("log row ids and page cursors", () => {
  it("number each workspace's rows on their own: another workspace's volume shows nowhere", async ({ expect }) => {
    const [alone, a, b] = await Promise.all([demoGateway(), demoGateway(), demoGateway()]);
    await interleaved([{ gateway: alone, count: 12 }]);
    await interleaved([
      { gateway: a, count: 12 },
      { gateway: b, count: 30 },
    ]);
    await interleaved([{ gateway: b, count: 50 }]);
    // A's rows are numbered exactly as a workspace's that never shared the database, calls and stage rows alike.
    for (const g of [alone, a]) {
      expect(await pageThrough(callsPath(g), g.adminKey, "calls", 1000)).toEqual(countdown(12));
      expect(await pageThrough(stagesPath(g), g.adminKey, "logs", 1000)).toEqual(countdown(12));
    }
    expect(await pageThrough(callsPath(b), b.adminKey, "calls", 1000)).toEqual(countdown(80));

    // Cursors: the same row's cursor is the same string whatever the other workspace did meanwhile.
    const firstPage = async (path: string, key: string) => (await api(`${path}?limit=5`, { key })).body.nextCursor as string;
    const before = [await firstPage(callsPath(a), a.adminKey), await firstPage(stagesPath(a), a.adminKey)];
    await interleaved([{ gateway: b, count: 40 }]);
    expect([await firstPage(callsPath(a), a.adminKey), await firstPage(stagesPath(a), a.adminKey)]).toEqual(before);
    expect(before[0]).not.toBe(before[1]);

    // A cursor works only where it was made: another workspace's is 404, another list's or a forged one is 400.
    const bCursor = await firstPage(callsPath(b), b.adminKey);
    expect((await api(`${callsPath(a)}?cursor=${bCursor}`, { key: a.adminKey })).status).toBe(404);
    expect((await api(`${callsPath(a)}?cursor=${before[1]}`, { key: a.adminKey })).body.error.code).toBe("invalid_request");
    const [payload] = before[0]!.split(".");
    const forged = `${payload}.${"A".repeat(43)}`;
    expect((await api(`${callsPath(a)}?cursor=${forged}`, { key: a.adminKey })).body.error.details.issues[0].field).toBe("query.cursor");
    // The code-runs and content-logs views page the same call rows with the same cursors.
    expect((await api(`/v1/workspaces/${a.ws}/code-runs?cursor=${before[0]}`, { key: a.adminKey })).status).toBe(200);
  });

  it("go on above the highest number retention deleted, so no number is given twice and an old cursor stays past", async ({ expect }) => {
    const g = await demoGateway();
    await interleaved([{ gateway: g, count: 12 }]);
    const oldCursor = (await api(`${callsPath(g)}?limit=5`, { key: g.adminKey })).body.nextCursor as string;
    // Every row of the workspace passes its retention (and is deleted), then new calls land.
    await applyLogRetention(env.DB, Date.now() + 31 * 24 * 60 * 60 * 1000);
    expect(await pageThrough(callsPath(g), g.adminKey, "calls", 1000)).toEqual([]);
    await interleaved([{ gateway: g, count: 3 }]);
    expect(await pageThrough(callsPath(g), g.adminKey, "calls", 1000)).toEqual([15, 14, 13]);
    expect(await pageThrough(stagesPath(g), g.adminKey, "logs", 1000)).toEqual([15, 14, 13]);
    // The cursor from before ("older than 8") shows none of the new rows.
    expect((await api(`${callsPath(g)}?cursor=${oldCursor}`, { key: g.adminKey })).body.calls).toEqual([]);
  });

  it("page through every row exactly once while rows keep landing, and a redelivery adds none", async ({ expect }) => {
    const [a, b] = await Promise.all([demoGateway(), demoGateway()]);
    const first = Array.from({ length: 23 }, () => message(a, `req_${newTag()}`));
    await deliver(first);
    await interleaved([{ gateway: b, count: 9 }]);
    let aCalls = first.length;
    // Between pages: more of A's calls (above the cursor), B's calls, and a redelivery of A's first batch.
    const meanwhile = async () => {
      await interleaved([
        { gateway: a, count: 3 },
        { gateway: b, count: 4 },
      ]);
      aCalls += 3;
      await deliver(first.slice(0, 5));
    };
    for (const [path, rows] of [
      [callsPath(a), "calls"],
      [stagesPath(a), "logs"],
    ] as const) {
      const before = (await api(`${path}?limit=1`, { key: a.adminKey })).body[rows][0].id as number;
      const seen = await pageThrough(path, a.adminKey, rows, 4, meanwhile);
      // Every row there when paging began, once, newest first; rows landing meanwhile are above the first page.
      expect(seen).toEqual(countdown(before));
      expect(new Set(seen).size).toBe(seen.length);
    }
    // Every call once: the redeliveries of the first five never became rows.
    for (const [path, rows] of [
      [callsPath(a), "calls"],
      [stagesPath(a), "logs"],
    ] as const) {
      const all = await pageThrough(path, a.adminKey, rows, 1000);
      expect(all).toHaveLength(aCalls);
      expect(new Set(all).size).toBe(aCalls);
      expect(all).toEqual([...all].sort((x, y) => y - x));
    }
  });
});
