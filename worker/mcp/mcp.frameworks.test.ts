import { SELF } from "cloudflare:test";
import { describe, it } from "vitest";
import { createMCPClient } from "@ai-sdk/mcp";
import { MCPServerStreamableHttp } from "@openai/agents-core";
import { demoGateway, ORIGIN, upstreamReceived } from "../../test/helpers.ts";

/**
 * Agent frameworks nobody here wrote, against the gateway as they ship. The Vercel AI SDK's MCP client and the
 * OpenAI Agents SDK (on the v2 SDK client, `versionNegotiation: auto`) try 2026-07-28 first (`server/discover`)
 * and fall back to `initialize` only when that fails: here they must not.
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
