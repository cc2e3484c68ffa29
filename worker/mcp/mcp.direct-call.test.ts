import { SELF } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { SUPPORTED_PROTOCOL_VERSIONS } from "@modelcontextprotocol/sdk/types.js";
import { demoGateway, hostileGateway, ORIGIN } from "../../test/helpers.ts";
import { directToolCall } from "./mcp.direct-call.ts";
import type { GatewaySession } from "./mcp.session.ts";

const ACCEPT_BOTH = "application/json, text/event-stream";

function post(key: string, body: unknown, headers: Record<string, string> = {}) {
  return SELF.fetch(`${ORIGIN}/mcp`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json", accept: ACCEPT_BOTH, ...headers },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
}

const call = (name: string, args: Record<string, unknown> = {}, meta?: Record<string, unknown>) => ({
  jsonrpc: "2.0",
  id: 7,
  method: "tools/call",
  params: { name, arguments: args, ...(meta && { _meta: meta }) },
});

/** The JSON-RPC answer to request 7 in an SSE body (progress notifications may come first). */
function answerInStream(text: string): unknown {
  for (const event of text.split(/\r?\n\r?\n/)) {
    const data = event
      .split(/\r?\n/)
      .filter((line) => line.startsWith("data:"))
      .map((line) => line.slice(5).trimStart())
      .join("\n");
    if (!data) continue;
    const message = JSON.parse(data) as { id?: unknown };
    if (message.id === 7) return message;
  }
  throw new Error(`no answer in the stream: ${text.slice(0, 500)}`);
}

describe("a lone 2025-era tools/call answered as JSON, without the SDK's server", () => {
  it("answers exactly what the SDK's server sends for the same call on an SSE stream", async () => {
    const demo = await demoGateway();
    const hostile = await hostileGateway();
    const cases: [string, string, Record<string, unknown>][] = [
      [demo.clientKey, "demo__search_release_notes", { query: "search" }],
      // Arguments the tool's schema refuses, and a tool nobody has: the gateway's own errors.
      [demo.clientKey, "demo__search_release_notes", { query: 42 }],
      [demo.clientKey, "demo__no_such_tool", {}],
      // Passed-through bytes, an upstream's output schema, an error result, an upstream JSON-RPC error.
      [hostile.key, "evil__spaced_result", {}],
      [hostile.key, "evil__leaky_error", {}],
      [hostile.key, "evil__escaped_is_error", {}],
      [hostile.key, "evil__forged_rpc_error", {}],
      [hostile.key, "evil__proto_error", {}],
      [hostile.key, "evil__multibyte_sse", {}],
    ];
    for (const [key, name, args] of cases) {
      const json = await post(key, call(name, args));
      expect(json.status, name).toBe(200);
      expect(json.headers.get("content-type"), name).toBe("application/json");
      // Asking for progress makes the same call go through the SDK's server, answered on an SSE stream.
      const streamed = await post(key, call(name, args, { progressToken: "p" }));
      expect(streamed.headers.get("content-type"), name).toBe("text/event-stream");
      expect(await json.json(), name).toEqual(answerInStream(await streamed.text()));
    }
  });

  it("leaves every request the SDK's transport or server would refuse to them, with their own errors", async () => {
    const { clientKey } = await demoGateway();
    const lone = call("demo__search_release_notes", { query: "search" });
    const cases: { body: unknown; headers?: Record<string, string>; status: number; error: Record<string, unknown> }[] = [
      {
        body: lone,
        headers: { accept: "application/json" },
        status: 406,
        error: { code: -32000, message: "Not Acceptable: Client must accept both application/json and text/event-stream" },
      },
      {
        body: lone,
        headers: { "content-type": "text/plain" },
        status: 415,
        error: { code: -32000, message: "Unsupported Media Type: Content-Type must be application/json" },
      },
      {
        body: lone,
        headers: { "mcp-protocol-version": "1999-01-01" },
        status: 400,
        error: {
          code: -32000,
          message: `Bad Request: Unsupported protocol version: 1999-01-01 (supported versions: ${SUPPORTED_PROTOCOL_VERSIONS.join(", ")})`,
        },
      },
      { body: { ...lone, jsonrpc: "1.0" }, status: 400, error: { code: -32700, message: "Parse error: Invalid JSON-RPC message" } },
      { body: { ...lone, extra: true }, status: 400, error: { code: -32700, message: "Parse error: Invalid JSON-RPC message" } },
      {
        body: { ...lone, params: { ...lone.params, _meta: "x" } },
        status: 400,
        error: { code: -32700, message: "Parse error: Invalid JSON-RPC message" },
      },
    ];
    for (const { body, headers, status, error } of cases) {
      const res = await post(clientKey, body, headers);
      expect(res.status, JSON.stringify(headers ?? body)).toBe(status);
      expect(await res.json()).toEqual({ jsonrpc: "2.0", error, id: null });
    }
    // Params the gateway's own check lets by but the SDK's call schema refuses (a `task` that is no object): its
    // protocol layer answers, with the request's id.
    const badTask = await post(clientKey, { ...lone, params: { ...lone.params, task: "x" } });
    expect(badTask.status).toBe(200);
    const refused = (await badTask.json()) as { id: unknown; error: { code: number; message: string } };
    expect(refused).toMatchObject({ jsonrpc: "2.0", id: 7, error: { code: -32603 } });
    expect(JSON.parse(refused.error.message)).toMatchObject([{ code: "invalid_type", path: ["params", "task"] }]);
  });

  it("answers a call with a string id and a call with a supported protocol version header alike", async () => {
    const { clientKey } = await demoGateway();
    const res = await post(
      clientKey,
      { ...call("demo__search_release_notes", { query: "search" }), id: "call-1" },
      { "mcp-protocol-version": "2025-06-18", "content-type": "application/json; charset=utf-8" },
    );
    expect(res.status).toBe(200);
    const answer = (await res.json()) as { id: unknown; result: { structuredContent: unknown } };
    expect(answer.id).toBe("call-1");
    expect(answer.result.structuredContent).toMatchObject({ items: [{ version: "2.4.0" }] });
  });
});

describe("which calls are answered directly", () => {
  const request = (headers: Record<string, string> = {}) =>
    new Request(`${ORIGIN}/mcp`, { method: "POST", headers: { "content-type": "application/json", accept: ACCEPT_BOTH, ...headers } });
  const session = (capabilities: GatewaySession["capabilities"]): GatewaySession => ({
    workspaceId: "ws",
    keyId: "key",
    protocolVersion: "2025-11-25",
    capabilities,
    issuedAt: 0,
  });
  const lone = call("demo__search_release_notes", { query: "search" });

  it("takes a lone call, with or without a session that answers no requests of its own", () => {
    expect(directToolCall(request(), lone, null)).toEqual({ method: "tools/call", params: lone.params, id: 7 });
    expect(directToolCall(request({ "mcp-protocol-version": "2025-11-25" }), lone, session({}))?.id).toBe(7);
  });

  it("leaves to the SDK a batch, an SSE answer, a task, and whatever its transport or server would refuse", () => {
    const refused: [string, Request, unknown, GatewaySession | null][] = [
      ["a batch", request(), [lone], null],
      ["progress asked for", request(), call("x", {}, { progressToken: 1 }), null],
      ["a session that answers elicitations", request(), lone, session({ elicitation: {} })],
      ["a task", request(), { ...lone, params: { ...lone.params, task: { ttl: 1000 } } }, null],
      ["JSON alone accepted", request({ accept: "application/json" }), lone, null],
      ["another content type", request({ "content-type": "text/plain" }), lone, null],
      ["an unknown protocol version", request({ "mcp-protocol-version": "1999-01-01" }), lone, null],
      ["another envelope", request(), { ...lone, jsonrpc: "1.0" }, null],
      ["a notification", request(), { jsonrpc: "2.0", method: "tools/call", params: lone.params }, null],
      ["params the call schema refuses", request(), { ...lone, params: { ...lone.params, task: "x" } }, null],
      ["another method", request(), { ...lone, method: "tools/list", params: {} }, null],
    ];
    for (const [what, req, body, withSession] of refused) expect(directToolCall(req, body, withSession), what).toBeUndefined();
  });
});
