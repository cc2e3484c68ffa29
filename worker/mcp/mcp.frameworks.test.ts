import { SELF } from "cloudflare:test";
import { describe, it } from "vitest";
import { createMCPClient } from "@ai-sdk/mcp";
import { demoGateway, ORIGIN, upstreamReceived } from "../../test/helpers.ts";

/**
 * Agent frameworks nobody here wrote, against the gateway as they ship. The Vercel AI SDK's MCP client tries
 * 2026-07-28 first (`server/discover`) and falls back to `initialize` only when that fails: here it must not.
 */
describe("the Vercel AI SDK's MCP client", () => {
  it("connects at 2026-07-28 with no fallback, lists the profile's tools and calls one", async ({ expect }) => {
    const gateway = await demoGateway();
    const sent: { method: string; version: string | null; status: number }[] = [];
    const client = await createMCPClient({
      transport: {
        type: "http",
        url: `${ORIGIN}/mcp`,
        headers: { authorization: `Bearer ${gateway.clientKey}` },
        fetch: async (input, init) => {
          // The SDK asks for `redirect: "error"`, which workerd (where this test runs) does not implement; the
          // gateway never redirects /mcp, so "manual" answers the same.
          const response = await SELF.fetch(input as string, { ...init, ...(init?.redirect === "error" ? { redirect: "manual" } : {}) });
          const body = typeof init?.body === "string" ? (JSON.parse(init.body) as { method?: string }) : {};
          const headers = new Headers(init?.headers);
          sent.push({
            method: body.method ?? init?.method ?? "GET",
            version: headers.get("mcp-protocol-version"),
            status: response.status,
          });
          return response;
        },
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

    expect(sent[0]).toMatchObject({ method: "server/discover", version: "2026-07-28", status: 200 });
    expect(sent.map((request) => request.method)).not.toContain("initialize");
    for (const request of sent.filter((each) => each.method !== "DELETE")) {
      expect(request).toMatchObject({ version: "2026-07-28", status: 200 });
    }
    expect((await upstreamReceived(gateway.tag)).calls.map((call) => call.arguments)).toEqual([{ query: "sso" }]);
  });
});
