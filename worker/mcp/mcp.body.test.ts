import { SELF } from "cloudflare:test";
import { describe, it } from "vitest";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import { demoGateway, ORIGIN } from "../../test/helpers.ts";
import { MAX_BODY_BYTES, readJsonBody } from "./mcp.body.ts";

const accept = "application/json, text/event-stream";

/** What the SDK transport on its own answers: the gateway must answer malformed requests exactly like it. */
async function bareTransportAnswer(init: RequestInit): Promise<{ status: number; body: unknown }> {
  const server = new Server({ name: "bare", version: "0" }, { capabilities: { tools: {} } });
  const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
  await server.connect(transport);
  const response = await transport.handleRequest(new Request(`${ORIGIN}/mcp`, { method: "POST", ...init }));
  return { status: response.status, body: await response.json() };
}

async function gatewayAnswer(key: string, init: RequestInit): Promise<{ status: number; body: unknown }> {
  const headers = new Headers(init.headers);
  headers.set("authorization", `Bearer ${key}`);
  const response = await SELF.fetch(`${ORIGIN}/mcp`, { method: "POST", ...init, headers });
  return { status: response.status, body: await response.json() };
}

describe("MCP request bodies", () => {
  it("parses a body with or without a Content-Length in one read, and leaves one declared too large to the transport", async ({
    expect,
  }) => {
    const sized = new Request(`${ORIGIN}/mcp`, { method: "POST", headers: { "content-length": "9" }, body: '{"a":[1]}' });
    expect(await readJsonBody(sized)).toEqual({ request: sized, parsedBody: { a: [1] } });

    const streamed = new Request(`${ORIGIN}/mcp`, { method: "POST", body: new Blob(['[{"a":1}]']).stream() });
    expect(await readJsonBody(streamed)).toEqual({ request: streamed, parsedBody: [{ a: 1 }] });

    const declaredHuge = new Request(`${ORIGIN}/mcp`, {
      method: "POST",
      headers: { "content-length": String(MAX_BODY_BYTES + 1) },
      body: "{}",
    });
    expect(await readJsonBody(declaredHuge)).toEqual({ request: declaredHuge });
    expect(declaredHuge.bodyUsed).toBe(false);

    const notJson = await readJsonBody(new Request(`${ORIGIN}/mcp`, { method: "POST", headers: { "content-length": "5" }, body: "{oops" }));
    expect("parsedBody" in notJson).toBe(false);
    expect(await notJson.request.text()).toBe("{oops");
  });

  const cases: [string, () => RequestInit, number][] = [
    ["invalid JSON", () => ({ headers: { "content-type": "application/json", accept }, body: '{"jsonrpc": "2.0",' }), 400],
    ["JSON that is not JSON-RPC", () => ({ headers: { "content-type": "application/json", accept }, body: '{"hello": "world"}' }), 400],
    [
      "a body over 4 MiB",
      () => ({ headers: { "content-type": "application/json", accept }, body: `"${"x".repeat(4 * 1024 * 1024)}"` }),
      413,
    ],
    ["a body that is not application/json", () => ({ headers: { "content-type": "text/plain", accept }, body: "{}" }), 415],
    [
      "a client that does not accept JSON",
      () => ({ headers: { "content-type": "application/json", accept: "text/html" }, body: "{}" }),
      406,
    ],
  ];
  for (const [name, init, status] of cases) {
    it(`answers ${name} as the SDK transport does (${status})`, async ({ expect }) => {
      const gateway = await demoGateway();
      const expected = await bareTransportAnswer(init());
      expect(expected.status).toBe(status);
      expect(await gatewayAnswer(gateway.clientKey, init())).toEqual(expected);
    });
  }

  it("refuses a body streamed without a Content-Length past 4 MiB with 413, without reading the rest", async ({ expect }) => {
    const gateway = await demoGateway();
    let pulled = 0;
    // 64 MiB of JSON whitespace, produced only as the endpoint pulls it.
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (pulled >= 64 * 1024 * 1024) return controller.close();
        pulled += 64 * 1024;
        controller.enqueue(new Uint8Array(64 * 1024).fill(0x20));
      },
    });
    const answer = await gatewayAnswer(gateway.clientKey, { headers: { "content-type": "application/json", accept }, body });
    expect(answer).toEqual({
      status: 413,
      body: { jsonrpc: "2.0", id: null, error: { code: -32000, message: expect.stringMatching(/too large/i) } },
    });
    expect(pulled).toBeLessThan(MAX_BODY_BYTES + 4 * 64 * 1024);
  });

  it("reads no more than the bound when a body runs past its declared Content-Length", async ({ expect }) => {
    let pulled = 0;
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        pulled += 64 * 1024;
        controller.enqueue(new Uint8Array(64 * 1024).fill(0x20));
      },
    });
    const read = await readJsonBody(new Request(`${ORIGIN}/mcp`, { method: "POST", headers: { "content-length": "2" }, body }));
    expect("parsedBody" in read).toBe(false);
    expect((await read.request.arrayBuffer()).byteLength).toBe(MAX_BODY_BYTES + 1);
    expect(pulled).toBeLessThan(MAX_BODY_BYTES + 4 * 64 * 1024);
  });

  it("serves a body streamed without a Content-Length", async ({ expect }) => {
    const gateway = await demoGateway();
    const message = new TextEncoder().encode(
      JSON.stringify({
        jsonrpc: "2.0",
        id: 3,
        method: "tools/call",
        params: { name: "demo__search_release_notes", arguments: { query: "sso" } },
      }),
    );
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(message.slice(0, 20));
        controller.enqueue(message.slice(20));
        controller.close();
      },
    });
    const answer = await gatewayAnswer(gateway.clientKey, {
      headers: { "content-type": "application/json", accept, "mcp-protocol-version": "2025-06-18" },
      body,
    });
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ id: 3, result: { structuredContent: { items: [{ title: "SSO" }] } } });
  });
});
