import { SELF } from "cloudflare:test";
import { describe, it } from "vitest";
import { Client, StreamableHTTPClientTransport, type ClientCapabilities } from "@modelcontextprotocol/client";
import { api, createKey, demoGateway, ORIGIN, upstreamReceived } from "../../test/helpers.ts";
import { LIST_CACHE_TTL_MS } from "./mcp.modern.ts";

const REVISION = "2026-07-28";

/** The v2 SDK client, pinned to 2026-07-28 (no probe, no fallback to initialize). */
async function connectModern(key: string, capabilities: ClientCapabilities = {}): Promise<Client> {
  const transport = new StreamableHTTPClientTransport(new URL(`${ORIGIN}/mcp`), {
    fetch: (input, init) => SELF.fetch(input as string, init),
    requestInit: { headers: { authorization: `Bearer ${key}` } },
  });
  const client = new Client({ name: "modern-agent", version: "1.0.0" }, { capabilities, versionNegotiation: { mode: { pin: REVISION } } });
  await client.connect(transport);
  return client;
}

const envelope = (capabilities: ClientCapabilities = {}) => ({
  "io.modelcontextprotocol/protocolVersion": REVISION,
  "io.modelcontextprotocol/clientCapabilities": capabilities,
  "io.modelcontextprotocol/clientInfo": { name: "raw-agent", version: "1.0.0" },
});

/** One raw 2026-07-28 POST, with the standard headers unless `headers` overrides them. */
async function post(key: string, method: string, params: Record<string, unknown>, headers: Record<string, string> = {}) {
  const name: Record<string, string> = typeof params.name === "string" ? { "mcp-name": params.name } : {};
  const res = await SELF.fetch(`${ORIGIN}/mcp`, {
    method: "POST",
    headers: {
      authorization: `Bearer ${key}`,
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": REVISION,
      "mcp-method": method,
      ...name,
      ...headers,
    },
    body: JSON.stringify({ jsonrpc: "2.0", id: 7, method, params: { _meta: envelope(), ...params } }),
  });
  return { status: res.status, body: (await res.json()) as Record<string, any> };
}

describe("2026-07-28 clients", () => {
  it("list and call through the v2 SDK client with no initialize and no session", async ({ expect }) => {
    const gateway = await demoGateway();
    const client = await connectModern(gateway.clientKey);
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name)).toContain("demo__search_release_notes");
    const result = await client.callTool({ name: "demo__search_release_notes", arguments: { query: "sso" } });
    expect(result.isError).toBeFalsy();
    expect(result.structuredContent).toEqual({
      items: [{ version: "2.2.0", date: "2026-05-11", title: "SSO", summary: "SAML single sign-on for enterprise plans." }],
    });
    const received = await upstreamReceived(gateway.tag);
    expect(received.calls.map((call) => [call.tool, call.arguments])).toEqual([["search_release_notes", { query: "sso" }]]);
    await client.close();
  });

  it("answers server/discover, and tools/list with resultType and private caching hints", async ({ expect }) => {
    const gateway = await demoGateway();
    const discover = await post(gateway.clientKey, "server/discover", {});
    expect(discover.status).toBe(200);
    expect(discover.body.result).toMatchObject({ resultType: "complete", supportedVersions: [REVISION], capabilities: { tools: {} } });
    const list = await post(gateway.clientKey, "tools/list", {});
    expect(list.body.result).toMatchObject({ resultType: "complete", ttlMs: LIST_CACHE_TTL_MS, cacheScope: "private" });
    const call = await post(gateway.clientKey, "tools/call", { name: "demo__search_release_notes", arguments: { query: "sso" } });
    expect(call.body.result.resultType).toBe("complete");
    expect(call.body.result.structuredContent.items).toHaveLength(1);
  });

  it("lists per profile: another profile's key sees its own list", async ({ expect }) => {
    const gateway = await demoGateway();
    const profile = await api(`/v1/workspaces/${gateway.ws}/profiles`, {
      key: gateway.adminKey,
      body: { name: "strict", defaultMode: "block" },
    });
    expect(profile.status).toBe(201);
    const otherKey = await createKey(gateway, ["tools:call"], profile.body.id);
    const mine = await post(gateway.clientKey, "tools/list", {});
    const theirs = await post(otherKey, "tools/list", {});
    expect(mine.body.result.tools.length).toBeGreaterThan(0);
    expect(theirs.body.result.tools).toEqual([]);
    expect(theirs.body.result.cacheScope).toBe("private");
    // The policy holds on this revision as on the others: a blocked tool is an unknown one.
    const blocked = await post(otherKey, "tools/call", { name: "demo__search_release_notes", arguments: { query: "sso" } });
    expect(blocked.body.error).toEqual({ code: -32602, message: "Unknown tool: demo__search_release_notes" });
  });

  it("refuses a header that disagrees with the body, a missing header, and an unknown revision", async ({ expect }) => {
    const gateway = await demoGateway();
    const method = await post(gateway.clientKey, "tools/list", {}, { "mcp-method": "tools/call" });
    expect(method.status).toBe(400);
    expect(method.body.error.code).toBe(-32020);
    const name = await post(
      gateway.clientKey,
      "tools/call",
      { name: "demo__search_release_notes", arguments: {} },
      { "mcp-name": "demo__delete_record" },
    );
    expect(name.status).toBe(400);
    expect(name.body.error.code).toBe(-32020);
    const version = await post(gateway.clientKey, "tools/list", {}, { "mcp-protocol-version": "2025-11-25" });
    expect(version.status).toBe(400);
    expect(version.body.error.code).toBe(-32020);
    const res = await SELF.fetch(`${ORIGIN}/mcp`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${gateway.clientKey}`,
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        "mcp-protocol-version": "2099-01-01",
        "mcp-method": "tools/list",
      },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "tools/list",
        params: { _meta: { ...envelope(), "io.modelcontextprotocol/protocolVersion": "2099-01-01" } },
      }),
    });
    const unknown = (await res.json()) as Record<string, any>;
    expect(res.status).toBe(400);
    expect(unknown.error).toMatchObject({ code: -32022, data: { requested: "2099-01-01", supported: [REVISION] } });
  });

  it("answers a tools/call without a name with -32602 and one line, on both revisions", async ({ expect }) => {
    const gateway = await demoGateway();
    const modern = await post(gateway.clientKey, "tools/call", { arguments: {} });
    expect(modern.body).toEqual({
      jsonrpc: "2.0",
      id: 7,
      error: { code: -32602, message: "Invalid params: tools/call needs params.name, a string" },
    });
    const legacy = await SELF.fetch(`${ORIGIN}/mcp`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${gateway.clientKey}`,
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
      },
      body: JSON.stringify({ jsonrpc: "2.0", id: 3, method: "tools/call", params: { arguments: [] } }),
    });
    expect(await legacy.json()).toEqual({
      jsonrpc: "2.0",
      id: 3,
      error: { code: -32602, message: "Invalid params: tools/call needs params.name, a string" },
    });
  });
});
