import { env, runInDurableObject, SELF } from "cloudflare:test";
import { describe, it, vi } from "vitest";
import { createMCPClient } from "@ai-sdk/mcp";
import { MultiServerMCPClient } from "@langchain/mcp-adapters";
import { noopObserve } from "@mastra/core/tools";
import { MCPClient as MastraMCPClient } from "@mastra/mcp";
import { MCPServerStreamableHttp } from "@openai/agents-core";
import { Lifecycle } from "agents/lifecycle";
import { MCPClientManager } from "agents/mcp/client";
import { demoGateway, ORIGIN, upstreamReceived } from "../../test/helpers.ts";

/**
 * Agent frameworks nobody here wrote, against the gateway as they ship. The Vercel AI SDK's MCP client, the
 * OpenAI Agents SDK and Mastra (on the v2 SDK client, `versionNegotiation: auto`) try 2026-07-28 first
 * (`server/discover`) and fall back to `initialize` only when that fails: here they must not. LangChain's MCP
 * adapters are on the v1 SDK client, which speaks the 2025-era revisions only: 2025-11-25.
 */

/** The requests a framework sent: method, protocol version header, and the gateway's status. */
function recordingFetch(sent: { method: string; version: string | null; status: number }[]) {
  return async (input: RequestInfo | URL, init?: RequestInit): Promise<Response> => {
    // The AI SDK asks for `redirect: "error"`, which workerd (where this test runs) does not implement; the
    // gateway never redirects /mcp, so "manual" answers the same.
    const response = await SELF.fetch(input instanceof Request ? input : String(input), {
      ...init,
      ...(init?.redirect === "error" ? { redirect: "manual" as const } : {}),
    });
    const body = typeof init?.body === "string" ? (JSON.parse(init.body) as { method?: string }) : {};
    sent.push({
      method: body.method ?? init?.method ?? "GET",
      version: new Headers(init?.headers).get("mcp-protocol-version"),
      status: response.status,
    });
    return response;
  };
}

/** What every framework's traffic must show: discovery first, no initialize, every request at 2026-07-28, none refused. */
function expectModernOnly(sent: { method: string; version: string | null; status: number }[], expect: (value: unknown) => any) {
  expect(sent[0]).toMatchObject({ method: "server/discover", version: "2026-07-28", status: 200 });
  expect(sent.map((request) => request.method)).not.toContain("initialize");
  for (const request of sent.filter((each) => each.method !== "DELETE"))
    expect(request).toMatchObject({ version: "2026-07-28", status: 200 });
}
describe("the Vercel AI SDK's MCP client", () => {
  it("connects at 2026-07-28 with no fallback, lists the profile's tools and calls one", async ({ expect }) => {
    const gateway = await demoGateway();
    const sent: { method: string; version: string | null; status: number }[] = [];
    const client = await createMCPClient({
      transport: {
        type: "http",
        url: `${ORIGIN}/mcp`,
        headers: { authorization: `Bearer ${gateway.clientKey}` },
        fetch: recordingFetch(sent),
      },
    });
    const tools = await client.tools();
    expect(Object.keys(tools)).toContain("demo__search_release_notes");
    const result = (await tools.demo__search_release_notes!.execute!(
      { query: "sso" },
      { toolCallId: "c1", messages: [], context: {} },
    )) as {
      content: { text: string }[];
    };
    expect(JSON.stringify(result.content)).toContain("SSO");
    await client.close();

    expectModernOnly(sent, expect);
    expect((await upstreamReceived(gateway.tag)).calls.map((call) => call.arguments)).toEqual([{ query: "sso" }]);
  });
});

describe("the OpenAI Agents SDK's Streamable HTTP MCP server", () => {
  it("connects at 2026-07-28 with no fallback, lists the profile's tools and calls one", async ({ expect }) => {
    const gateway = await demoGateway();
    const sent: { method: string; version: string | null; status: number }[] = [];
    const server = new MCPServerStreamableHttp({
      url: `${ORIGIN}/mcp`,
      name: "rayrun",
      fetch: recordingFetch(sent),
      requestInit: { headers: { authorization: `Bearer ${gateway.clientKey}` } },
    });
    await server.connect();
    expect((await server.listTools()).map((tool) => tool.name)).toContain("demo__search_release_notes");
    const content = await server.callTool("demo__search_release_notes", { query: "sso" });
    expect(JSON.stringify(content)).toContain("SSO");
    await server.close();
    expectModernOnly(sent, expect);
    expect((await upstreamReceived(gateway.tag)).calls.map((call) => call.arguments)).toEqual([{ query: "sso" }]);
  });
});

describe("Mastra's MCP client", () => {
  it("connects at 2026-07-28 with no fallback, lists the profile's tools and calls one", async ({ expect }) => {
    const gateway = await demoGateway();
    const sent: { method: string; version: string | null; status: number }[] = [];
    const mcp = new MastraMCPClient({
      id: `rayrun-${gateway.tag}`,
      servers: {
        rayrun: {
          url: new URL(`${ORIGIN}/mcp`),
          fetch: recordingFetch(sent),
          requestInit: { headers: { authorization: `Bearer ${gateway.clientKey}` } },
        },
      },
    });
    const tools = await mcp.listTools();
    const search = tools["rayrun_demo__search_release_notes"];
    expect(search).toBeDefined();
    const result = await search!.execute!({ query: "sso" }, { observe: noopObserve });
    expect(JSON.stringify(result)).toContain("SSO");
    await mcp.disconnect();
    expectModernOnly(sent, expect);
    expect((await upstreamReceived(gateway.tag)).calls.map((call) => call.arguments)).toEqual([{ query: "sso" }]);
  });
});

describe("LangChain's MCP adapters", () => {
  it("connect at 2025-11-25 (their v1 SDK client speaks no 2026-07-28), list the profile's tools and call one", async ({ expect }) => {
    const gateway = await demoGateway();
    const sent: { method: string; version: string | null; status: number }[] = [];
    // The adapters take no fetch of their own: for this test, the global one sends what is for the gateway's origin
    // to the gateway under test (which shares this isolate, so its own upstream requests keep the real fetch).
    const realFetch = globalThis.fetch;
    const toGateway = recordingFetch(sent);
    vi.stubGlobal("fetch", (input: RequestInfo | URL, init?: RequestInit) =>
      String(input instanceof Request ? input.url : input).startsWith(ORIGIN) ? toGateway(input, init) : realFetch(input, init),
    );
    try {
      const client = new MultiServerMCPClient({
        mcpServers: {
          rayrun: { transport: "http", url: `${ORIGIN}/mcp`, headers: { authorization: `Bearer ${gateway.clientKey}` } },
        },
      });
      const tools = await client.getTools();
      const search = tools.find((tool) => tool.name.endsWith("demo__search_release_notes"));
      expect(search).toBeDefined();
      const answer = await search!.invoke({ query: "sso" });
      expect(JSON.stringify(answer)).toContain("SSO");
      await client.close();
    } finally {
      vi.unstubAllGlobals();
    }
    expect(sent[0]).toMatchObject({ method: "initialize", status: 200 });
    for (const request of sent.filter((each) => each.method !== "initialize" && each.method !== "DELETE"))
      expect(request).toMatchObject({ version: "2025-11-25" });
    expect(sent.map((request) => request.method)).not.toContain("server/discover");
    expect((await upstreamReceived(gateway.tag)).calls.map((call) => call.arguments)).toEqual([{ query: "sso" }]);
  });
});

describe("Cloudflare's agents MCP client", () => {
  it("connects at 2026-07-28 with no fallback, lists the profile's tools and calls one", async ({ expect }) => {
    const gateway = await demoGateway();
    const sent: { method: string; version: string | null; status: number }[] = [];
    // The client is a Durable Object capability: it runs installed in a Durable Object's lifecycle, whose SQLite
    // storage keeps its servers. Any SQLite-backed object of this Worker can host it; a relay no call uses does.
    const host = env.CALL_RELAY.getByName(`agents-mcp-host-${gateway.tag}`);
    const result = await runInDurableObject(host, async (instance) => {
      const manager = new MCPClientManager("rayrun-test", "1.0.0");
      const lifecycle = new Lifecycle(instance);
      lifecycle.use(manager);
      await lifecycle.start();
      const { id } = await manager.connect(`${ORIGIN}/mcp`, {
        transport: {
          type: "streamable-http",
          fetch: recordingFetch(sent),
          requestInit: { headers: { authorization: `Bearer ${gateway.clientKey}` } },
        } as never,
      });
      expect(manager.listTools().map((tool) => tool.name)).toContain("demo__search_release_notes");
      const called = await manager.callTool({ serverId: id, name: "demo__search_release_notes", arguments: { query: "sso" } });
      await manager.closeAllConnections();
      return called;
    });
    expect(JSON.stringify(result)).toContain("SSO");
    expectModernOnly(sent, expect);
    expect((await upstreamReceived(gateway.tag)).calls.map((call) => call.arguments)).toEqual([{ query: "sso" }]);
  });
});
