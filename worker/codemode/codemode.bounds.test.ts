import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { describe, it } from "vitest";
import { addService, api, createWorkspace, gatewayError, newTag, upstreamOrigin, upstreamReceived } from "../../test/helpers.ts";
import { codeGateway, run } from "./codemode.fixtures.ts";
import type { ToolAnswer } from "./codemode.run.ts";
import { runProgram } from "./codemode.sandbox.ts";

describe("programs that do not compile", () => {
  it("reports esbuild's diagnostics with the program's own line and column", async ({ expect }) => {
    const { client } = await codeGateway();
    expect(gatewayError(await run(client, "const a = 1;\nreturn a +;"))).toEqual({
      code: "compile_failed",
      message: 'The program does not compile: Unexpected ";" (line 2, column 11)',
      details: { diagnostics: [{ code: "syntax_error", message: 'Unexpected ";"', line: 2, column: 11 }] },
    });
    expect(gatewayError(await run(client, 'const x = 1;\n  import fs from "node:fs";\nreturn fs;'))).toEqual({
      code: "compile_failed",
      message:
        "The program does not compile: import declarations are not allowed: a program is one self-contained function body; reach tools through `tools` (line 2, column 3)",
      details: {
        diagnostics: [
          {
            code: "import_forbidden",
            message: "import declarations are not allowed: a program is one self-contained function body; reach tools through `tools`",
            line: 2,
            column: 3,
          },
        ],
      },
    });
    expect(gatewayError(await run(client, 'return await import("node:fs");'))).toEqual({
      code: "compile_failed",
      message:
        'The program does not compile: import() of "node:fs" is not allowed: a program is one self-contained function body; reach tools through `tools` (line 1, column 21)',
      details: {
        diagnostics: [
          {
            code: "dynamic_import_forbidden",
            message: 'import() of "node:fs" is not allowed: a program is one self-contained function body; reach tools through `tools`',
            line: 1,
            column: 21,
          },
        ],
      },
    });
    const missing = await client.callTool({ name: "run_code", arguments: {} });
    expect(gatewayError(missing)).toEqual({
      code: "invalid_arguments",
      message: "The arguments do not match the tool's input schema",
      details: { tool: "run_code", violations: [{ pointer: "", message: expect.stringContaining("code") }] },
    });
  });
});

describe("isolate bounds", () => {
  it("stops a program that loops forever (timeout) and keeps serving; one that allocates without end fails memory_exceeded", async ({
    expect,
  }) => {
    const { client } = await codeGateway();
    const looping = await run(client, 'console.log("starting");\nwhile (true) {}');
    expect(gatewayError(looping)).toEqual({
      code: "timeout",
      message: "The program used up its work budget (time waiting on tools does not count)",
      details: { logs: ["starting"], calls: [] },
    });
    const after = await run(client, "return 1 + 1;");
    expect(after.structuredContent).toEqual({ result: 2, logs: [], calls: [] });

    const hungry = await run(client, "const kept = [];\nfor (let i = 0; ; i++) kept[i] = new Uint8Array(1 << 20);");
    expect(gatewayError(hungry)).toEqual({
      code: "memory_exceeded",
      message: "The program ran out of memory",
      details: { logs: [], calls: [] },
    });
  });

  it("refuses a result over 1 MiB and a 101st console line, with the logs so far", async ({ expect }) => {
    const { client } = await codeGateway();
    const big = await run(client, 'console.log("big");\nreturn "x".repeat(1024 * 1024);');
    expect(gatewayError(big)).toEqual({
      code: "output_too_large",
      message: "The program's result is larger than 1048576 bytes as JSON",
      details: { limit: 1048576, bytes: 1048578, logs: ["big"], calls: [] },
    });
    const chatty = await run(client, "for (let i = 0; i < 101; i++) console.log(i);\nreturn 1;");
    const error = gatewayError(chatty);
    expect({ ...error, details: { ...error.details, logs: error.details.logs.length } }).toEqual({
      code: "log_limit",
      message: "The program wrote more than 100 console lines",
      details: { limit: 100, logs: 100, calls: [] },
    });
    expect(error.details.logs.slice(-2)).toEqual(["98", "99"]);
  });
});

describe("inner call bounds", () => {
  it("ends the run at the 51st call; the upstream got exactly 50", async ({ expect }) => {
    const gateway = await codeGateway();
    const result = await run(
      gateway.client,
      'for (let i = 0; i < 51; i++) await tools.demo__search_release_notes({ query: "sso" });\nreturn "unreachable";',
    );
    const error = gatewayError(result);
    expect(error.code).toBe("too_many_tool_calls");
    expect(error.message).toBe("The program made more than 50 tool calls; the run was stopped");
    expect(error.details.limit).toBe(50);
    expect(error.details.calls).toHaveLength(50);
    expect(error.details.calls.every((call: any) => call.outcome === "ok")).toBe(true);
    expect((await upstreamReceived(gateway.tag)).calls).toHaveLength(50);
  });

  it("runs at most 8 calls at once: the 9th waits for a slot and succeeds", async ({ expect }) => {
    const gateway = await codeGateway();
    const result = await run(
      gateway.client,
      "const all = await Promise.all(Array.from({ length: 9 }, () => tools.slow__wait({ ms: 300 })));\nreturn all.map((r) => r.waited);",
    );
    expect(result.isError).toBeFalsy();
    expect((result.structuredContent as any).result).toEqual(Array(9).fill(300));
    const calls = (await upstreamReceived(gateway.slowTag)).calls;
    expect(calls).toHaveLength(9);
    const concurrency = calls.map((call) => (call.arguments as { concurrent: number }).concurrent);
    expect(Math.max(...concurrency)).toBe(8);
    // The 9th started only once one of the first 8 had finished.
    expect(concurrency[8]).toBeLessThanOrEqual(8);
  });

  it("starts nothing after the program returned, even from a promise chain it left behind", async ({ expect }) => {
    const gateway = await codeGateway();
    const result = await run(
      gateway.client,
      `tools.slow__wait({ ms: 200 })
  .then(() => tools.slow__wait({ ms: 1 }))
  .then(() => tools.slow__wait({ ms: 2 }));
return "returned";`,
    );
    expect((result.structuredContent as any).result).toBe("returned");
    // The call in flight at the return was cancelled with the run; the chain never went on.
    expect((result.structuredContent as any).calls).toEqual([
      { index: 0, tool: "slow__wait", outcome: "error", code: "cancelled", durationMs: expect.any(Number) },
    ]);
    await new Promise((resolve) => setTimeout(resolve, 600));
    const reached = (await upstreamReceived(gateway.slowTag)).calls.map((call) => (call.arguments as { ms: number }).ms);
    expect(reached.filter((ms) => ms !== 200)).toEqual([]);
  });
});

describe("inner call refusals reach the program as the direct call's codes", () => {
  it("a blocked tool, a tool in review, another workspace's tool and a missing name all look alike: unknown_tool", async ({ expect }) => {
    const gateway = await codeGateway();
    const blocked = await api(`/v1/workspaces/${gateway.ws}/tools/${gateway.toolUid("delete_record")}/policy`, {
      method: "PUT",
      key: gateway.adminKey,
      body: { profileId: gateway.defaultProfileId, mode: "block" },
    });
    expect(blocked.status).toBe(200);
    // A tool whose changed definition waits for review.
    const mutableKey = newTag();
    const setVariant = (variant: number) =>
      fetch(`${upstreamOrigin()}/fixtures/mutable/${mutableKey}/state`, { method: "POST", body: JSON.stringify({ variant }) });
    await setVariant(0);
    const mutable = await addService(gateway, { slug: "mut", url: `${upstreamOrigin()}/fixtures/mutable/${mutableKey}/mcp` });
    await setVariant(1);
    await api(`/v1/workspaces/${gateway.ws}/services/${mutable.service.id}/refresh`, { method: "POST", key: gateway.adminKey });
    // Another workspace's tool.
    const other = await createWorkspace("Other");
    await addService(other, { slug: "other", url: `${upstreamOrigin()}/t/${newTag()}/mcp` });

    const names = ["demo__delete_record", "mut__echo", "other__search_release_notes", "demo__no_such_tool"];
    const result = await run(
      gateway.client,
      `const seen = [];
for (const name of ${JSON.stringify(names)}) {
  try {
    await tools[name]({ id: "1", message: "hi", loud: true, query: "sso" });
  } catch (error) {
    seen.push({ name: error.name, code: error.code, message: error.message, details: error.details });
  }
}
return seen;`,
    );
    expect((result.structuredContent as any).result).toEqual(
      names.map((name) => ({ name: "ToolError", code: "unknown_tool", message: `Unknown tool: ${name}`, details: { tool: name } })),
    );
    expect((await upstreamReceived(gateway.tag)).calls).toEqual([]);
    expect((await upstreamReceived(`mutable-${mutableKey}`)).calls).toEqual([]);
    // describe_tools declares none of them.
    const described = (await gateway.client.callTool({ name: "describe_tools", arguments: {} })) as CallToolResult;
    const text = (described.content[0] as { text: string }).text;
    for (const name of names) expect(text).not.toContain(name);
  });

  it("arguments that fail the public schema, and an upstream error, reject with their codes; uncaught, they end the run", async ({
    expect,
  }) => {
    const gateway = await codeGateway();
    const caught = await run(
      gateway.client,
      `try {
  await tools.demo__search_release_notes({ query: 5 });
} catch (error) {
  return { code: error.code, message: error.message, details: error.details };
}`,
    );
    expect((caught.structuredContent as any).result).toEqual({
      code: "invalid_arguments",
      message: "The arguments do not match the tool's input schema",
      details: { tool: "demo__search_release_notes", violations: [{ pointer: "/query", message: expect.any(String) }] },
    });
    const upstreamFailed = await run(
      gateway.client,
      'console.log("exporting");\nreturn await tools.demo__export_report({ month: "2026-10" });',
    );
    expect(gatewayError(upstreamFailed)).toEqual({
      code: "upstream_error",
      message: "Report service unavailable: try again later",
      details: {
        tool: "demo__export_report",
        upstream: true,
        logs: ["exporting"],
        calls: [{ index: 0, tool: "demo__export_report", outcome: "error", code: "upstream_error", durationMs: expect.any(Number) }],
      },
    });
    expect((await upstreamReceived(gateway.tag)).calls.map((call) => call.tool)).toEqual(["export_report"]);
  });

  it("an approval requested by an inner call, once approved, lets the same call through exactly once", async ({ expect }) => {
    const gateway = await codeGateway();
    const policy = await api(`/v1/workspaces/${gateway.ws}/tools/${gateway.toolUid("lookup_customer")}/policy`, {
      method: "PUT",
      key: gateway.adminKey,
      body: { profileId: gateway.defaultProfileId, mode: "approval" },
    });
    expect(policy.status).toBe(200);
    const program = `const notes = await tools.demo__search_release_notes({ query: "sso" });
const customer = await tools.demo__lookup_customer({ email: "ada@example.com" });
return { notes: notes.items.length, plan: customer.plan };`;
    const first = gatewayError(await run(gateway.client, program));
    expect(first).toMatchObject({
      code: "approval_required",
      message: expect.stringMatching(
        /^This call needs a human approval \(policy_approval\): approval \S+\. An approver decides it at https:\/\/\S+\/approvals\/\S+; once it is approved, repeat the identical call\.$/,
      ),
      details: {
        tool: "demo__lookup_customer",
        reason: "policy_approval",
        approvalId: expect.any(String),
        calls: [
          { index: 0, tool: "demo__search_release_notes", outcome: "ok", code: null },
          { index: 1, tool: "demo__lookup_customer", outcome: "error", code: "approval_required" },
        ],
      },
    });
    const approved = await api(`/v1/workspaces/${gateway.ws}/approvals/${first.details.approvalId}/approve`, {
      method: "POST",
      key: gateway.adminKey,
    });
    expect(approved.status).toBe(200);
    const second = await run(gateway.client, program);
    expect((second.structuredContent as any).result).toEqual({ notes: 1, plan: "enterprise" });
    const third = gatewayError(await run(gateway.client, program));
    expect(third.code).toBe("approval_required");
    expect(third.details.approvalId).not.toBe(first.details.approvalId);
    // The search before the approval ran in every run; the approved lookup reached the upstream once.
    expect((await upstreamReceived(gateway.tag)).calls.map((call) => call.tool)).toEqual([
      "search_release_notes",
      "search_release_notes",
      "lookup_customer",
      "search_release_notes",
    ]);
  });
});

describe("the sandbox's own bounds", () => {
  const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

  it("starts every run from a fresh runtime and context, though the instance is reused", async ({ expect }) => {
    const host = { callTool: async (): Promise<ToolAnswer> => ({ ok: true, value: null }) };
    const first = await runProgram({
      source: "globalThis.leak = 1; Object.prototype.polluted = true; Array.prototype.push = null; return 1;",
      requestId: "req_test",
      workspaceId: "ws_test",
      host,
    });
    expect(first).toEqual({ ok: true, value: 1, logs: [] });
    const second = await runProgram({
      source: "const seen = []; seen.push(typeof globalThis.leak, ({}).polluted ?? 'clean'); return seen;",
      requestId: "req_test",
      workspaceId: "ws_test",
      host,
    });
    expect(second).toEqual({ ok: true, value: ["undefined", "clean"], logs: [] });
  });

  it("does not count time waiting on tools against the compute deadline", async ({ expect }) => {
    const result = await runProgram({
      source: "const a = await tools.x({}); const b = await tools.y({}); return [a, b];",
      requestId: "req_test",
      workspaceId: "ws_test",
      isolateLimits: { deadlineMs: 100 },
      host: { callTool: async (call): Promise<ToolAnswer> => (await sleep(250), { ok: true, value: call.name }) },
    });
    expect(result).toEqual({ ok: true, value: ["x", "y"], logs: [] });
  });

  it("ends a run at its wall time, cancelling the calls in flight", async ({ expect }) => {
    let cancelled = false;
    const result = await runProgram({
      source: 'console.log("waiting");\nreturn await tools.x({});',
      requestId: "req_test",
      workspaceId: "ws_test",
      limits: { wallTimeMs: 200 },
      host: {
        callTool: (_call, signal) =>
          new Promise<ToolAnswer>((resolve) => {
            signal.addEventListener("abort", () => {
              cancelled = true;
              resolve({ ok: false, error: { code: "cancelled", message: "cancelled" } });
            });
          }),
      },
    });
    expect(result).toEqual({
      ok: false,
      error: {
        code: "wall_time_exceeded",
        message: "The run took longer than 0.2 s; calls still in flight were cancelled",
        details: { limit: 200 },
      },
      logs: ["waiting"],
      ran: true,
    });
    expect(cancelled).toBe(true);
  });
});
