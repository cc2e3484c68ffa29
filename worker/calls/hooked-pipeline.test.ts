import { env } from "cloudflare:test";
import { describe, it } from "vitest";
import { api, connectMcp, createKey, eventually, gatewayError, upstreamReceived } from "../../test/helpers.ts";
import { hookGateway, SEARCH_HOOK } from "../hooks/lifecycle/lifecycle.fixtures.ts";
import { LOG_DETAIL_ALLOWANCE_BYTES, LOG_DETAIL_ROW_BYTES } from "../logs/log-details.ts";
import { applyLogRetention } from "../logs/logs.store.ts";

/** Every isolate failure, chosen by the query so the hook's own tests (query "sso") pass. */
const HOSTILE_HOOK = `export default defineToolAdapter({
  apiVersion: "rayrun.hooks/v1",
  before({ arguments: args, context }) {
    switch (args.query) {
      case "timeout": while (true) {}
      case "memory_exceeded": { let s = "x".repeat(1 << 20); while (s.length < 2 ** 28) s += s; return { action: "continue", arguments: { query: s } }; }
      case "sparse flat": [new Array(1e8)].flat(); return { action: "continue", arguments: args };
      case "stack_overflow": { const f = () => f(); return f(); }
      case "exception": throw new Error("boom");
      case "invalid_return": return { action: "reject", reason: "Has Spaces", message: "no" };
      case "output_too_large": return { action: "continue", arguments: { query: "x".repeat(2 * 1024 * 1024) } };
      case "unresolved_promise": return new Promise(() => {});
      case "log_limit": for (let i = 0; i < 1000; i++) context.log.info("spam"); return { action: "continue", arguments: args };
      case "reject": return { action: "reject", reason: "query_forbidden", message: "That search is not allowed" };
      case "bad upstream arguments": return { action: "continue", arguments: { query: 42 } };
      case "needs approval": return { action: "require_approval", arguments: { query: "approved " + args.query }, reason: "sensitive_search" };
      default: return { action: "continue", arguments: args };
    }
  },
  after({ result, arguments: args }) {
    if (args.query === "bad output") return { action: "return", result: { items: "not an array" } };
    if (args.query === "fail after") return { action: "fail", reason: "result_withheld", message: "Results are withheld" };
    return { action: "return", result: { items: result.items.map((item) => ({ ...item, summary: "[redacted]" })) } };
  },
});
`;

type Gateway = Awaited<ReturnType<typeof hookGateway>>;

async function deployed(gateway: Gateway, source: string, slot: "active" | "shadow" = "active", config: Record<string, unknown> = {}) {
  const { revisionId } = await gateway.tested(source, config);
  const res = await gateway.deploy(slot, revisionId);
  if (res.status !== 200) throw new Error(`deploy: ${res.status} ${JSON.stringify(res.body)}`);
  return revisionId;
}

async function logsOf(gateway: Gateway, key = gateway.adminKey, query = ""): Promise<any[]> {
  return (await api(`${gateway.base()}/logs${query}`, { key })).body.logs;
}

describe("hooked tool calls", () => {
  it("sends the before rewrite upstream and returns the after transform", async ({ expect }) => {
    const gateway = await hookGateway();
    const revisionId = await deployed(gateway, SEARCH_HOOK, "active", { prefix: "release " });
    const client = await connectMcp(gateway.clientKey);
    const result = await client.callTool({ name: "demo__search_release_notes", arguments: { query: "sso" } });
    expect(result.isError).toBeFalsy();
    expect((await upstreamReceived(gateway.tag)).calls.map((call) => call.arguments)).toEqual([{ query: "release sso" }]);
    expect(result.structuredContent).toEqual({
      items: [{ version: "2.2.0", date: "2026-05-11", title: "SSO", summary: "SAML single sign-on for enterprise plans." }],
    });
    const logs = await eventually(
      () => logsOf(gateway),
      (rows) => rows.length === 2,
    );
    expect(logs.map((row) => [row.stage, row.channel, row.outcome, row.revisionId])).toEqual([
      ["after", "active", "return", revisionId],
      ["before", "active", "continue", revisionId],
    ]);
    expect(logs.every((row) => typeof row.durationMs === "number" && row.requestId === logs[0].requestId)).toBe(true);
  });

  it("fails closed on a rejection and on every isolate failure, without contacting the upstream", async ({ expect }) => {
    const gateway = await hookGateway();
    await deployed(gateway, HOSTILE_HOOK);
    const client = await connectMcp(gateway.clientKey);
    const reject = await client.callTool({ name: "demo__search_release_notes", arguments: { query: "reject" } });
    expect(reject.isError).toBe(true);
    expect(gatewayError(reject)).toMatchObject({
      code: "query_forbidden",
      message: "That search is not allowed",
      details: { source: "hook" },
    });

    for (const code of [
      "timeout",
      "memory_exceeded",
      "stack_overflow",
      "exception",
      "invalid_return",
      "output_too_large",
      "unresolved_promise",
      "log_limit",
    ]) {
      const result = await client.callTool({ name: "demo__search_release_notes", arguments: { query: code } });
      expect(result.isError, code).toBe(true);
      expect(gatewayError(result), code).toEqual({
        code: "hook_failed",
        message: "The tool's hook failed, so the call was stopped",
        details: { tool: "demo__search_release_notes", error: { code } },
      });
    }
    // Native work found through an argument (a sparse array of length 1e8 inside flat) is bounded too: no live call is held.
    const sparse = await client.callTool({ name: "demo__search_release_notes", arguments: { query: "sparse flat" } });
    expect(gatewayError(sparse)).toEqual({
      code: "hook_failed",
      message: "The tool's hook failed, so the call was stopped",
      details: { tool: "demo__search_release_notes", error: { code: "timeout" } },
    });
    expect((await upstreamReceived(gateway.tag)).calls).toEqual([]);
    const logs = await eventually(
      () => logsOf(gateway, gateway.adminKey, "?stage=before&outcome=error"),
      (rows) => rows.length === 9,
    );
    expect(logs.map((row) => row.code).sort()).toEqual([
      "exception",
      "invalid_return",
      "log_limit",
      "memory_exceeded",
      "output_too_large",
      "stack_overflow",
      "timeout",
      "timeout",
      "unresolved_promise",
    ]);
    const ok = await client.callTool({ name: "demo__search_release_notes", arguments: { query: "sso" } });
    expect(ok.isError).toBeFalsy();
  });

  it("refuses transformed arguments that fail the upstream schema before dispatch", async ({ expect }) => {
    const gateway = await hookGateway();
    await deployed(gateway, HOSTILE_HOOK);
    const client = await connectMcp(gateway.clientKey);
    const result = await client.callTool({ name: "demo__search_release_notes", arguments: { query: "bad upstream arguments" } });
    expect(gatewayError(result)).toMatchObject({
      code: "invalid_upstream_arguments",
      details: { violations: [{ pointer: "/query", message: expect.stringContaining("string") }] },
    });
    expect((await upstreamReceived(gateway.tag)).calls).toEqual([]);
    const logs = await eventually(
      () => logsOf(gateway, gateway.adminKey, "?stage=pre_dispatch"),
      (rows) => rows.length === 1,
    );
    expect(logs[0]).toMatchObject({ outcome: "refused", code: "invalid_upstream_arguments" });
  });

  it("fails closed when the after result breaks the public output schema, and on an after failure", async ({ expect }) => {
    const gateway = await hookGateway();
    await deployed(gateway, HOSTILE_HOOK);
    const client = await connectMcp(gateway.clientKey);
    const invalid = await client.callTool({ name: "demo__search_release_notes", arguments: { query: "bad output" } });
    expect(gatewayError(invalid)).toMatchObject({ code: "invalid_output", details: { violations: [{ pointer: "/items" }] } });
    const failed = await client.callTool({ name: "demo__search_release_notes", arguments: { query: "fail after" } });
    expect(gatewayError(failed)).toMatchObject({ code: "result_withheld", message: "Results are withheld" });
  });

  it("applies the projection to the after transform's result", async ({ expect }) => {
    const gateway = await hookGateway("lookup_customer");
    const hook = `export default defineToolAdapter({
      apiVersion: "rayrun.hooks/v1",
      after({ result }) { return { action: "return", result: { ...result, phone: "hidden" } }; },
    });`;
    const saved = await gateway.saveLatest({ source: hook, config: {} });
    const test = await gateway.test({
      stage: "after",
      arguments: { email: "ada@example.com" },
      result: { name: "Ada", email: "ada@example.com", phone: "1", plan: "team" },
    });
    expect(test.body.passed).toBe(true);
    const revision = await gateway.createRevision(saved.body.versionId);
    await gateway.deploy("active", revision.body.revisionId);
    await api(`/v1/workspaces/${gateway.ws}/tools/${gateway.toolUid}/projection`, {
      method: "PUT",
      key: gateway.adminKey,
      body: { fields: ["name", "phone"] },
    });
    const client = await connectMcp(gateway.clientKey);
    const result = await client.callTool({ name: "demo__lookup_customer", arguments: { email: "ada@example.com" } });
    expect(result.structuredContent).toEqual({ name: "Ada Lovelace", phone: "hidden" });
  });

  it("returns an upstream error as is, without running after, and logs it", async ({ expect }) => {
    const gateway = await hookGateway("export_report");
    const hook = `export default defineToolAdapter({
      apiVersion: "rayrun.hooks/v1",
      after({ result }) { return { action: "return", result: { content: [{ type: "text", text: "rewritten" }] } }; },
    });`;
    const saved = await gateway.saveLatest({ source: hook, config: {} });
    await gateway.test({ stage: "after", arguments: { month: "2026-10" }, result: { content: [{ type: "text", text: "ok" }] } });
    const revision = await gateway.createRevision(saved.body.versionId);
    await gateway.deploy("active", revision.body.revisionId);
    const client = await connectMcp(gateway.clientKey);
    const result = await client.callTool({ name: "demo__export_report", arguments: { month: "2026-10" } });
    expect(result).toEqual({ isError: true, content: [{ type: "text", text: "Report service unavailable: try again later" }] });
    const logs = await eventually(
      () => logsOf(gateway),
      (rows) => rows.length === 1,
    );
    expect(logs[0]).toMatchObject({ stage: "upstream", outcome: "upstream_error", revisionId: revision.body.revisionId });
  });

  it("keeps a block even when the hook would continue: the hook never runs", async ({ expect }) => {
    const gateway = await hookGateway();
    await deployed(gateway, SEARCH_HOOK);
    await api(`/v1/workspaces/${gateway.ws}/tools/${gateway.toolUid}/policy`, {
      method: "PUT",
      key: gateway.adminKey,
      body: { profileId: gateway.defaultProfileId, mode: "block" },
    });
    const client = await connectMcp(gateway.clientKey);
    await expect(client.callTool({ name: "demo__search_release_notes", arguments: { query: "sso" } })).rejects.toThrow("Unknown tool");
    const logs = await eventually(
      () => logsOf(gateway),
      (rows) => rows.length === 1,
    );
    expect(logs[0]).toMatchObject({ stage: "pre_dispatch", outcome: "refused", code: "tool_blocked" });
    expect((await upstreamReceived(gateway.tag)).calls).toEqual([]);
  });

  it("shows the active revision's public contract in discovery and validates against it", async ({ expect }) => {
    const gateway = await hookGateway();
    const hook = `export default defineToolAdapter({
      apiVersion: "rayrun.hooks/v1",
      publicContract: {
        description: "Search public release notes",
        inputSchema: { type: "object", properties: { q: { type: "string" } }, required: ["q"], additionalProperties: false },
      },
      before({ arguments: args }) { return { action: "continue", arguments: { query: args.q } }; },
    });`;
    const saved = await gateway.saveLatest({ source: hook, config: {} });
    expect((await gateway.test({ stage: "before", arguments: { q: "sso" } })).body.passed).toBe(true);
    const revision = await gateway.createRevision(saved.body.versionId);
    await gateway.deploy("active", revision.body.revisionId);
    const client = await connectMcp(gateway.clientKey);
    const listed = (await client.listTools()).tools.find((tool) => tool.name === "demo__search_release_notes")!;
    expect(listed.description).toBe("Search public release notes");
    expect(listed.inputSchema).toMatchObject({ properties: { q: { type: "string" } }, required: ["q"] });
    const wrong = await client.callTool({ name: "demo__search_release_notes", arguments: { query: "sso" } });
    expect(gatewayError(wrong).code).toBe("invalid_arguments");
    const right = await client.callTool({ name: "demo__search_release_notes", arguments: { q: "sso" } });
    expect(right.isError).toBeFalsy();
    expect((await upstreamReceived(gateway.tag)).calls.map((call) => call.arguments)).toEqual([{ query: "sso" }]);
  });
});

describe("hook-requested approvals", () => {
  it("binds the approval to the active revision and the transformed call, and runs it once", async ({ expect }) => {
    const gateway = await hookGateway();
    await deployed(gateway, HOSTILE_HOOK);
    const client = await connectMcp(gateway.clientKey);
    const call = () => client.callTool({ name: "demo__search_release_notes", arguments: { query: "needs approval" } });
    const first = gatewayError(await call());
    expect(first).toMatchObject({ code: "approval_required", details: { reason: "sensitive_search" } });
    const approval = await api(`/v1/workspaces/${gateway.ws}/approvals/${first.details.approvalId}`, { key: gateway.adminKey });
    expect(approval.body).toMatchObject({ source: "hook", arguments: { query: "approved needs approval" }, status: "pending" });
    await api(`/v1/workspaces/${gateway.ws}/approvals/${first.details.approvalId}/approve`, { method: "POST", key: gateway.adminKey });

    const run = await call();
    expect(run.isError).toBeFalsy();
    expect((await upstreamReceived(gateway.tag)).calls.map((c) => c.arguments)).toEqual([{ query: "approved needs approval" }]);
    expect(gatewayError(await call()).code).toBe("approval_required");
    expect((await upstreamReceived(gateway.tag)).calls).toHaveLength(1);
  });

  it("refuses an approval granted for a revision that is no longer active", async ({ expect }) => {
    const gateway = await hookGateway();
    await deployed(gateway, HOSTILE_HOOK);
    const client = await connectMcp(gateway.clientKey);
    const call = () => client.callTool({ name: "demo__search_release_notes", arguments: { query: "needs approval" } });
    const first = gatewayError(await call());
    await deployed(gateway, `// revision two\n${HOSTILE_HOOK}`);
    await api(`/v1/workspaces/${gateway.ws}/approvals/${first.details.approvalId}/approve`, { method: "POST", key: gateway.adminKey });
    const after = gatewayError(await call());
    expect(after.code).toBe("approval_required");
    expect(after.details.approvalId).not.toBe(first.details.approvalId);
    expect((await upstreamReceived(gateway.tag)).calls).toEqual([]);
  });
});

describe("shadow revisions", () => {
  it("runs shadow on the same inputs without touching the live call, and logs that it differed", async ({ expect }) => {
    const gateway = await hookGateway();
    const activeId = await deployed(gateway, SEARCH_HOOK);
    const throwing = `export default defineToolAdapter({
      apiVersion: "rayrun.hooks/v1",
      before({ arguments: args }) { if (args.query === "shadow boom") throw new Error("shadow broke"); return { action: "continue", arguments: args }; },
    });`;
    const shadowId = await deployed(gateway, throwing, "shadow");
    const client = await connectMcp(gateway.clientKey);
    const result = await client.callTool({ name: "demo__search_release_notes", arguments: { query: "shadow boom" } });
    expect(result.isError).toBeFalsy();
    expect((await upstreamReceived(gateway.tag)).calls.map((call) => call.arguments)).toEqual([{ query: "shadow boom" }]);
    const shadowLogs = await eventually(
      () => logsOf(gateway, gateway.adminKey, "?channel=shadow"),
      (rows) => rows.length === 1,
    );
    expect(shadowLogs[0]).toMatchObject({
      stage: "before",
      outcome: "error",
      code: "exception",
      revisionId: shadowId,
      shadowDiffered: true,
    });
    const active = await logsOf(gateway, gateway.adminKey, "?channel=active");
    expect(active.map((row) => row.revisionId)).toEqual([activeId, activeId]);
  });

  it("logs shadow as not differing when it decides the same", async ({ expect }) => {
    const gateway = await hookGateway();
    await deployed(gateway, SEARCH_HOOK);
    await deployed(gateway, `// same behaviour\n${SEARCH_HOOK}`, "shadow");
    const client = await connectMcp(gateway.clientKey);
    await client.callTool({ name: "demo__search_release_notes", arguments: { query: "sso" } });
    const shadowLogs = await eventually(
      () => logsOf(gateway, gateway.adminKey, "?channel=shadow"),
      (rows) => rows.length === 2,
    );
    expect(shadowLogs.map((row) => row.shadowDiffered)).toEqual([false, false]);
  });
});

describe("hook log details", () => {
  it("stores messages and logs only with payload capture, shows them only to hooks:write, and retention clears them", async ({
    expect,
  }) => {
    const gateway = await hookGateway();
    await deployed(gateway, SEARCH_HOOK);
    const client = await connectMcp(gateway.clientKey);
    await client.callTool({ name: "demo__search_release_notes", arguments: { query: "sso" } });
    const plain = await eventually(
      () => logsOf(gateway),
      (rows) => rows.length === 2,
    );
    expect(plain.map((row) => row.details)).toEqual([null, null]);

    await api(`/v1/workspaces/${gateway.ws}`, { method: "PATCH", key: gateway.adminKey, body: { detailPolicy: "payloads" } });
    await api(`/v1/workspaces/${gateway.ws}/services/${gateway.service.id}`, {
      method: "PATCH",
      key: gateway.adminKey,
      body: { payloadCapture: true },
    });
    await client.callTool({ name: "demo__search_release_notes", arguments: { query: "sso" } });
    const captured = await eventually(
      () => logsOf(gateway, gateway.writerKey),
      (rows) => rows.length === 4,
    );
    expect(captured[1]).toMatchObject({
      stage: "before",
      details: { logs: [{ level: "info", message: "searching", data: { query: "sso" } }] },
    });

    const reader = await createKey(gateway, ["hooks:read"]);
    const hidden = await logsOf(gateway, reader);
    expect(hidden).toHaveLength(4);
    expect(hidden.some((row) => "details" in row)).toBe(false);

    await applyLogRetention(env.DB, Date.now() + 8 * 24 * 3600 * 1000);
    const cleared = await logsOf(gateway, gateway.writerKey);
    expect(cleared.map((row) => row.details)).toEqual([null, null, null, null]);
    expect(cleared.map((row) => row.outcome)).toEqual(["return", "continue", "return", "continue"]);
  });

  it("caps a log-heavy hook's details per row and per workspace, and never fails the call for it", async ({ expect }) => {
    // 100 entries of 2,000 characters and 8 KB of data: about 1 MB of logs from one stage run.
    const chatty = SEARCH_HOOK.replace(
      'context.log.info("searching", { query: args.query });',
      'for (let i = 0; i < 100; i++) context.log.info(String(i).padEnd(2000, "x"), { pad: "y".repeat(8000) });',
    );
    const gateway = await hookGateway();
    await deployed(gateway, chatty);
    await api(`/v1/workspaces/${gateway.ws}`, { method: "PATCH", key: gateway.adminKey, body: { detailPolicy: "payloads" } });
    await api(`/v1/workspaces/${gateway.ws}/services/${gateway.service.id}`, {
      method: "PATCH",
      key: gateway.adminKey,
      body: { payloadCapture: true },
    });
    const client = await connectMcp(gateway.clientKey);
    const call = () => client.callTool({ name: "demo__search_release_notes", arguments: { query: "sso" } });
    const beforeRows = async (count: number) =>
      (
        await eventually(
          () => logsOf(gateway, gateway.writerKey, "?stage=before"),
          (rows) => rows.length === count,
        )
      ).map((row) => row.details);

    expect((await call()).isError).toBeFalsy();
    const [truncated] = await beforeRows(1);
    expect(new TextEncoder().encode(JSON.stringify(truncated)).byteLength).toBeLessThanOrEqual(LOG_DETAIL_ROW_BYTES);
    expect(truncated.limited).toEqual({ code: "log_details_truncated", bytes: expect.any(Number), logsDropped: expect.any(Number) });
    expect(truncated.limited.bytes).toBeGreaterThan(1_000_000);
    // The first entries are kept, in order; the rest are counted.
    expect(truncated.logs.map((entry: { message: string }) => entry.message.slice(0, 2))).toEqual(["0x", "1x", "2x"]);
    expect(truncated.limited.logsDropped).toBe(97);

    // A workspace whose rolling allowance is spent keeps metadata only; the call still succeeds.
    await env.DB.prepare("UPDATE log_detail_usage SET bytes = ? WHERE workspace_id = ?").bind(LOG_DETAIL_ALLOWANCE_BYTES, gateway.ws).run();
    expect((await call()).isError).toBeFalsy();
    const [spent] = await beforeRows(2);
    expect(spent).toEqual({ limited: { code: "log_detail_allowance", bytes: expect.any(Number) } });
    const usage = await env.DB.prepare("SELECT SUM(bytes) AS bytes FROM log_detail_usage WHERE workspace_id = ?").bind(gateway.ws).first();
    expect(usage).toEqual({ bytes: LOG_DETAIL_ALLOWANCE_BYTES });

    // Once the spent hour leaves the 24-hour window, details are captured again.
    await applyLogRetention(env.DB, Date.now() + 25 * 3600 * 1000);
    expect(await env.DB.prepare("SELECT hour FROM log_detail_usage WHERE workspace_id = ?").bind(gateway.ws).all()).toMatchObject({
      results: [],
    });
    expect((await call()).isError).toBeFalsy();
    const [again] = await beforeRows(3);
    expect(again.limited).toMatchObject({ code: "log_details_truncated" });
  });
});
