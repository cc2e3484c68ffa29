import { McpError, type CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { describe, it } from "vitest";
import { api, connectMcp, createKey, demoGateway, eventually, gatewayError, upstreamReceived } from "../../test/helpers.ts";
import errorsDoc from "../../docs/errors.md?raw";
import { hookGateway, MOCK_RESULT, SEARCH_HOOK } from "../hooks/lifecycle/lifecycle.fixtures.ts";
import { generateCodeDeclarations } from "./codemode.declarations.ts";
import { CODE_MODE_ERROR_CODES } from "./codemode.errors.ts";
import { codeGateway, run } from "./codemode.fixtures.ts";
import { codeRunMessages } from "./codemode.record.ts";

type Gateway = Pick<Awaited<ReturnType<typeof demoGateway>>, "ws" | "adminKey" | "defaultProfileId">;

/** Sets the default profile's discovery and returns an SDK client for a fresh key in it. */
async function codeClient(gateway: Gateway, discovery: "direct" | "code" | "both" = "code") {
  const res = await api(`/v1/workspaces/${gateway.ws}/profiles/${gateway.defaultProfileId}`, {
    method: "PATCH",
    key: gateway.adminKey,
    body: { discovery },
  });
  if (res.status !== 200) throw new Error(`profile: ${res.status} ${JSON.stringify(res.body)}`);
  return connectMcp(await createKey(gateway, ["tools:call"], gateway.defaultProfileId));
}

describe("discovery", () => {
  it("offers direct tools by default, only Code Mode's two in `code`, and both in `both`", async ({ expect }) => {
    const gateway = await demoGateway();
    const profile = await api(`/v1/workspaces/${gateway.ws}/profiles`, { key: gateway.adminKey });
    expect(profile.body.profiles[0].discovery).toBe("direct");
    const direct = await connectMcp(gateway.clientKey);
    const directNames = (await direct.listTools()).tools.map((tool) => tool.name);
    expect(directNames).toEqual(["demo__delete_record", "demo__export_report", "demo__lookup_customer", "demo__search_release_notes"]);
    const refused = await direct.callTool({ name: "run_code", arguments: { code: "return 1" } }).catch((error) => error);
    expect((refused as McpError).message).toBe("MCP error -32602: Unknown tool: run_code");

    const code = await codeClient(gateway, "code");
    expect((await code.listTools()).tools.map((tool) => tool.name)).toEqual(["describe_tools", "run_code"]);
    // In `code`, the tools themselves are reached only through run_code.
    const directCall = await code.callTool({ name: "demo__search_release_notes", arguments: { query: "sso" } }).catch((error) => error);
    expect((directCall as McpError).message).toBe("MCP error -32602: Unknown tool: demo__search_release_notes");

    const both = await codeClient(gateway, "both");
    expect((await both.listTools()).tools.map((tool) => tool.name)).toEqual(["describe_tools", "run_code", ...directNames]);
    expect((await upstreamReceived(gateway.tag)).calls).toEqual([]);
  });

  it("describe_tools declares exactly what tools/list shows, typed from the public definitions, and filters by name", async ({
    expect,
  }) => {
    const gateway = await demoGateway();
    // delete_record is blocked for the profile: it is neither declared nor callable.
    const blocked = await api(`/v1/workspaces/${gateway.ws}/tools/${gateway.toolUid("delete_record")}/policy`, {
      method: "PUT",
      key: gateway.adminKey,
      body: { profileId: gateway.defaultProfileId, mode: "block" },
    });
    expect(blocked.status).toBe(200);
    const both = await codeClient(gateway, "both");
    const listed = (await both.listTools()).tools.filter((tool) => tool.name.includes("__"));
    const described = (await both.callTool({ name: "describe_tools", arguments: {} })) as CallToolResult;
    expect(described.isError).toBeFalsy();
    const text = (described.content[0] as { text: string }).text;
    expect(text).toBe(generateCodeDeclarations(listed as never));
    expect(text).toContain(
      "  /** Search the product's public release notes by keyword. */\n  demo__search_release_notes(args: {\n    /** Words to look for in titles and summaries */\n    query: string;\n    [key: string]: unknown;\n  }): Promise<{\n    items: {\n      version: string;",
    );
    expect(text).not.toContain("delete_record");
    const filtered = (await both.callTool({ name: "describe_tools", arguments: { filter: "CUSTOMER" } })) as CallToolResult;
    const filteredText = (filtered.content[0] as { text: string }).text;
    expect(filteredText).toContain("demo__lookup_customer(args");
    expect(filteredText).not.toContain("demo__search_release_notes(args");

    const bad = (await both.callTool({ name: "describe_tools", arguments: { filter: 7 } })) as CallToolResult;
    expect(gatewayError(bad)).toEqual({
      code: "invalid_arguments",
      message: "The arguments do not match the tool's input schema",
      details: { tool: "describe_tools", violations: [{ pointer: "/filter", message: expect.any(String) }] },
    });
  });
});

describe("run_code", () => {
  it("returns what the equivalent direct calls return, and the upstream sees exactly those calls", async ({ expect }) => {
    const gateway = await demoGateway();
    const direct = await connectMcp(gateway.clientKey);
    const notes = await direct.callTool({ name: "demo__search_release_notes", arguments: { query: "sso" } });
    const customer = await direct.callTool({ name: "demo__lookup_customer", arguments: { email: "ada@example.com" } });
    const expected = { plan: (customer.structuredContent as any).plan, notes: (notes.structuredContent as any).items };

    const client = await codeClient(gateway, "code");
    const result = await run(
      client,
      `const notes = await tools.demo__search_release_notes({ query: "sso" });
console.log("found", notes.items.length);
const customer = await tools.demo__lookup_customer({ email: "ada@example.com" });
return { plan: customer.plan, notes: notes.items };`,
    );
    expect(result.isError).toBeFalsy();
    expect(result.structuredContent).toEqual({
      result: expected,
      logs: ["found 1"],
      calls: [
        { index: 0, tool: "demo__search_release_notes", outcome: "ok", code: null, durationMs: expect.any(Number) },
        { index: 1, tool: "demo__lookup_customer", outcome: "ok", code: null, durationMs: expect.any(Number) },
      ],
    });
    expect(JSON.parse((result.content[0] as { text: string }).text)).toEqual(expected);
    expect((result.content[1] as { text: string }).text).toBe("console.log:\nfound 1");
    expect((await upstreamReceived(gateway.tag)).calls.map((call) => [call.tool, call.arguments])).toEqual([
      ["search_release_notes", { query: "sso" }],
      ["lookup_customer", { email: "ada@example.com" }],
      ["search_release_notes", { query: "sso" }],
      ["lookup_customer", { email: "ada@example.com" }],
    ]);

    // Each inner call is a call row under the run's request id, with its index, beside the run's own row.
    const rows = await eventually(
      async () => (await api(`/v1/workspaces/${gateway.ws}/logs?kind=tools/call`, { key: gateway.adminKey })).body.calls,
      (calls: any[]) => calls.length === 4,
    );
    const inner = rows.filter((row: any) => row.callIndex !== null);
    expect(inner.map((row: any) => [row.name, row.outcome, row.callIndex]).sort()).toEqual([
      ["demo__lookup_customer", "ok", 1],
      ["demo__search_release_notes", "ok", 0],
    ]);
    expect(inner[0].requestId).toBe(inner[1].requestId);
    // The sizes in and out are what the program sent and got back (its records keep only these, not the payloads).
    const customerRow = inner.find((row: any) => row.name === "demo__lookup_customer");
    expect(customerRow).toMatchObject({
      bytesIn: JSON.stringify({ email: "ada@example.com" }).length,
      bytesOut: new TextEncoder().encode(JSON.stringify({ ok: true, value: customer.structuredContent })).byteLength,
    });
    const detail = await api(`/v1/workspaces/${gateway.ws}/logs/${inner[0].requestId}`, { key: gateway.adminKey });
    expect(detail.body.calls.map((row: any) => [row.kind, row.callIndex])).toEqual([
      ["run_code", null],
      ["tools/call", 0],
      ["tools/call", 1],
    ]);
  });
});

/** The codes in the first column of docs/errors.md's Code Mode error table. */
function documentedCodeModeCodes(markdown: string): string[] {
  const start = markdown.indexOf("## Code Mode `isError` results");
  const next = markdown.indexOf("\n## ", start + 1);
  const end = next === -1 ? markdown.length : next;
  const codes: string[] = [];
  for (const line of markdown.slice(start, end).split("\n")) {
    const cell = /^\|\s*(`[^|]+)\|/.exec(line)?.[1];
    if (cell) codes.push(...[...cell.matchAll(/`([a-z_]+)`/g)].map((match) => match[1]!));
  }
  return codes.sort();
}

describe("run_code's console text", () => {
  it("keeps entries apart: an entry's own line breaks go on indented, and structuredContent has them exact", async ({ expect }) => {
    const { client } = await codeGateway();
    const result = await run(client, 'console.log("two\\nlines"); console.log("one"); return 1;');
    expect((result.content[1] as { text: string }).text).toBe("console.log:\ntwo\n  lines\none");
    expect((result.structuredContent as { logs: string[] }).logs).toEqual(["two\nlines", "one"]);
  });
});

describe("the code run log", () => {
  it("records each run_code (outcome, code, inner calls, the program's digest and size, never its text) for hooks:read keys", async ({
    expect,
  }) => {
    const { client, ...gateway } = await codeGateway();
    const program = 'const a = await tools.demo__search_release_notes({ query: "sso" });\nreturn a.items.length;';
    expect((await run(client, program)).isError).toBeFalsy();
    expect(gatewayError(await run(client, "return ("))).toMatchObject({ code: "compile_failed" });
    const reader = await createKey(gateway, ["hooks:read"]);
    const listed = await eventually(
      () => api(`/v1/workspaces/${gateway.ws}/code-runs`, { key: reader }),
      (res) => res.status === 200 && res.body.runs.length === 2,
    );
    const [failed, passed] = listed.body.runs;
    const digest = async (text: string) =>
      [...new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text)))]
        .map((byte) => byte.toString(16).padStart(2, "0"))
        .join("");
    expect(passed).toMatchObject({
      outcome: "ok",
      code: null,
      innerCalls: 1,
      programSha256: await digest(program),
      programBytes: program.length,
      actor: expect.stringMatching(/^key:/),
    });
    expect(failed).toMatchObject({ outcome: "error", code: "compile_failed", innerCalls: 0, programBytes: 8 });
    expect(JSON.stringify(listed.body)).not.toContain("search_release_notes");
    // The inner call's row carries the run's request id and its index.
    const tools = (await api(`/v1/workspaces/${gateway.ws}/tools`, { key: gateway.adminKey })).body.tools as {
      uid: string;
      name: string;
    }[];
    const uid = tools.find((tool) => tool.name === "search_release_notes")!.uid;
    const rows = await eventually(
      () => api(`/v1/workspaces/${gateway.ws}/logs?tool=${uid}`, { key: reader }),
      (res) => res.body.calls.length === 1,
    );
    expect(rows.body.calls[0]).toMatchObject({ requestId: passed.requestId, callIndex: 0, outcome: "ok" });

    const onlyErrors = await api(`/v1/workspaces/${gateway.ws}/code-runs?outcome=error`, { key: reader });
    expect(onlyErrors.body.runs.map((row: { code: string }) => row.code)).toEqual(["compile_failed"]);
    const caller = await api(`/v1/workspaces/${gateway.ws}/code-runs`, { key: gateway.clientKey });
    expect(caller.status).toBe(403);
    expect(caller.body.error.code).toBe("forbidden");
  });
});

describe("the code run log, for runs that end from outside", () => {
  it("records a run its client cancels as cancelled, with its inner call, and one past its wall time as timed_out", async ({ expect }) => {
    const { client, ...gateway } = await codeGateway();
    const controller = new AbortController();
    setTimeout(() => controller.abort("the user pressed stop"), 500);
    const cancelled = client.callTool(
      { name: "run_code", arguments: { code: "await tools.slow__wait({ ms: 5000 });\nreturn 1;" } },
      undefined,
      {
        signal: controller.signal,
      },
    );
    await expect(cancelled).rejects.toThrow("the user pressed stop");
    const rows = await eventually(
      () => api(`/v1/workspaces/${gateway.ws}/logs`, { key: gateway.adminKey }),
      (res) => res.body.calls.length === 2,
    );
    expect(rows.body.calls.map((row: { kind: string; outcome: string; code: string }) => [row.kind, row.outcome, row.code])).toEqual([
      ["run_code", "cancelled", "cancelled"],
      ["tools/call", "cancelled", "cancelled"],
    ]);
    // The code-runs view keeps its two outcomes: a run that did not finish is not ok.
    const listed = await api(`/v1/workspaces/${gateway.ws}/code-runs`, { key: gateway.adminKey });
    expect(listed.body.runs).toMatchObject([{ outcome: "error", code: "cancelled" }]);

    const caller = { workspaceId: gateway.ws, actor: "key:key_t", keyId: "key_t", grantedBy: null, profileId: null };
    const timing = { requestId: "req_wall", startedAt: Date.now(), durationMs: 60_000 };
    const wall = { isError: true, content: [], _meta: { "dev.rayrun/error": { code: "wall_time_exceeded", message: "…" } } };
    const [runRow] = await codeRunMessages(caller, timing, { code: "return 1;" }, wall, []);
    expect(runRow!.call).toMatchObject({ kind: "run_code", outcome: "timed_out", code: "wall_time_exceeded" });
  });
});

describe("Code Mode error codes", () => {
  it("are exactly the codes docs/errors.md's Code Mode table documents", ({ expect }) => {
    const documented = documentedCodeModeCodes(errorsDoc);
    expect(documented.length).toBeGreaterThan(0);
    expect(documented).toEqual([...CODE_MODE_ERROR_CODES].sort());
  });
});

/** An active hook with a public contract (the client sends `text`, upstream gets `query`) that rejects "secret" searches. */
const CONTRACT_HOOK = `export default defineToolAdapter({
  apiVersion: "rayrun.hooks/v1",
  publicContract: {
    description: "Search release notes by free text",
    inputSchema: {
      type: "object",
      properties: { text: { type: "string", description: "What to look for" } },
      required: ["text"],
      additionalProperties: false,
    },
  },
  before({ arguments: args }) {
    if (args.text === "secret") return { action: "reject", reason: "query_forbidden", message: "That search is not allowed" };
    return { action: "continue", arguments: { query: args.text ?? args.query } };
  },
  after({ result }) {
    return { action: "return", result: { items: result.items.slice(0, 1) } };
  },
});
`;

describe("inner calls through hooks", () => {
  it("declares the hook's public contract, passes the hook's rejection reason to the program, and runs shadow with the call's index", async ({
    expect,
  }) => {
    const gateway = await hookGateway();
    // The fixture's tests call with `query`; this contract takes `text`.
    const saved = await gateway.saveLatest({ source: CONTRACT_HOOK });
    expect(saved.status).toBe(200);
    expect((await gateway.test({ stage: "before", arguments: { text: "sso" } })).body.passed).toBe(true);
    expect((await gateway.test({ stage: "after", arguments: { text: "sso" }, result: MOCK_RESULT })).body.passed).toBe(true);
    const active = (await gateway.createRevision(saved.body.versionId)).body;
    expect((await gateway.deploy("active", active.revisionId)).status).toBe(200);
    const shadow = await gateway.tested(SEARCH_HOOK);
    expect((await gateway.deploy("shadow", shadow.revisionId)).status).toBe(200);
    const client = await codeClient(gateway, "code");

    const described = (await client.callTool({ name: "describe_tools", arguments: { filter: "release" } })) as CallToolResult;
    const declarations = (described.content[0] as { text: string }).text;
    expect(declarations).toContain(
      "  /** Search release notes by free text */\n  demo__search_release_notes(args: {\n    /** What to look for */\n    text: string;\n  }): Promise<{",
    );

    const result = await run(
      client,
      `const found = await tools.demo__search_release_notes({ text: "search" });
let refusal;
try {
  await tools.demo__search_release_notes({ text: "secret" });
} catch (error) {
  refusal = { code: error.code, message: error.message, details: error.details };
}
return { found: found.items.map((item) => item.version), refusal };`,
    );
    expect((result.structuredContent as any).result).toEqual({
      found: ["2.4.0"],
      refusal: {
        code: "query_forbidden",
        message: "That search is not allowed",
        details: { tool: "demo__search_release_notes", source: "hook" },
      },
    });
    // The rejected call never reached the upstream.
    expect((await upstreamReceived(gateway.tag)).calls.map((call) => call.arguments)).toEqual([{ query: "search" }]);
    const rows = await eventually(
      async () => (await api(`${gateway.base()}/logs`, { key: gateway.adminKey })).body.logs as any[],
      (logs) => logs.length >= 5,
    );
    // A call rejected in `before` never reaches step 4, where the shadow revision is read: it has no shadow row.
    expect(
      rows.map((row) => [row.callIndex, row.stage, row.channel, row.outcome]).sort((a, b) => String(a).localeCompare(String(b))),
    ).toEqual([
      [0, "after", "active", "return"],
      [0, "after", "shadow", "return"],
      [0, "before", "active", "continue"],
      [0, "before", "shadow", "continue"],
      [1, "before", "active", "reject"],
    ]);
    expect(new Set(rows.map((row) => row.requestId)).size).toBe(1);
  });
});
