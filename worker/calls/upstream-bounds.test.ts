import { SELF } from "cloudflare:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ElicitRequestSchema, McpError } from "@modelcontextprotocol/sdk/types.js";
import { describe, it } from "vitest";
import {
  addService,
  api,
  connectMcp,
  createKey,
  createWorkspace,
  eventually,
  gatewayError,
  hostileGateway,
  newTag,
  ORIGIN,
  upstreamOrigin,
  upstreamReceived,
} from "../../test/helpers.ts";
import { MAX_UPSTREAM_MESSAGES } from "../services/upstream.messages.ts";
import { authorizedService, newLab } from "../upstream-auth/upstream-oauth.fixtures.ts";

/** The hostile gateway (test/helpers.ts) with an MCP client on its key, and its tools' uids by upstream name. */
async function hostileClient() {
  const gateway = await hostileGateway();
  const client = await connectMcp(gateway.key);
  const tools = (await api(`/v1/workspaces/${gateway.ws}/tools`, { key: gateway.adminKey })).body.tools as {
    uid: string;
    name: string;
  }[];
  const uidOf = (name: string) => tools.find((tool) => tool.name === name)!.uid;
  return { ...gateway, client, uidOf };
}

describe("upstream responses are bounded", () => {
  it("cuts off a result streamed past 8 MiB without a Content-Length, and refuses a larger declared length", async ({ expect }) => {
    const gateway = await hostileClient();
    const small = await gateway.client.callTool({ name: "evil__stream_text", arguments: { bytes: 1024 * 1024 } });
    expect(small.isError).toBeFalsy();

    const streamed = await gateway.client.callTool({ name: "evil__stream_text", arguments: { bytes: 64 * 1024 * 1024 } });
    expect(streamed.isError).toBe(true);
    expect(gatewayError(streamed)).toMatchObject({ code: "upstream_response_too_large", details: { tool: "evil__stream_text" } });
    // The same as one SSE event, which the pass-through splitter counts as it reads.
    const smallEvent = await gateway.client.callTool({ name: "evil__stream_text", arguments: { bytes: 1024 * 1024, sse: true } });
    expect(smallEvent.isError).toBeFalsy();
    const hugeEvent = await gateway.client.callTool({ name: "evil__stream_text", arguments: { bytes: 64 * 1024 * 1024, sse: true } });
    expect(gatewayError(hugeEvent)).toMatchObject({ code: "upstream_response_too_large", details: { tool: "evil__stream_text" } });
    const declared = await gateway.client.callTool({ name: "evil__declare_huge", arguments: {} });
    expect(gatewayError(declared)).toMatchObject({ code: "upstream_response_too_large" });
    const rows = await eventually(
      () => api(`/v1/workspaces/${gateway.ws}/tools/${gateway.uidOf("stream_text")}/hook/logs`, { key: gateway.adminKey }),
      (res) => res.body.logs.length === 2,
    );
    for (const row of rows.body.logs) {
      expect(row).toMatchObject({ stage: "upstream", outcome: "upstream_failed", code: "upstream_response_too_large" });
    }
  });

  // FOUND AND FIXED (high): a declared Content-Length under the bound turned counting off, but the runtime decodes a
  // gzip body and the declared length is the encoded one: 64 KiB of gzip delivered a 64 MiB result to the client (and a
  // few MiB would hold gigabytes in the isolate). Fixed: only an unencoded body's declared length stands in for counting.
  it("counts a gzip answer's decoded bytes: a small declared length does not lift the bound", async ({ expect }) => {
    const gateway = await hostileClient();
    for (const sse of [false, true]) {
      const bomb = await gateway.client.callTool({ name: "evil__gzip_bomb", arguments: { sse } });
      expect(bomb.isError).toBe(true);
      expect(gatewayError(bomb)).toMatchObject({ code: "upstream_response_too_large", details: { tool: "evil__gzip_bomb" } });
    }
  });

  // FOUND AND FIXED (medium, round 6): the SDK client reopens a stream the upstream closes after an event id, with no
  // limit on how often, after the upstream's own `retry:` delay. An upstream answering `retry: 0` and closing at once
  // had one call reopen it about 600 times a second, a core of the gateway's CPU, for the call's whole 10 minutes
  // while each reopening carried progress. Fixed: one stream's GETs go out at most one a second.
  it("reopens a stream the upstream closes with retry: 0 at most once a second", async ({ expect }) => {
    const gateway = await hostileClient();
    const started = Date.now();
    const looped = await gateway.client.callTool({ name: "evil__reopen_loop", arguments: {} });
    expect(looped.isError).toBeFalsy();
    // The result comes on the first reopening 2 s after the call: about three of them, not thousands.
    const reopens = Number(/reopened (\d+) times/.exec((looped.content as { text: string }[])[0]!.text)?.[1]);
    expect(reopens).toBeGreaterThanOrEqual(2);
    expect(reopens).toBeLessThanOrEqual(4);
    expect(Date.now() - started).toBeLessThan(6_000);
  });

  // FOUND AND FIXED (medium, round 6): the 8 MiB bound held per response, and each reopening of a stream is a response
  // of its own: an upstream sending 6 MiB on each reopening streamed 6 MiB a second into a call for its 10 minutes, and
  // the gateway held whatever its client did not read (360 MB a minute for a client that read nothing). Fixed: the
  // bound holds for every response of one upstream request together.
  it("counts every reopening of a call's stream against one 8 MiB bound", async ({ expect }) => {
    const gateway = await hostileClient();
    const pad = 5 * 1024 * 1024;
    const looped = await gateway.client.callTool({ name: "evil__reopen_loop", arguments: { pad } });
    expect(gatewayError(looped)).toMatchObject({ code: "upstream_response_too_large", details: { tool: "evil__reopen_loop" } });
    // Within the bound, the same loop ends with its result.
    const small = await gateway.client.callTool({ name: "evil__reopen_loop", arguments: { pad: 1024 } });
    expect(small.isError).toBeFalsy();
  });

  // The same for a call's own session's standalone stream, which no upstream request holds: 6 MiB of log message on
  // each reopening reached a client that read nothing, 360 MB a minute. Now its responses share one 8 MiB bound, and
  // past it the stream is not opened again.
  it("bounds a call's standalone stream's bytes over all its reopenings", async ({ expect }) => {
    const workspace = await createWorkspace();
    await addService(workspace, { slug: "evil", url: `${upstreamOrigin()}/fixtures/hostile/standalone-flood-${newTag()}/mcp` });
    const key = await createKey(workspace, ["tools:call"], workspace.defaultProfileId);
    const transport = new StreamableHTTPClientTransport(new URL(`${ORIGIN}/mcp`), {
      fetch: (input, init) => SELF.fetch(input as string, init),
      requestInit: { headers: { authorization: `Bearer ${key}` } },
    });
    // Declaring elicitation gives each call its own upstream session, with its standalone stream.
    const client = new Client({ name: "slow", version: "1" }, { capabilities: { elicitation: {} } });
    client.setRequestHandler(ElicitRequestSchema, () => ({ action: "decline" }));
    await client.connect(transport);
    const flooded = await client.callTool({ name: "evil__standalone_flood", arguments: {} });
    // 5 MiB each: the second opening passes 8 MiB, and the stream is not opened a third time in the call's 4 s.
    expect(flooded.content).toEqual([{ type: "text", text: "standalone opened 2 times" }]);
    await client.close();
  });

  // FOUND AND FIXED (medium, round 6): the response bound counts bytes, but each message costs the SDK's parse and
  // handling whatever its size: 8 MiB of tiny log messages took 4 s of the isolate's CPU, once per reopening of the
  // stream for the call's 10 minutes. Fixed: at most MAX_UPSTREAM_MESSAGES messages per upstream request.
  it("ends a call whose upstream sends more than MAX_UPSTREAM_MESSAGES messages, and lets one under it finish", async ({ expect }) => {
    const gateway = await hostileClient();
    const under = await gateway.client.callTool({ name: "evil__message_flood", arguments: { count: MAX_UPSTREAM_MESSAGES - 10 } });
    expect(under.isError).toBeFalsy();
    expect(under.content).toEqual([{ type: "text", text: `after ${MAX_UPSTREAM_MESSAGES - 10}` }]);
    const flood = await gateway.client.callTool({ name: "evil__message_flood", arguments: { count: 4 * MAX_UPSTREAM_MESSAGES } });
    expect(gatewayError(flood)).toMatchObject({ code: "upstream_response_too_large", details: { tool: "evil__message_flood" } });
  });

  it("refuses to index a tool list over 4 MiB, or a tools/list page over 8 MiB, and stores nothing", async ({ expect }) => {
    const workspace = await createWorkspace();
    const index = (count: number) =>
      api(`/v1/workspaces/${workspace.ws}/services`, {
        key: workspace.adminKey,
        body: { slug: `fat${count}`, url: `${upstreamOrigin()}/fixtures/fat-tools/${count}/mcp` },
      });
    const listTooLarge = await index(50);
    expect(listTooLarge.status).toBe(413);
    expect(listTooLarge.body.error).toMatchObject({ code: "tool_list_too_large", details: { limit: 4 * 1024 * 1024 } });
    const pageTooLarge = await index(90);
    expect(pageTooLarge.status).toBe(502);
    expect(pageTooLarge.body.error).toMatchObject({ code: "upstream_response_too_large", details: { limit: 8 * 1024 * 1024 } });
    expect((await index(10)).status).toBe(201);
    const services = await api(`/v1/workspaces/${workspace.ws}/services`, { key: workspace.adminKey });
    expect(services.body.services.map((service: { slug: string }) => service.slug)).toEqual(["fat10"]);
  });
});

describe("an upstream cannot speak for the gateway", () => {
  it("applies projection to an error result's structured content too", async ({ expect }) => {
    const gateway = await hostileClient();
    const projection = await api(`/v1/workspaces/${gateway.ws}/tools/${gateway.uidOf("leaky_error")}/projection`, {
      method: "PUT",
      key: gateway.adminKey,
      body: { fields: ["name"] },
    });
    expect(projection.status).toBe(200);
    const result = await gateway.client.callTool({ name: "evil__leaky_error", arguments: {} });
    expect(result.isError).toBe(true);
    expect(result.structuredContent).toEqual({ name: "Ada" });
    expect(JSON.stringify(result)).not.toContain("078-05-1120");
  });

  it("drops an upstream's dev.rayrun metadata from error and success results, and keeps its other metadata", async ({ expect }) => {
    const gateway = await hostileClient();
    const error = await gateway.client.callTool({ name: "evil__leaky_error", arguments: {} });
    expect(error.isError).toBe(true);
    expect(error._meta).toEqual({ "example.com/trace": "kept" });
    const success = await gateway.client.callTool({ name: "evil__forged_success", arguments: {} });
    expect(success.isError).toBeFalsy();
    expect(gatewayError(success)).toBeUndefined();
    expect((await upstreamReceived(`hostile-${gateway.tag}`)).calls).toHaveLength(2);
  });

  it("marks an upstream JSON-RPC error as the upstream's even when it claims otherwise", async ({ expect }) => {
    const gateway = await hostileClient();
    const failure = await gateway.client.callTool({ name: "evil__forged_rpc_error", arguments: {} }).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(McpError);
    expect((failure as McpError).code).toBe(-32602);
    expect((failure as McpError).data).toEqual({ upstream: true, hint: "from the upstream" });
  });
});

describe("hiding comes before every other refusal", () => {
  it("answers Unknown tool, not tool_review_required or upstream_authorization_required, to a profile that blocks the tool", async ({
    expect,
  }) => {
    const workspace = await createWorkspace();
    const profile = await api(`/v1/workspaces/${workspace.ws}/profiles`, {
      key: workspace.adminKey,
      body: { name: "nothing", defaultMode: "block" },
    });
    expect(profile.status).toBe(201);
    // An OAuth service, authorized (its tools indexed), then disconnected: waiting for authorization again.
    const { serviceId } = await authorizedService(workspace, await newLab());
    await api(`/v1/workspaces/${workspace.ws}/services/${serviceId}/authorization`, { method: "DELETE", key: workspace.adminKey });
    const blocked = await connectMcp(await createKey(workspace, ["tools:call"], profile.body.id));
    const answer = await blocked.callTool({ name: "lab__whoami", arguments: {} }).catch((error) => error);
    expect(answer).toBeInstanceOf(McpError);
    expect((answer as McpError).message).toContain("Unknown tool: lab__whoami");
    const allowed = await connectMcp(await createKey(workspace, ["tools:call"], workspace.defaultProfileId));
    const refused = await allowed.callTool({ name: "lab__whoami", arguments: {} });
    expect(gatewayError(refused).code).toBe("upstream_authorization_required");

    // The same for a tool whose changed definition waits for review.
    const key = newTag();
    const setVariant = (variant: number) =>
      fetch(`${upstreamOrigin()}/fixtures/mutable/${key}/state`, { method: "POST", body: JSON.stringify({ variant }) });
    await setVariant(0);
    const mutable = await api(`/v1/workspaces/${workspace.ws}/services`, {
      key: workspace.adminKey,
      body: { slug: "mut", url: `${upstreamOrigin()}/fixtures/mutable/${key}/mcp` },
    });
    await setVariant(1);
    await api(`/v1/workspaces/${workspace.ws}/services/${mutable.body.service.id}/refresh`, { method: "POST", key: workspace.adminKey });
    const inReview = await blocked.callTool({ name: "mut__echo", arguments: { message: "hi", loud: true } }).catch((error) => error);
    expect((inReview as McpError).message).toContain("Unknown tool: mut__echo");
    expect(gatewayError(await allowed.callTool({ name: "mut__echo", arguments: { message: "hi", loud: true } })).code).toBe(
      "tool_review_required",
    );
  });
});

describe("a result nothing changes passes through as the upstream's bytes", () => {
  const SPACED = '{ "content" : [ { "text": "as the upstream wrote it", "type": "text" } ] }';
  const post = (key: string, body: unknown, accept: string) =>
    SELF.fetch(`${ORIGIN}/mcp`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json", accept, "mcp-protocol-version": "2025-06-18" },
      body: JSON.stringify(body),
    });

  it("answers JSON and SSE calls with the upstream's result bytes under the client's own id", async ({ expect }) => {
    const gateway = await hostileClient();
    const key = await createKey(gateway, ["tools:call"], gateway.defaultProfileId);
    const json = await post(
      key,
      { jsonrpc: "2.0", id: "client-7", method: "tools/call", params: { name: "evil__spaced_result" } },
      "application/json, text/event-stream",
    );
    expect(json.headers.get("content-type")).toBe("application/json");
    expect(await json.text()).toBe(`{"result":${SPACED},"jsonrpc":"2.0","id":"client-7"}`);

    const streamed = await post(
      key,
      { jsonrpc: "2.0", id: 8, method: "tools/call", params: { name: "evil__spaced_sse", _meta: { progressToken: "p-1" } } },
      "application/json, text/event-stream",
    );
    expect(streamed.headers.get("content-type")).toBe("text/event-stream");
    const events = (await streamed.text()).split("\n\n").filter((event) => event.includes("data:"));
    expect(events).toHaveLength(2);
    expect(JSON.parse(events[0]!.slice(events[0]!.indexOf("data: ") + 6))).toMatchObject({
      method: "notifications/progress",
      params: { progressToken: "p-1", progress: 1 },
    });
    expect(events[1]).toContain(`data: {"result":${SPACED},"jsonrpc":"2.0","id":8}`);

    // Bytes that are not one JSON value never pass through: the gateway parses the answer and writes its own.
    const smuggling = await post(
      key,
      { jsonrpc: "2.0", id: 9, method: "tools/call", params: { name: "evil__smuggled_member" } },
      "application/json, text/event-stream",
    );
    const answer = JSON.parse(await smuggling.text());
    expect(Object.keys(answer).sort()).toEqual(["id", "jsonrpc", "result"]);
    expect(answer.result.isError).toBe(true);
    expect(answer.result._meta["dev.rayrun/error"].code).toBe("upstream_protocol_error");

    // The SDK client reads both as ordinary results.
    for (const name of ["evil__spaced_result", "evil__spaced_sse"]) {
      expect(await gateway.client.callTool({ name, arguments: {} })).toEqual({
        content: [{ type: "text", text: "as the upstream wrote it" }],
      });
    }
  });

  it("passes a large result through as sent, whether it is read without its long strings or whole", async ({ expect }) => {
    const gateway = await hostileClient();
    const key = await createKey(gateway, ["tools:call"], gateway.defaultProfileId);
    for (const [name, blocks] of [
      ["evil__long_strings_sse", 1],
      ["evil__many_blocks_sse", 1500],
    ] as const) {
      const streamed = await post(
        key,
        { jsonrpc: "2.0", id: 5, method: "tools/call", params: { name, _meta: { progressToken: "p-5" } } },
        "application/json, text/event-stream",
      );
      const answer = await streamed.text();
      // The upstream's spacing survives: these are its bytes, not a rewrite.
      expect(answer).toContain('data: {"result":{ "content" : [ { "type": "text", "text": ');
      const data = answer.split("\n").find((line) => line.startsWith("data: ") && line.includes('"result"'))!;
      const result = JSON.parse(data.slice(6)).result;
      expect(result.content).toHaveLength(blocks);
      expect(result.isError).toBeUndefined();
    }
    // The escapes inside the long text stay text, to the SDK client as to the gateway.
    const read = await gateway.client.callTool({ name: "evil__long_strings_sse", arguments: {} });
    expect(read.isError).toBeUndefined();
    expect((read.content as { text: string }[])[0]!.text).toMatch(/"},"isError":true,"_meta":\{"dev.rayrun\/error":\{\}\}\}$/);
  });

  it("passes a result through byte for byte when its characters, and the chunks it came in, are cut mid-character", async ({ expect }) => {
    const gateway = await hostileClient();
    const key = await createKey(gateway, ["tools:call"], gateway.defaultProfileId);
    const streamed = await post(
      key,
      { jsonrpc: "2.0", id: 4, method: "tools/call", params: { name: "evil__multibyte_sse", _meta: { progressToken: "p-4" } } },
      "application/json, text/event-stream",
    );
    expect(streamed.headers.get("content-type")).toBe("text/event-stream");
    const answer = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(await streamed.arrayBuffer());
    expect(answer).toContain(
      `data: {"result":{ "content" : [ { "text": "café — naïve 𝄞 ok", "type": "text" } ] },"jsonrpc":"2.0","id":4}\n`,
    );
    // The upstream's own event ids stay upstream's: the client's stream is the gateway's.
    expect(answer).not.toMatch(/é-1|ü-2/);
    expect(await gateway.client.callTool({ name: "evil__multibyte_sse", arguments: {} })).toEqual({
      content: [{ type: "text", text: "café — naïve 𝄞 ok" }],
    });
  });
});
