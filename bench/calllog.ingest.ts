// Call-log ingestion inside workerd: the real consumer writing batches of 100 call-log messages to the local D1, with
// every D1 statement counted. Printed by bench/run.ts as calls logged per second and statements per 1,000 calls
// (target ≤ 20), beside one INSERT per call (the way rows were written before the queue) measured in the same run.
import { env } from "cloudflare:test";
import { callLogMessage, gatewayCallRow, jsonBytes, stageRow } from "../worker/calls/call-rows.ts";
import type { CallLogMessage } from "../worker/logs/call-log.ts";
import { callLogStatements } from "../worker/logs/log-store.ts";

const BATCH = 100;

function messages(workspaceId: string, count: number, hooked: boolean): CallLogMessage[] {
  return Array.from({ length: count }, (_, index) => {
    const requestId = `req_${workspaceId}_${index}`;
    const row = gatewayCallRow(
      { workspaceId, actor: `key:key_${index % 7}`, keyId: `key_${index % 7}`, grantedBy: null, profileId: "prof_bench" },
      {
        requestId,
        callIndex: null,
        name: `demo__tool_${index % 5}`,
        bytesIn: jsonBytes({ query: "bench" }),
        bytesOut: jsonBytes({ content: [{ type: "text", text: "x".repeat(200) }] }),
        startedAt: Date.now(),
        durationMs: 1 + (index % 40),
        outcome: index % 10 ? "ok" : "refused",
        code: index % 10 ? null : "invalid_arguments",
      },
    );
    const stages = hooked
      ? (["before", "after"] as const).map((stage) =>
          stageRow({ toolUid: "tool_bench", requestId }, { stage, outcome: "continue", durationMs: 0.4 }),
        )
      : [];
    return callLogMessage(row, stages, false);
  });
}

/** D1 statements the database was asked to run: each statement of a batch, each one run on its own. */
function counting(db: D1Database): { db: D1Database; statements: () => number } {
  let statements = 0;
  // D1's batch needs its own statement objects, not the proxies around them.
  const unwrapped = new WeakMap<D1PreparedStatement, D1PreparedStatement>();
  const counted = (statement: D1PreparedStatement): D1PreparedStatement => {
    const proxy = new Proxy(statement, {
      get(target, name) {
        const value = Reflect.get(target, name, target) as unknown;
        if (typeof value !== "function") return value;
        if (name === "bind") return (...args: unknown[]) => counted(target.bind(...args));
        if (name === "run" || name === "all" || name === "first" || name === "raw") {
          return (...args: unknown[]) => {
            statements++;
            return (value as (...a: unknown[]) => unknown).apply(target, args);
          };
        }
        return (value as (...a: unknown[]) => unknown).bind(target);
      },
    });
    unwrapped.set(proxy, statement);
    return proxy;
  };
  const wrapped = {
    batch: (list: D1PreparedStatement[]) => {
      statements += list.length;
      return db.batch(list.map((statement) => unwrapped.get(statement) ?? statement));
    },
    prepare: (sql: string) => counted(db.prepare(sql)),
  } as unknown as D1Database;
  return { db: wrapped, statements: () => statements };
}

export async function benchCallLogIngestion(calls = 10_000) {
  const figures: Record<string, { calls: number; ms: number; callsPerSecond: number; statementsPer1000: number }> = {};
  for (const [name, hooked] of [
    ["plain", false],
    ["hooked", true],
  ] as const) {
    const workspace = `ws_bench_${name}_${crypto.randomUUID().slice(0, 8)}`;
    const all = messages(workspace, calls, hooked);
    const { db, statements } = counting(env.DB);
    const started = performance.now();
    for (let start = 0; start < all.length; start += BATCH) await db.batch(callLogStatements(db, all.slice(start, start + BATCH)));
    const ms = performance.now() - started;
    figures[name] = { calls, ms, callsPerSecond: (calls / ms) * 1000, statementsPer1000: (statements() / calls) * 1000 };
  }
  // The baseline: one INSERT per call, as the call path wrote rows before the queue.
  const baselineCalls = Math.min(calls, 1000);
  const { db, statements } = counting(env.DB);
  const started = performance.now();
  for (let index = 0; index < baselineCalls; index++) {
    await db
      .prepare(
        "INSERT INTO call_logs (workspace_id, tool_uid, request_id, stage, channel, outcome, duration_ms, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
      )
      .bind("ws_bench_baseline", "tool_bench", `req_${index}`, "upstream", "active", "ok", 1, new Date().toISOString())
      .run();
  }
  const ms = performance.now() - started;
  figures.perCallInsert = {
    calls: baselineCalls,
    ms,
    callsPerSecond: (baselineCalls / ms) * 1000,
    statementsPer1000: (statements() / baselineCalls) * 1000,
  };
  return figures;
}
