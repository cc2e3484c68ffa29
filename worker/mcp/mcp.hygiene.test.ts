import { SELF } from "cloudflare:test";
import { describe, it } from "vitest";
import { McpError } from "@modelcontextprotocol/sdk/types.js";
import { connectMcp, demoGateway, ORIGIN } from "../../test/helpers.ts";

const listTools = (id: number) => ({ jsonrpc: "2.0", id, method: "tools/list" });

/** One raw POST to /mcp, as a client that is not the SDK would send it. */
async function post(key: string, body: unknown, headers: Record<string, string>, stream = false) {
  const text = JSON.stringify(body);
  const response = await SELF.fetch(`${ORIGIN}/mcp`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json", ...headers },
    body: stream ? new Blob([text]).stream() : text,
  });
  return { status: response.status, contentType: response.headers.get("content-type"), body: await response.json() };
}

describe("MCP protocol hygiene", () => {
  it("treats Accept: */* as accepting both JSON and SSE", async ({ expect }) => {
    const gateway = await demoGateway();
    for (const accept of ["*/*", "text/html;q=0.5, */*;q=0.1"]) {
      const answer = await post(gateway.clientKey, listTools(1), { accept, "mcp-protocol-version": "2025-06-18" });
      expect(answer.status).toBe(200);
      expect(answer.body).toMatchObject({
        id: 1,
        result: { tools: expect.arrayContaining([expect.objectContaining({ name: "demo__lookup_customer" })]) },
      });
    }
    // A type that is neither, and no wildcard, is still refused as the transport does.
    const refused = await post(gateway.clientKey, listTools(2), { accept: "text/html", "mcp-protocol-version": "2025-06-18" });
    expect(refused.status).toBe(406);
  });

  it("answers an unknown tool with JSON-RPC -32602 'Unknown tool: …', prefixed once by the client SDK and never on the wire", async ({
    expect,
  }) => {
    const gateway = await demoGateway();
    const wire = await post(
      gateway.clientKey,
      { jsonrpc: "2.0", id: 7, method: "tools/call", params: { name: "demo__no_such_tool", arguments: {} } },
      { accept: "application/json, text/event-stream", "mcp-protocol-version": "2025-11-25" },
    );
    expect(wire).toMatchObject({
      status: 200,
      body: { jsonrpc: "2.0", id: 7, error: { code: -32602, message: "Unknown tool: demo__no_such_tool" } },
    });

    const client = await connectMcp(gateway.clientKey);
    const error = await client.callTool({ name: "demo__no_such_tool", arguments: {} }).catch((thrown: unknown) => thrown);
    expect(error).toBeInstanceOf(McpError);
    expect((error as McpError).code).toBe(-32602);
    expect((error as McpError).message).toBe("MCP error -32602: Unknown tool: demo__no_such_tool");
  });

  it("runs a JSON-RPC batch in protocol version 2025-03-26 (also when the header is absent, as the spec says to assume)", async ({
    expect,
  }) => {
    const gateway = await demoGateway();
    for (const headers of [{ "mcp-protocol-version": "2025-03-26" }, {}] as Record<string, string>[]) {
      const answer = await post(gateway.clientKey, [listTools(1), listTools(2)], {
        accept: "application/json, text/event-stream",
        ...headers,
      });
      expect(answer.status).toBe(200);
      expect((answer.body as { id: number }[]).map((response) => response.id)).toEqual([1, 2]);
    }
  });

  it("refuses a JSON-RPC batch in 2025-06-18 and later with 400 and -32600, whether or not the body has a Content-Length", async ({
    expect,
  }) => {
    const gateway = await demoGateway();
    for (const [version, stream] of [
      ["2025-06-18", false],
      ["2025-11-25", false],
      ["2025-11-25", true],
    ] as const) {
      const answer = await post(
        gateway.clientKey,
        [listTools(1), listTools(2)],
        { accept: "application/json, text/event-stream", "mcp-protocol-version": version },
        stream,
      );
      expect(answer).toEqual({
        status: 400,
        contentType: "application/json",
        body: {
          jsonrpc: "2.0",
          id: null,
          error: {
            code: -32600,
            message: `JSON-RPC batches are not part of MCP protocol version ${version} (only 2025-03-26 has them); send one message per request`,
          },
        },
      });
    }
    // An initialize in a batch without the header asks for the version it would negotiate.
    const initialize = {
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "1" } },
    };
    const asked = await post(gateway.clientKey, [initialize], { accept: "application/json, text/event-stream" });
    expect(asked).toMatchObject({ status: 400, body: { error: { code: -32600 } } });
  });
});
