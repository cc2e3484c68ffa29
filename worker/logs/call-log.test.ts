import { createExecutionContext, createMessageBatch, env, getQueueResult, waitOnExecutionContext } from "cloudflare:test";
import { describe, it } from "vitest";
import worker from "../index.ts";
import { api, connectMcp, createWorkspace, demoGateway, eventually, newTag, ORIGIN, upstreamOrigin } from "../../test/helpers.ts";
import { callLogMessage, gatewayCallRow, jsonBytes, stageRow } from "../calls/call-rows.ts";
import { handleMcpRequest } from "../mcp/mcp.endpoint.ts";
import type { CallLogMessage, CallLogPacket } from "./call-log.ts";
import { consumeCallLogs, retryDelaySeconds } from "./call-log.consumer.ts";
import { FAIR_LANE_BURST, FAIR_LANE_PER_SECOND, laneFor } from "./call-log.lanes.ts";
import { PACKET_BYTES, sendCallLogs } from "./call-log.send.ts";
import { durationBucket, percentile } from "./histogram.ts";
import { applyLogRetention } from "./logs.store.ts";

const QUEUE = "rayrun-call-logs";

/** A call-log message as the call path builds it, for a workspace and request of the test's choosing. */
function message(workspaceId: string, requestId: string, options: { durationMs?: number; at?: number; stages?: number } = {}) {
  const row = gatewayCallRow(
    { workspaceId, actor: "key:key_test", keyId: "key_test", grantedBy: null, profileId: null },
    {
      requestId,
      callIndex: null,
      name: "demo__search_release_notes",
      bytesIn: jsonBytes({ query: "sso" }),
      bytesOut: jsonBytes({ content: [] }),
      startedAt: options.at ?? Date.now(),
      durationMs: options.durationMs ?? 3,
      outcome: "ok",
      code: null,
    },
  );
  const stages = Array.from({ length: options.stages ?? 0 }, () =>
    stageRow({ toolUid: "tool_t", requestId }, { stage: "before", outcome: "continue", durationMs: 1 }),
  );
  return callLogMessage(row, stages, false);
}

/** Polls `done` until it holds or `ms` pass; whether it held. */
async function until(ms: number, done: () => Promise<boolean>): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (await done()) return true;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return done();
}

let delivered = 0;
/** One batch through the real consumer, as the queue delivers it; its result says what was acked or retried. */
async function consume(messages: CallLogMessage[], attempts = 1) {
  const batch = createMessageBatch<CallLogMessage>(
    QUEUE,
    messages.map((body) => ({ id: `msg-${++delivered}`, timestamp: new Date(), attempts, body })),
  );
  const ctx = createExecutionContext();
  await worker.queue(batch as MessageBatch<unknown>, env);
  return getQueueResult(batch, ctx);
}

const count = async (sql: string, ...params: unknown[]) =>
  (
    (await env.DB.prepare(sql)
      .bind(...params)
      .first<{ n: number }>()) ?? { n: 0 }
  ).n;

describe("the call-log consumer", () => {
  it("writes a batch once: a redelivered batch adds no row, no stage row and nothing to the rollups", async ({ expect }) => {
    const ws = `ws_consumer_${crypto.randomUUID().slice(0, 8)}`;
    const batch = Array.from({ length: 50 }, (_, index) => message(ws, `req_${index}`, { stages: 2, durationMs: index }));
    const first = await consume(batch);
    expect(first).toMatchObject({ outcome: "ok", ackAll: true, retryBatch: { retry: false } });
    const rows = () => count("SELECT COUNT(*) AS n FROM calls WHERE workspace_id = ?", ws);
    const stages = () => count("SELECT COUNT(*) AS n FROM call_logs WHERE workspace_id = ?", ws);
    const rolled = () => count("SELECT SUM(calls) AS n FROM call_rollups WHERE workspace_id = ?", ws);
    expect([await rows(), await stages(), await rolled()]).toEqual([50, 100, 50]);

    // At least once: the same messages again (a lost ack), and again mixed with new ones.
    expect(await consume(batch, 2)).toMatchObject({ ackAll: true });
    expect(await consume([...batch.slice(0, 10), message(ws, "req_new", { stages: 1 })], 3)).toMatchObject({ ackAll: true });
    expect([await rows(), await stages(), await rolled()]).toEqual([51, 101, 51]);
  });

  it("retries a batch that fails mid-way, and the retry lands every row exactly once", async ({ expect }) => {
    const ws = `ws_midway_${crypto.randomUUID().slice(0, 8)}`;
    const batch = Array.from({ length: 20 }, (_, index) => message(ws, `req_${index}`, { stages: 1 }));
    // A real D1 failure after the call rows' statement ran: the stage rows' statement aborts on request 13.
    const trigger = `fail_${ws}`;
    await env.DB.prepare(
      `CREATE TRIGGER ${trigger} BEFORE INSERT ON call_logs WHEN NEW.workspace_id = '${ws}' AND NEW.request_id = 'req_13'
       BEGIN SELECT RAISE(ABORT, 'injected'); END`,
    ).run();
    try {
      const failed = await consume(batch);
      expect(failed).toMatchObject({ ackAll: false, retryBatch: { retry: true } });
      // One transaction: the call rows written before the failure are rolled back with it.
      expect(await count("SELECT COUNT(*) AS n FROM calls WHERE workspace_id = ?", ws)).toBe(0);
      expect(await count("SELECT COUNT(*) AS n FROM call_rollups WHERE workspace_id = ?", ws)).toBe(0);
      expect((await consume(batch, 3)).retryBatch).toMatchObject({ retry: true });
    } finally {
      await env.DB.prepare(`DROP TRIGGER ${trigger}`).run();
    }
    expect(await consume(batch, 4)).toMatchObject({ ackAll: true });
    expect(await count("SELECT COUNT(*) AS n FROM calls WHERE workspace_id = ?", ws)).toBe(20);
    expect(await count("SELECT COUNT(*) AS n FROM call_logs WHERE workspace_id = ?", ws)).toBe(20);
    expect(await count("SELECT SUM(calls) AS n FROM call_rollups WHERE workspace_id = ?", ws)).toBe(20);
  });

  it("drops a message that is not a call-log message and still writes the rest of its batch", async ({ expect }) => {
    const ws = `ws_invalid_${crypto.randomUUID().slice(0, 8)}`;
    const good = message(ws, "req_good");
    const bad = { ...message(ws, "req_bad"), v: 2 } as unknown as CallLogMessage;
    const worse = "not json at all" as unknown as CallLogMessage;
    expect(await consume([bad, good, worse])).toMatchObject({ ackAll: true });
    const { results } = await env.DB.prepare("SELECT request_id FROM calls WHERE workspace_id = ?").bind(ws).all();
    expect(results).toEqual([{ request_id: "req_good" }]);
  });

  it("keeps per-minute rollups with a duration histogram that gives p50 and p99", async ({ expect }) => {
    const { ws, adminKey } = await createWorkspace();
    const at = Date.UTC(2026, 0, 5, 10, 30, 15);
    // 100 calls in one minute: 1 ms … 100 ms.
    await consume(Array.from({ length: 100 }, (_, index) => message(ws, `req_${index}`, { at, durationMs: index + 1 })));
    const metrics = await api(`/v1/workspaces/${ws}/metrics?since=2026-01-05T10:29:00Z&until=2026-01-05T10:33:00Z`, { key: adminKey });
    expect(metrics.status).toBe(200);
    expect(metrics.body.points.map((point: { calls: number }) => point.calls)).toEqual([0, 100, 0, 0]);
    const { totals } = metrics.body;
    expect(totals).toMatchObject({ calls: 100, outcomes: { ok: 100 }, lost: 0 });
    // Within the histogram's resolution (buckets of at most 25 ms at this range).
    expect(totals.p50Ms).toBeGreaterThanOrEqual(40);
    expect(totals.p50Ms).toBeLessThanOrEqual(60);
    expect(totals.p99Ms).toBeGreaterThanOrEqual(75);
    expect(totals.p99Ms).toBeLessThanOrEqual(100);
    expect(metrics.body.points[1].bytesIn).toBe(100 * JSON.stringify({ query: "sso" }).length);
  });
});

describe("retries", () => {
  it("wait longer after each failed attempt, at most a minute", ({ expect }) => {
    expect([1, 2, 3, 4, 6, 7, 10].map(retryDelaySeconds)).toEqual([1, 2, 4, 8, 32, 60, 60]);
  });
});

describe("the duration histogram", () => {
  it("puts each duration in the bucket its bounds name and reads percentiles back", ({ expect }) => {
    expect([0, 0.5, 0.6, 1, 59_999, 60_000, 60_001].map(durationBucket)).toEqual([0, 0, 1, 1, 31, 31, 32]);
    const counts = new Array<number>(33).fill(0);
    counts[durationBucket(10)] = 99;
    counts[durationBucket(1000)] = 1;
    expect(percentile(counts, 0.5)).toBeGreaterThan(7.5);
    expect(percentile(counts, 0.5)).toBeLessThanOrEqual(10);
    expect(percentile(counts, 1)).toBe(1000);
    expect(percentile(new Array<number>(33).fill(0), 0.5)).toBeNull();
  });
});

describe("when the queue is unavailable", () => {
  const brokenQueue = {
    send: () => Promise.reject(new Error("Queue is unavailable")),
    sendBatch: () => Promise.reject(new Error("Queue is unavailable")),
  } as unknown as Queue;

  it("still answers the call, loses its row and counts the loss in the metrics", async ({ expect }) => {
    const gateway = await demoGateway();
    const ctx = createExecutionContext();
    const response = await handleMcpRequest(
      { ...env, CALL_LOGS: brokenQueue },
      new Request(`${ORIGIN}/mcp`, {
        method: "POST",
        headers: {
          authorization: `Bearer ${gateway.clientKey}`,
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
          "mcp-protocol-version": "2025-06-18",
        },
        body: JSON.stringify({
          jsonrpc: "2.0",
          id: 1,
          method: "tools/call",
          params: { name: "demo__search_release_notes", arguments: { query: "sso" } },
        }),
      }),
      ctx,
    );
    expect(response.status).toBe(200);
    const answer = (await response.json()) as { result: { structuredContent: { items: unknown[] } } };
    expect(answer.result.structuredContent.items).toHaveLength(1);
    await waitOnExecutionContext(ctx);
    const metrics = await api(`/v1/workspaces/${gateway.ws}/metrics`, { key: gateway.adminKey });
    expect(metrics.body.totals).toMatchObject({ calls: 0, lost: 1 });
    expect((await api(`/v1/workspaces/${gateway.ws}/logs`, { key: gateway.adminKey })).body.calls).toEqual([]);
  });

  it("counts every message of a failed send, per workspace and minute", async ({ expect }) => {
    const { ws, adminKey } = await createWorkspace();
    await sendCallLogs({ ...env, CALL_LOGS: brokenQueue }, [message(ws, "req_a"), message(ws, "req_b"), message(ws, "req_c")]);
    expect((await api(`/v1/workspaces/${ws}/metrics`, { key: adminKey })).body.totals.lost).toBe(3);
  });
});

describe("packets", () => {
  /** The real queues, each send counted with its lane, the calls it carried and its bytes. */
  const counted = () => {
    const sends: { lane: "shared" | "overflow"; calls: number; bytes: number }[] = [];
    const counting = (lane: "shared" | "overflow", queue: Queue): Queue =>
      ({
        send: (body: CallLogPacket, options?: QueueSendOptions) => {
          sends.push({ lane, calls: body.packet.length, bytes: new TextEncoder().encode(JSON.stringify(body)).byteLength });
          return queue.send(body, options);
        },
      }) as Queue;
    return {
      env: { ...env, CALL_LOGS: counting("shared", env.CALL_LOGS), CALL_LOGS_OVERFLOW: counting("overflow", env.CALL_LOGS_OVERFLOW) },
      sends,
    };
  };
  const callsOn = (sends: { lane: string; calls: number }[], lane: string) =>
    sends.filter((send) => send.lane === lane).map((send) => send.calls);

  it("carry an isolate's calls in a few queue messages, each lane's apart, and every call gets its row", async ({ expect }) => {
    const ws = `ws_packets_${crypto.randomUUID().slice(0, 8)}`;
    const { env: counting, sends } = counted();
    // Sent one at a time, as calls end: the first 200 within the workspace's share, the rest past it (a loaded
    // machine's clock may refill a place or two of the share meanwhile).
    await Promise.all(Array.from({ length: 250 }, (_, index) => sendCallLogs(counting, [message(ws, `req_${index}`)])));
    const shared = callsOn(sends, "shared");
    const overflow = callsOn(sends, "overflow");
    expect(shared.slice(0, 2)).toEqual([100, 100]);
    expect(shared.length).toBeLessThanOrEqual(3);
    expect(overflow.length).toBe(1);
    expect([...shared, ...overflow].reduce((sum, calls) => sum + calls, 0)).toBe(250);
    expect(await until(20_000, async () => (await count("SELECT COUNT(*) AS n FROM calls WHERE workspace_id = ?", ws)) === 250)).toBe(true);
  });

  it("belong to the request that opened them: a call that joins one waits for nothing of it, its opener sends it", async ({ expect }) => {
    const ws = `ws_packet_owner_${crypto.randomUUID().slice(0, 8)}`;
    const { env: counting, sends } = counted();
    const opener = sendCallLogs(counting, [message(ws, "req_opener")]);
    // Another request's call: it joins the open packet and is done at once, before anything is sent.
    await sendCallLogs(counting, [message(ws, "req_joined")]);
    expect(sends).toEqual([]);
    await opener;
    expect(callsOn(sends, "shared")).toEqual([2]);
    expect(await until(20_000, async () => (await count("SELECT COUNT(*) AS n FROM calls WHERE workspace_id = ?", ws)) === 2)).toBe(true);
  });

  it("stay within a queue message's bytes", async ({ expect }) => {
    const ws = `ws_packet_bytes_${crypto.randomUUID().slice(0, 8)}`;
    const { env: counting, sends } = counted();
    // Ten calls of about 20 KB each (ten stage rows with 1.9 KB of details): two packets.
    const large = (requestId: string) => {
      const built = message(ws, requestId, { stages: 10 });
      for (const stage of built.stages) stage.details = { reason: "x".repeat(1900) };
      return built;
    };
    await sendCallLogs(
      counting,
      Array.from({ length: 10 }, (_, index) => large(`req_${index}`)),
    );
    expect(sends.map((send) => send.calls)).toEqual([5, 5]);
    for (const send of sends) expect(send.bytes).toBeLessThanOrEqual(PACKET_BYTES);
    expect(await until(20_000, async () => (await count("SELECT COUNT(*) AS n FROM calls WHERE workspace_id = ?", ws)) === 10)).toBe(true);
  });

  it("are read by the consumer beside single-call messages, and a bad call in a packet drops alone", async ({ expect }) => {
    const ws = `ws_packet_read_${crypto.randomUUID().slice(0, 8)}`;
    const packet = { v: 1, packet: [message(ws, "req_a"), { ...message(ws, "req_bad"), v: 2 }, message(ws, "req_b")] };
    expect(await consume([packet as unknown as CallLogMessage, message(ws, "req_c")])).toMatchObject({ ackAll: true });
    const { results } = await env.DB.prepare("SELECT request_id FROM calls WHERE workspace_id = ? ORDER BY request_id").bind(ws).all();
    expect(results).toEqual([{ request_id: "req_a" }, { request_id: "req_b" }, { request_id: "req_c" }]);
  });
});

describe("one workspace's flood", () => {
  it("never holds another workspace's row back: the flood waits behind itself in the overflow lane, and every row lands (docs/logs.md)", async ({
    expect,
  }) => {
    const flooder = `ws_flood_${crypto.randomUUID().slice(0, 8)}`;
    // Packets carry 100 calls each, so a flood must be this large to outlast a few consumer batches.
    const FLOOD = 20_000;
    const landed = (sql = "1") => count(`SELECT COUNT(*) AS n FROM calls WHERE workspace_id = ? AND ${sql}`, flooder);
    const gateway = await demoGateway();
    const client = await connectMcp(gateway.clientKey);
    // The flood, through the call path's own producer, at once: its share goes to the shared lane, the rest to the
    // overflow lane.
    const sent = Date.now();
    await sendCallLogs(
      env,
      Array.from({ length: FLOOD }, (_, index) => message(flooder, `req_${String(index).padStart(5, "0")}`)),
    );
    // Then the other workspace's call, behind all of it in time.
    await client.callTool({ name: "demo__search_release_notes", arguments: { query: "sso" } });
    const called = Date.now();
    let mineAt: number | null = null;
    let floodWhenMine = 0;
    while (mineAt === null && Date.now() - called < 60_000) {
      if ((await api(`/v1/workspaces/${gateway.ws}/logs`, { key: gateway.adminKey })).body.calls.length === 1) {
        mineAt = Date.now();
        floodWhenMine = await landed();
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(mineAt, "the other workspace's row landed").not.toBeNull();
    console.log(
      `flood of ${FLOOD} sent in ${called - sent} ms; the other workspace's row landed ${mineAt! - called} ms after its call, with ${floodWhenMine} flood rows in`,
    );
    // Its row waited for at most the flooder's share (200) of the shared lane and the batches in flight, not the
    // flood: most of the flood was still queued when it landed (FIFO would have landed all 20,000 first).
    expect(floodWhenMine).toBeLessThan(FLOOD / 2);
    expect(mineAt! - called).toBeLessThanOrEqual(10_000);
    // And the flood is all there in the end: the overflow lane delays, it never drops.
    expect(await until(120_000, async () => (await landed()) === FLOOD)).toBe(true);
  }, 200_000);
});

describe("the fair share", () => {
  it("puts a workspace's first 200 messages in the shared lane, then 50 a second, and the rest in the overflow lane", ({ expect }) => {
    const ws = `ws_share_${crypto.randomUUID().slice(0, 8)}`;
    const at = 1_000_000;
    const lanes = (count: number, now: number) => Array.from({ length: count }, () => laneFor(ws, now));
    expect(lanes(FAIR_LANE_BURST, at).every((lane) => lane === "shared")).toBe(true);
    expect(lanes(5, at)).toEqual(Array(5).fill("overflow"));
    // A second later, 50 more places; another workspace has its own share all along.
    expect(lanes(FAIR_LANE_PER_SECOND + 1, at + 1000).filter((lane) => lane === "shared")).toHaveLength(FAIR_LANE_PER_SECOND);
    expect(laneFor(`${ws}_other`, at + 1000)).toBe("shared");
    // An idle minute refills the share to its burst, never past it.
    expect(lanes(FAIR_LANE_BURST + 1, at + 61_000).filter((lane) => lane === "shared")).toHaveLength(FAIR_LANE_BURST);
  });
});

describe("retention", () => {
  it("removes call rows, stage rows and rollups past 30 days, and nothing newer", async ({ expect }) => {
    const ws = `ws_retain_${crypto.randomUUID().slice(0, 8)}`;
    const day = 24 * 3600 * 1000;
    await consume([message(ws, "req_old", { at: Date.now() - 31 * day, stages: 1 }), message(ws, "req_new", { stages: 1 })]);
    const state = async () => ({
      calls: await count("SELECT COUNT(*) AS n FROM calls WHERE workspace_id = ?", ws),
      stages: await count("SELECT COUNT(*) AS n FROM call_logs WHERE workspace_id = ?", ws),
      rollups: await count("SELECT SUM(calls) AS n FROM call_rollups WHERE workspace_id = ?", ws),
    });
    expect(await state()).toEqual({ calls: 2, stages: 2, rollups: 2 });
    await applyLogRetention(env.DB);
    expect(await state()).toEqual({ calls: 1, stages: 1, rollups: 1 });
    const { results } = await env.DB.prepare("SELECT request_id FROM calls WHERE workspace_id = ?").bind(ws).all();
    expect(results).toEqual([{ request_id: "req_new" }]);
  });
});

/** A span as OTLP/HTTP JSON carries it. */
interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  startTimeUnixNano: string;
  endTimeUnixNano: string;
  attributes: { key: string; value: Record<string, unknown> }[];
}

describe("OpenTelemetry export", () => {
  it("sends a call as a trace: the call's span, child spans for its hook stages and its upstream request, standard attributes", async ({
    expect,
  }) => {
    const tag = newTag();
    const ws = `ws_otel_${tag}`;
    const at = Date.now();
    const hooked = message(ws, "req_hooked", { at, durationMs: 20 });
    hooked.call.upstreamOffsetMs = 6;
    hooked.call.upstreamMs = 9;
    hooked.stages = [
      stageRow({ toolUid: "tool_t", requestId: "req_hooked" }, { stage: "before", outcome: "continue", durationMs: 2, offsetMs: 1 }),
      stageRow({ toolUid: "tool_t", requestId: "req_hooked" }, { stage: "after", outcome: "return", durationMs: 3, offsetMs: 16 }),
      stageRow(
        { toolUid: "tool_t", requestId: "req_hooked" },
        { stage: "after", channel: "shadow", outcome: "return", durationMs: 3, offsetMs: 16, shadowDiffered: true },
      ),
    ];
    const batch = createMessageBatch<CallLogMessage>(QUEUE, [{ id: "otel-1", timestamp: new Date(), attempts: 1, body: hooked }]);
    await consumeCallLogs(batch as MessageBatch<unknown>, {
      ...env,
      OTEL_EXPORTER_OTLP_ENDPOINT: `${upstreamOrigin()}/fixtures/otlp/${tag}`,
      OTEL_EXPORTER_OTLP_HEADERS: "authorization=Bearer%20collector-token,x-team=gateway",
    });
    const received = (await (await fetch(`${upstreamOrigin()}/fixtures/otlp/${tag}`)).json()) as {
      exports: { headers: Record<string, string>; body: { resourceSpans: { scopeSpans: { spans: OtlpSpan[] }[] }[] } }[];
    };
    expect(received.exports).toHaveLength(1);
    expect(received.exports[0]!.headers).toMatchObject({ authorization: "Bearer collector-token", "x-team": "gateway" });
    const spans = received.exports[0]!.body.resourceSpans.flatMap((resource) => resource.scopeSpans.flatMap((scope) => scope.spans));
    const attributes = (span: OtlpSpan) => Object.fromEntries(span.attributes.map(({ key, value }) => [key, Object.values(value)[0]]));
    const call = spans.find((span) => span.kind === 2)!;
    expect(call.name).toBe("tools/call demo__search_release_notes");
    expect(attributes(call)).toMatchObject({
      "mcp.method.name": "tools/call",
      "gen_ai.operation.name": "execute_tool",
      "gen_ai.tool.name": "demo__search_release_notes",
      "enduser.id": "key:key_test",
      "rayrun.request_id": "req_hooked",
      "rayrun.outcome": "ok",
    });
    const children = spans.filter((span) => span.parentSpanId === call.spanId);
    expect(children.map((span) => span.name).sort()).toEqual(["hook after", "hook after (shadow)", "hook before", "upstream tools/call"]);
    for (const child of children) expect(child.traceId).toBe(call.traceId);
    const startNs = BigInt(at) * 1_000_000n;
    const before = children.find((span) => span.name === "hook before")!;
    expect(BigInt(before.startTimeUnixNano) - startNs).toBe(1_000_000n);
    expect(BigInt(before.endTimeUnixNano) - startNs).toBe(3_000_000n);
    const upstream = children.find((span) => span.kind === 3)!;
    expect([BigInt(upstream.startTimeUnixNano) - startNs, BigInt(upstream.endTimeUnixNano) - startNs]).toEqual([6_000_000n, 15_000_000n]);
    expect(attributes(children.find((span) => span.name === "hook after (shadow)")!)).toMatchObject({ "rayrun.shadow_differed": true });
  });

  it("retries the batch when the collector refuses it, and the retry adds no row", async ({ expect }) => {
    const ws = `ws_otel_refused_${newTag()}`;
    const batch = createMessageBatch<CallLogMessage>(QUEUE, [
      { id: "otel-2", timestamp: new Date(), attempts: 1, body: message(ws, "req_x") },
    ]);
    const ctx = createExecutionContext();
    // The demo upstream answers 404 for a path it does not serve: the collector did not take the export.
    await consumeCallLogs(batch as MessageBatch<unknown>, { ...env, OTEL_EXPORTER_OTLP_ENDPOINT: `${upstreamOrigin()}/no-collector-here` });
    expect(await getQueueResult(batch, ctx)).toMatchObject({ ackAll: false, retryBatch: { retry: true } });
    // The rows were written before the export; the retry (here without a collector) skips them.
    expect(await consume([message(ws, "req_x")], 2)).toMatchObject({ ackAll: true });
    expect(await count("SELECT COUNT(*) AS n FROM calls WHERE workspace_id = ?", ws)).toBe(1);
  });
});
