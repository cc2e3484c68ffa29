import { createExecutionContext, createMessageBatch, env, getQueueResult } from "cloudflare:test";
import { describe, it } from "vitest";
import worker from "../index.ts";
import { api, connectMcp, createKey, createWorkspace, demoGateway, eventually } from "../../test/helpers.ts";
import { callLogMessage, gatewayCallRow, jsonBytes } from "../calls/call-rows.ts";
import type { CallLogMessage } from "./call-log.ts";

/** `count` call rows for a workspace, straight through the real consumer (no upstream needed). */
async function seedCalls(workspaceId: string, count: number) {
  const messages: CallLogMessage[] = Array.from({ length: count }, (_, index) =>
    callLogMessage(
      gatewayCallRow(
        { workspaceId, actor: index % 2 ? "key:key_odd" : "key:key_even", keyId: "key_x", grantedBy: null, profileId: null },
        {
          requestId: `req_${String(index).padStart(4, "0")}`,
          callIndex: null,
          name: "demo__search_release_notes",
          bytesIn: jsonBytes({}),
          bytesOut: jsonBytes(null),
          startedAt: Date.now(),
          durationMs: 1,
          outcome: index % 5 ? "ok" : "refused",
          code: index % 5 ? null : "invalid_arguments",
        },
      ),
      [],
      false,
    ),
  );
  for (let start = 0; start < messages.length; start += 100) {
    const batch = createMessageBatch<CallLogMessage>(
      "rayrun-call-logs",
      messages.slice(start, start + 100).map((body, index) => ({ id: `seed-${start + index}`, timestamp: new Date(), attempts: 1, body })),
    );
    const ctx = createExecutionContext();
    await worker.queue(batch as MessageBatch<unknown>, env);
    await getQueueResult(batch, ctx);
  }
}

describe("GET /v1/workspaces/{ws}/logs", () => {
  it("pages past any count with cursors, filters by actor, outcome and code, and answers JSON lines", async ({ expect }) => {
    const { ws, adminKey } = await createWorkspace();
    await seedCalls(ws, 450);
    const seen = new Set<string>();
    let cursor: string | null = null;
    let pages = 0;
    do {
      const page: { body: { calls: { requestId: string }[]; nextCursor: string | null } } = await api(
        `/v1/workspaces/${ws}/logs?limit=200${cursor ? `&cursor=${cursor}` : ""}`,
        { key: adminKey },
      );
      for (const call of page.body.calls) seen.add(call.requestId);
      cursor = page.body.nextCursor;
      pages++;
    } while (cursor);
    expect(seen.size).toBe(450);
    expect(pages).toBe(3);

    const odd = await api(`/v1/workspaces/${ws}/logs?actor=key:key_odd&limit=1000`, { key: adminKey });
    expect(odd.body.calls).toHaveLength(225);
    const refused = await api(`/v1/workspaces/${ws}/logs?outcome=refused&code=invalid_arguments&limit=1000`, { key: adminKey });
    expect(refused.body.calls).toHaveLength(90);
    const one = await api(`/v1/workspaces/${ws}/logs?requestId=req_0007`, { key: adminKey });
    expect(one.body.calls.map((call: { requestId: string }) => call.requestId)).toEqual(["req_0007"]);

    const lines = await api(`/v1/workspaces/${ws}/logs?format=jsonl&limit=2`, { key: adminKey });
    expect(lines.headers.get("content-type")).toBe("application/x-ndjson");
    expect(
      (lines.body as string)
        .trim()
        .split("\n")
        .map((line) => JSON.parse(line).requestId),
    ).toEqual(["req_0449", "req_0448"]);
    const next = await api(`/v1/workspaces/${ws}/logs?format=jsonl&limit=2&cursor=${lines.headers.get("x-next-cursor")}`, {
      key: adminKey,
    });
    expect(
      (next.body as string)
        .trim()
        .split("\n")
        .map((line) => JSON.parse(line).requestId),
    ).toEqual(["req_0447", "req_0446"]);
  });

  it("refuses bad filter values with 400 invalid_request naming the field, and another workspace's cursor with 404", async ({ expect }) => {
    const { ws, adminKey } = await createWorkspace();
    const other = await createWorkspace();
    await seedCalls(other.ws, 3);
    const bad = {
      "outcome=maybe": "query.outcome",
      "kind=tools/list": "query.kind",
      "since=yesterday": "query.since",
      "limit=0": "query.limit",
      "limit=1001": "query.limit",
      "tool=%27%20OR%201%3D1": "query.tool",
      "code=NOT_A_CODE": "query.code",
      "cursor=%2F%2F": "query.cursor",
      "cursor=bm90LWEtY3Vyc29y": "query.cursor",
      [`requestId=${"r".repeat(129)}`]: "query.requestId",
    };
    for (const [query, field] of Object.entries(bad)) {
      const res = await api(`/v1/workspaces/${ws}/logs?${query}`, { key: adminKey });
      expect(res.status, query).toBe(400);
      expect(res.body.error.code, query).toBe("invalid_request");
      expect(res.body.error.details.issues[0].field, query).toBe(field);
    }
    const page = await api(`/v1/workspaces/${other.ws}/logs?limit=1`, { key: other.adminKey });
    expect(page.body.nextCursor).toEqual(expect.any(String));
    const foreign = await api(`/v1/workspaces/${ws}/logs?cursor=${page.body.nextCursor}`, { key: adminKey });
    expect(foreign.status).toBe(404);
    expect(foreign.body.error.code).toBe("not_found");

    const metrics = await api(`/v1/workspaces/${ws}/metrics?since=2026-01-01T00:00:00Z&until=2026-03-01T00:00:00Z`, { key: adminKey });
    expect(metrics.status).toBe(400);
    expect(metrics.body.error.code).toBe("invalid_request");
    const points = await api(`/v1/workspaces/${ws}/metrics?since=2026-01-01T00:00:00Z&until=2026-01-03T00:00:00Z&step=1`, {
      key: adminKey,
    });
    expect(points.status).toBe(400);
    expect(points.body.error.details.issues[0].field).toBe("query.step");
  });

  it("is for hooks:read keys; the item of a content call only for readers who see details", async ({ expect }) => {
    const gateway = await demoGateway();
    const client = await connectMcp(gateway.clientKey);
    await client.readResource({ uri: "rayrun://demo/notes://release/2.3.1" });
    const admin = await eventually(
      () => api(`/v1/workspaces/${gateway.ws}/logs?kind=resources/read`, { key: gateway.adminKey }),
      (res) => res.body.calls?.length === 1,
    );
    expect(admin.body.calls[0]).toMatchObject({ kind: "resources/read", outcome: "ok", item: "notes://release/2.3.1" });
    const reader = await createKey(gateway, ["hooks:read"]);
    const plain = await api(`/v1/workspaces/${gateway.ws}/logs?kind=resources/read`, { key: reader });
    expect(plain.body.calls[0]).not.toHaveProperty("item");
    expect((await api(`/v1/workspaces/${gateway.ws}/logs`, { key: gateway.clientKey })).status).toBe(403);
  });
});

describe("GET /v1/workspaces/{ws}/logs/{requestId}", () => {
  it("answers a call with its rows, and 404 for a request id the workspace does not have", async ({ expect }) => {
    const { ws, adminKey } = await createWorkspace();
    await seedCalls(ws, 1);
    const found = await api(`/v1/workspaces/${ws}/logs/req_0000`, { key: adminKey });
    expect(found.status).toBe(200);
    expect(found.body).toMatchObject({ calls: [{ requestId: "req_0000", outcome: "refused" }], stages: [] });
    const other = await createWorkspace();
    const missing = await api(`/v1/workspaces/${other.ws}/logs/req_0000`, { key: other.adminKey });
    expect(missing.status).toBe(404);
    expect(missing.body.error.code).toBe("not_found");
    const malformed = await api(`/v1/workspaces/${ws}/logs/${encodeURIComponent("req 0")}`, { key: adminKey });
    expect(malformed.status).toBe(400);
  });
});
