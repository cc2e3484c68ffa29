import { describe, it } from "vitest";
import { ECHOED_NAME_CHARS } from "./mcp.errors.ts";
import {
  addService,
  api,
  connectMcp,
  createKey,
  createWorkspace,
  demoGateway,
  upstreamOrigin,
  upstreamReceived,
} from "../../test/helpers.ts";

describe("client MCP endpoint", () => {
  it("lists the demo upstream's tools and forwards a call through the official SDK client", async ({ expect }) => {
    const gateway = await demoGateway();
    const client = await connectMcp(gateway.clientKey);
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name)).toEqual([
      "demo__delete_record",
      "demo__export_report",
      "demo__lookup_customer",
      "demo__search_release_notes",
    ]);
    const search = tools.find((tool) => tool.name === "demo__search_release_notes")!;
    expect(search.outputSchema).toMatchObject({ type: "object", properties: { items: { type: "array" } } });
    expect(tools.find((tool) => tool.name === "demo__delete_record")!.annotations).toMatchObject({ destructiveHint: true });

    const result = await client.callTool({ name: "demo__search_release_notes", arguments: { query: "sso" } });
    expect(result.isError).toBeFalsy();
    expect(result.structuredContent).toEqual({
      items: [{ version: "2.2.0", date: "2026-05-11", title: "SSO", summary: "SAML single sign-on for enterprise plans." }],
    });
    const received = await upstreamReceived(gateway.tag);
    expect(received.calls.map((call) => [call.tool, call.arguments])).toEqual([["search_release_notes", { query: "sso" }]]);
    await client.close();
  });

  it("never forwards the client's bearer token, and adds the service's secret headers instead", async ({ expect }) => {
    const gateway = await demoGateway({ "X-Upstream-Token": "upstream-secret-value" });
    const client = await connectMcp(gateway.clientKey);
    await client.callTool({ name: "demo__lookup_customer", arguments: { email: "ada@example.com" } });
    const { methods } = await upstreamReceived(gateway.tag);
    const call = methods.find((message) => message.method === "tools/call")!;
    expect(call.headers["x-upstream-token"]).toBe("upstream-secret-value");
    expect(call.headers.authorization).toBeUndefined();
    expect(JSON.stringify(methods)).not.toContain(gateway.clientKey);
  });

  it("reuses one upstream session instead of a handshake per call", async ({ expect }) => {
    const gateway = await demoGateway();
    const client = await connectMcp(gateway.clientKey);
    for (let i = 0; i < 5; i++) await client.callTool({ name: "demo__search_release_notes", arguments: { query: "billing" } });
    const { methods } = await upstreamReceived(gateway.tag);
    expect(methods.filter((m) => m.method === "tools/call")).toHaveLength(5);
    // Two handshakes indexed the service (without and with the relayed capabilities); every call then shared a single session.
    expect(methods.filter((m) => m.method === "initialize")).toHaveLength(3);
  });

  it("returns an upstream tool error as the upstream's error", async ({ expect }) => {
    const gateway = await demoGateway();
    const client = await connectMcp(gateway.clientKey);
    const result = await client.callTool({ name: "demo__export_report", arguments: { month: "2026-10" } });
    expect(result).toEqual({ isError: true, content: [{ type: "text", text: "Report service unavailable: try again later" }] });
  });

  it("passes an upstream JSON-RPC error on with its code and message, marked as the upstream's", async ({ expect }) => {
    const workspace = await createWorkspace();
    await addService(workspace, { slug: "fail", url: `${upstreamOrigin()}/fixtures/jsonrpc-error/mcp` });
    const key = await createKey(workspace, ["tools:call"], workspace.defaultProfileId);
    const res = await api("/mcp", {
      key,
      headers: { accept: "application/json, text/event-stream" },
      body: { jsonrpc: "2.0", id: 7, method: "tools/call", params: { name: "fail__explode", arguments: {} } },
    });
    // The SDK upstream's own wire message carries its "MCP error -32602:" prefix; it arrives unchanged.
    const upstream = await fetch(`${upstreamOrigin()}/fixtures/jsonrpc-error/mcp`, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 7, method: "tools/call", params: { name: "explode", arguments: {} } }),
    });
    const upstreamError = ((await upstream.json()) as { error: { code: number; message: string } }).error;
    expect(res.body).toEqual({
      jsonrpc: "2.0",
      id: 7,
      error: { code: upstreamError.code, message: upstreamError.message, data: { upstream: true, fuse: "missing" } },
    });
    expect(upstreamError).toMatchObject({ code: -32602, message: "MCP error -32602: explode needs a fuse" });
  });

  it("refuses a blocked tool without contacting the upstream", async ({ expect }) => {
    const gateway = await demoGateway();
    const policy = await api(`/v1/workspaces/${gateway.ws}/tools/${gateway.toolUid("delete_record")}/policy`, {
      method: "PUT",
      key: gateway.adminKey,
      body: { profileId: gateway.defaultProfileId, mode: "block" },
    });
    expect(policy.status).toBe(200);
    const client = await connectMcp(gateway.clientKey);
    expect((await client.listTools()).tools.map((tool) => tool.name)).not.toContain("demo__delete_record");
    await expect(client.callTool({ name: "demo__delete_record", arguments: { id: "r1" } })).rejects.toThrow(
      "MCP error -32602: Unknown tool: demo__delete_record",
    );
    expect((await upstreamReceived(gateway.tag)).calls).toEqual([]);
  });

  it("echoes at most 128 characters of an unknown tool's name", async ({ expect }) => {
    const gateway = await demoGateway();
    const client = await connectMcp(gateway.clientKey);
    const name = `demo__${"x".repeat(1024 * 1024)}`;
    const error = await client.callTool({ name, arguments: {} }).then(
      () => null,
      (thrown: Error) => thrown,
    );
    expect(error?.message).toMatch(/^MCP error -32602: /);
    expect(error?.message.endsWith(`Unknown tool: ${name.slice(0, ECHOED_NAME_CHARS)}…`)).toBe(true);
    expect(error?.message.length).toBeLessThan(256);
    // A short name is echoed whole.
    await expect(client.callTool({ name: "demo__nope", arguments: {} })).rejects.toThrow(/Unknown tool: demo__nope$/);
  });

  it("refuses a tool under approval policy with approval_required, without contacting the upstream", async ({ expect }) => {
    const gateway = await demoGateway();
    await api(`/v1/workspaces/${gateway.ws}/tools/${gateway.toolUid("delete_record")}/policy`, {
      method: "PUT",
      key: gateway.adminKey,
      body: { profileId: gateway.defaultProfileId, mode: "approval" },
    });
    const client = await connectMcp(gateway.clientKey);
    const result = await client.callTool({ name: "demo__delete_record", arguments: { id: "r1" } });
    expect(result.isError).toBe(true);
    expect(result._meta?.["dev.rayrun/error"]).toMatchObject({ code: "approval_required" });
    expect((await upstreamReceived(gateway.tag)).calls).toEqual([]);
  });

  it("applies each key's own access profile", async ({ expect }) => {
    const gateway = await demoGateway();
    const strict = await api(`/v1/workspaces/${gateway.ws}/profiles`, {
      key: gateway.adminKey,
      body: { name: "strict", defaultMode: "block" },
    });
    expect(strict.status).toBe(201);
    await api(`/v1/workspaces/${gateway.ws}/tools/${gateway.toolUid("search_release_notes")}/policy`, {
      method: "PUT",
      key: gateway.adminKey,
      body: { profileId: strict.body.id, mode: "allow" },
    });
    const strictKey = await createKey(gateway, ["tools:call"], strict.body.id);
    const client = await connectMcp(strictKey);
    expect((await client.listTools()).tools.map((tool) => tool.name)).toEqual(["demo__search_release_notes"]);
    const open = await connectMcp(gateway.clientKey);
    expect((await open.listTools()).tools).toHaveLength(4);
  });

  it("rejects calls without a key (401) and keys without tools:call (403)", async ({ expect }) => {
    const gateway = await demoGateway();
    const body = { jsonrpc: "2.0", id: 1, method: "tools/list" };
    const headers = { accept: "application/json, text/event-stream" };
    const anonymous = await api("/mcp", { body, headers });
    expect(anonymous.status).toBe(401);
    expect(anonymous.body.error.code).toBe(-32600);
    const readOnly = await createKey(gateway, ["hooks:read"]);
    const forbidden = await api("/mcp", { body, headers, key: readOnly });
    expect(forbidden.status).toBe(403);
    expect(forbidden.body).toMatchInlineSnapshot(`
      {
        "error": {
          "code": -32600,
          "message": "This key lacks the 'tools:call' scope",
        },
        "id": null,
        "jsonrpc": "2.0",
      }
    `);
  });
});
