import { SELF } from "cloudflare:test";
import { describe, it } from "vitest";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  ListRootsRequestSchema,
  LoggingMessageNotificationSchema,
  McpError,
  type ClientCapabilities,
  type Progress,
} from "@modelcontextprotocol/sdk/types.js";
import { CfWorkerJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/cfworker-provider.js";
import {
  addService,
  api,
  createKey,
  createWorkspace,
  eventually,
  gatewayError,
  newTag,
  ORIGIN,
  upstreamOrigin,
  upstreamReceived,
} from "../../test/helpers.ts";
import { STANDALONE_STREAM_WAIT_MS } from "../services/upstream.ts";
import { CALL_IDLE_TIMEOUT_MS } from "../services/upstream.call.ts";
import { STEP_LEVELS } from "../../demo/upstream/interactive.ts";

const text = (result: Record<string, unknown>) => (result.content as { text: string }[])[0]!.text;

/** A workspace fronting the interactive fixture (progress, silence, elicitation, sampling) as service `live`. */
async function interactiveGateway(fixture: "interactive" | "interactive-held-get" = "interactive") {
  const ws = await createWorkspace();
  const tag = newTag();
  await addService(ws, { slug: "live", url: `${upstreamOrigin()}/fixtures/${fixture}/${tag}/mcp` });
  const key = await createKey(ws, ["tools:call"], ws.defaultProfileId);
  const tools = (await api(`/v1/workspaces/${ws.ws}/tools`, { key: ws.adminKey })).body.tools as { uid: string; name: string }[];
  const logs = async (name: string) => {
    const uid = tools.find((tool) => tool.name === name)!.uid;
    return (await api(`/v1/workspaces/${ws.ws}/tools/${uid}/hook/logs`, { key: ws.adminKey })).body.logs as Record<string, any>[];
  };
  const received = async () => (await upstreamReceived(`interactive-${tag}`)).calls;
  /** The call rows of one tool, newest first. */
  const calls = async (name: string) => {
    const uid = tools.find((tool) => tool.name === name)!.uid;
    return (await api(`/v1/workspaces/${ws.ws}/logs?tool=${uid}`, { key: ws.adminKey })).body.calls as Record<string, any>[];
  };
  return { ...ws, key, logs, calls, received };
}

/** The official SDK client through the gateway, declaring `capabilities`. */
async function connect(key: string, capabilities: ClientCapabilities = {}): Promise<Client> {
  const transport = new StreamableHTTPClientTransport(new URL(`${ORIGIN}/mcp`), {
    fetch: (input, init) => SELF.fetch(input as string, init),
    requestInit: { headers: { authorization: `Bearer ${key}` } },
  });
  const client = new Client(
    { name: "streaming-agent", version: "1.0.0" },
    { capabilities, jsonSchemaValidator: new CfWorkerJsonSchemaValidator() },
  );
  await client.connect(transport);
  return client;
}

describe("streamed tool calls", () => {
  it.concurrent(
    "runs a 45 s tool while its progress reaches the client under the client's own token",
    async ({ expect }) => {
      const gateway = await interactiveGateway();
      const client = await connect(gateway.key);
      const progress: Progress[] = [];
      const result = await client.callTool({ name: "live__slow_count", arguments: { seconds: 45, every: 5 } }, undefined, {
        // The SDK client calls onprogress only for notifications carrying the token it sent.
        onprogress: (update) => progress.push(update),
        resetTimeoutOnProgress: true,
        timeout: 20_000,
      });
      expect(result.isError).toBeFalsy();
      expect(text(result)).toBe("counted 9 steps");
      expect(progress.map((update) => update.progress)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9]);
      expect(progress[0]).toEqual({ progress: 1, total: 9, message: "step 1 of 9" });
      await client.close();
    },
    70_000,
  );

  it.concurrent(
    "stops an upstream that goes silent past the idle timeout with upstream_timeout, and tells it",
    async ({ expect }) => {
      const gateway = await interactiveGateway();
      const client = await connect(gateway.key);
      const started = Date.now();
      const result = await client.callTool({ name: "live__go_quiet", arguments: { seconds: 45 } }, undefined, { timeout: 60_000 });
      const elapsed = Date.now() - started;
      expect(result.isError).toBe(true);
      expect(gatewayError(result)).toEqual({
        code: "upstream_timeout",
        message: `The upstream sent nothing for ${CALL_IDLE_TIMEOUT_MS / 1000} s, so the call was stopped`,
        details: { tool: "live__go_quiet", bound: "idle" },
      });
      expect(elapsed).toBeGreaterThanOrEqual(CALL_IDLE_TIMEOUT_MS);
      expect(elapsed).toBeLessThan(CALL_IDLE_TIMEOUT_MS + 8_000);
      // The gateway cancelled the upstream request rather than leaving it running.
      await eventually(gateway.received, (calls) => calls.some((call) => call.tool === "go_quiet:cancelled"));
      const rows = await eventually(
        () => gateway.logs("go_quiet"),
        (rows) => rows.length > 0,
      );
      expect(rows.map((row) => [row.stage, row.outcome, row.code])).toEqual([["upstream", "upstream_failed", "upstream_timeout"]]);
      const [callRow] = await eventually(
        () => gateway.calls("go_quiet"),
        (calls) => calls.length > 0,
      );
      expect(callRow).toMatchObject({ kind: "tools/call", outcome: "timed_out", code: "upstream_timeout", requestId: rows[0]!.requestId });
      expect(callRow!.upstreamMs).toBeGreaterThanOrEqual(CALL_IDLE_TIMEOUT_MS - 1000);
      await client.close();
    },
    70_000,
  );

  it("passes a client's cancellation on to the upstream and logs the call as cancelled", async ({ expect }) => {
    const gateway = await interactiveGateway();
    const client = await connect(gateway.key);
    const controller = new AbortController();
    const call = client.callTool({ name: "live__slow_count", arguments: { seconds: 20, every: 1 } }, undefined, {
      signal: controller.signal,
      onprogress: (update) => {
        if (update.progress === 2) controller.abort("the user pressed stop");
      },
    });
    await expect(call).rejects.toThrow("the user pressed stop");
    const calls = await eventually(gateway.received, (calls) => calls.some((call) => call.tool === "slow_count:cancelled"));
    expect(calls.find((call) => call.tool === "slow_count:cancelled")!.arguments).toMatchObject({ step: 3 });
    const rows = await eventually(
      () => gateway.logs("slow_count"),
      (rows) => rows.length > 0,
    );
    expect(rows.map((row) => [row.stage, row.outcome, row.code])).toEqual([["upstream", "cancelled", "cancelled"]]);
    const [callRow] = await eventually(
      () => gateway.calls("slow_count"),
      (calls) => calls.length > 0,
    );
    expect(callRow).toMatchObject({ kind: "tools/call", outcome: "cancelled", code: "cancelled", requestId: rows[0]!.requestId });
    await client.close();
  });

  it("cancels the upstream request when the client drops a streamed call's connection", async ({ expect }) => {
    const gateway = await interactiveGateway();
    const response = await SELF.fetch(`${ORIGIN}/mcp`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${gateway.key}`,
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
      },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 5,
        method: "tools/call",
        params: { name: "live__slow_count", arguments: { seconds: 20, every: 1 }, _meta: { progressToken: "mine" } },
      }),
    });
    expect(response.headers.get("content-type")).toBe("text/event-stream");
    const reader = response.body!.getReader();
    const first = new TextDecoder().decode((await reader.read()).value);
    expect(first).toContain('"progressToken":"mine"');
    await reader.cancel();
    await eventually(gateway.received, (calls) => calls.some((call) => call.tool === "slow_count:cancelled"));
    const rows = await eventually(
      () => gateway.logs("slow_count"),
      (rows) => rows.length > 0,
    );
    expect(rows.map((row) => [row.stage, row.outcome, row.code])).toEqual([["upstream", "cancelled", "cancelled"]]);
  });

  it("cancels the upstream request when the client of a plain JSON call disconnects without cancelling", async ({ expect }) => {
    const gateway = await interactiveGateway();
    const controller = new AbortController();
    const response = SELF.fetch(`${ORIGIN}/mcp`, {
      method: "POST",
      signal: controller.signal,
      headers: {
        authorization: `Bearer ${gateway.key}`,
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
      },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 6,
        method: "tools/call",
        params: { name: "live__slow_count", arguments: { seconds: 20, every: 1 } },
      }),
    });
    await eventually(gateway.received, (calls) => calls.some((call) => call.tool === "slow_count"));
    controller.abort();
    await expect(response).rejects.toThrow();
    await eventually(gateway.received, (calls) => calls.some((call) => call.tool === "slow_count:cancelled"));
    const rows = await eventually(
      () => gateway.logs("slow_count"),
      (rows) => rows.length > 0,
    );
    expect(rows.map((row) => [row.stage, row.outcome, row.code])).toEqual([["upstream", "cancelled", "cancelled"]]);
  });

  it("relays roots/list to a client that declared roots", async ({ expect }) => {
    const gateway = await interactiveGateway();
    const client = await connect(gateway.key, { roots: {} });
    client.setRequestHandler(ListRootsRequestSchema, async () => ({ roots: [{ uri: "file:///work/a" }, { uri: "file:///work/b" }] }));
    const result = await client.callTool({ name: "live__list_roots", arguments: {} });
    expect(text(result)).toBe("file:///work/a,file:///work/b");
    await client.close();
  });

  it("sends the call after waiting 2 s for an upstream that never answers its standalone stream", async ({ expect }) => {
    const gateway = await interactiveGateway("interactive-held-get");
    const client = await connect(gateway.key, { roots: {} });
    client.setRequestHandler(ListRootsRequestSchema, async () => ({ roots: [{ uri: "file:///work/a" }] }));
    const started = Date.now();
    const result = await client.callTool({ name: "live__list_roots", arguments: {} });
    const elapsed = Date.now() - started;
    // A request the upstream makes on the call's own stream still reaches the client.
    expect(text(result)).toBe("file:///work/a");
    expect(elapsed).toBeGreaterThanOrEqual(STANDALONE_STREAM_WAIT_MS);
    expect(elapsed).toBeLessThan(STANDALONE_STREAM_WAIT_MS + 5_000);
    await client.close();
  });

  it("answers a call without a progress token as plain JSON, as before", async ({ expect }) => {
    const gateway = await interactiveGateway();
    const res = await api("/mcp", {
      key: gateway.key,
      headers: { accept: "application/json, text/event-stream" },
      body: { jsonrpc: "2.0", id: 9, method: "tools/call", params: { name: "live__slow_count", arguments: { seconds: 1, every: 1 } } },
    });
    expect(res.headers.get("content-type")).toBe("application/json");
    expect(res.body.result.content).toEqual([{ type: "text", text: "counted 1 steps" }]);
  });

  it("relays an upstream's elicitation to a client that declared it, and the client's answer back", async ({ expect }) => {
    const gateway = await interactiveGateway();
    const client = await connect(gateway.key, { elicitation: { form: {} } });
    const asked: string[] = [];
    client.setRequestHandler(ElicitRequestSchema, async (request) => {
      asked.push(request.params.message);
      return { action: "accept", content: { name: "Ada" } };
    });
    const result = await client.callTool({ name: "live__ask_user", arguments: { question: "Who is asking?" } });
    expect(asked).toEqual(["Who is asking?"]);
    expect(result.isError).toBeFalsy();
    expect(text(result)).toBe('accept: {"name":"Ada"}');
    await client.close();
  });

  it("offers a tool the upstream lists only to clients declaring elicitation to those clients alone", async ({ expect }) => {
    const gateway = await interactiveGateway();
    const capable = await connect(gateway.key, { elicitation: { form: {} } });
    capable.setRequestHandler(ElicitRequestSchema, async () => ({ action: "accept", content: { confirmed: true } }));
    expect((await capable.listTools()).tools.map((tool) => tool.name)).toContain("live__confirm_with_user");
    const confirmed = await capable.callTool({ name: "live__confirm_with_user", arguments: { action: "deploy" } });
    expect(confirmed).toEqual({ content: [{ type: "text", text: "deploy: confirmed" }] });

    // Without the capability the tool does not exist: not listed, and a call answers as for any unknown name.
    const plain = await connect(gateway.key);
    const names = (await plain.listTools()).tools.map((tool) => tool.name);
    expect(names).toContain("live__ask_user");
    expect(names).not.toContain("live__confirm_with_user");
    const refused = await plain.callTool({ name: "live__confirm_with_user", arguments: { action: "deploy" } }).catch((error) => error);
    const unknown = await plain.callTool({ name: "live__no_such_tool", arguments: { action: "deploy" } }).catch((error) => error);
    expect(refused).toBeInstanceOf(McpError);
    expect(refused.code).toBe(unknown.code);
    expect(refused.message).toBe(unknown.message.replace("live__no_such_tool", "live__confirm_with_user"));
    expect(refused.message).toContain("Unknown tool: live__confirm_with_user");
    expect((await gateway.received()).filter((call) => call.tool === "confirm_with_user")).toHaveLength(1);

    // The admin's tool list says what a client needs to see it.
    const tools = (await api(`/v1/workspaces/${gateway.ws}/tools`, { key: gateway.adminKey })).body.tools as Record<string, unknown>[];
    expect(tools.find((tool) => tool.name === "confirm_with_user")).toMatchObject({ clientCapabilities: ["elicitation"] });
    expect(tools.find((tool) => tool.name === "ask_user")).toMatchObject({ clientCapabilities: null });
    await capable.close();
    await plain.close();
  });

  it("relays a sampling request the upstream sends on its session's standalone stream, not the call's", async ({ expect }) => {
    const gateway = await interactiveGateway();
    const client = await connect(gateway.key, { sampling: {} });
    const prompts: string[] = [];
    client.setRequestHandler(CreateMessageRequestSchema, async (request) => {
      const content = request.params.messages[0]!.content;
      prompts.push(!Array.isArray(content) && content.type === "text" ? content.text : "?");
      return { role: "assistant", content: { type: "text", text: "forty-two" }, model: "test-model", stopReason: "endTurn" };
    });
    const result = await client.callTool({ name: "live__ask_model_on_session", arguments: { prompt: "The answer?" } }, undefined, {
      timeout: 10_000,
    });
    expect(prompts).toEqual(["The answer?"]);
    expect(result.isError).toBeFalsy();
    expect(text(result)).toBe("model said: forty-two");
    await client.close();
  });

  it("relays the upstream's log messages during a call on the call's stream to a client whose call has its own upstream session", async ({
    expect,
  }) => {
    const gateway = await interactiveGateway();
    const client = await connect(gateway.key, { sampling: {} });
    const logged: unknown[] = [];
    client.setNotificationHandler(LoggingMessageNotificationSchema, (notification) => void logged.push(notification.params));
    const result = await client.callTool({ name: "live__log_steps", arguments: { steps: 3 } });
    expect(text(result)).toBe("logged 3 steps");
    expect(logged).toEqual([1, 2, 3].map((step) => ({ level: STEP_LEVELS[step - 1], logger: "steps", data: `step ${step}` })));
    await client.close();
  });

  it("keeps a session's logging/setLevel and relays only upstream log messages at or above it", async ({ expect }) => {
    const gateway = await interactiveGateway();
    const client = await connect(gateway.key, { sampling: {} });
    const logged: unknown[] = [];
    client.setNotificationHandler(LoggingMessageNotificationSchema, (notification) => void logged.push(notification.params));
    await expect(client.setLoggingLevel("warning")).resolves.toEqual({});
    expect(text(await client.callTool({ name: "live__log_steps", arguments: { steps: 5 } }))).toBe("logged 5 steps");
    expect(logged).toEqual([
      { level: "warning", logger: "steps", data: "step 3" },
      { level: "error", logger: "steps", data: "step 4" },
    ]);

    // The level is the session's: another session of the same key still hears every level.
    const other = await connect(gateway.key, { sampling: {} });
    const heard: unknown[] = [];
    other.setNotificationHandler(LoggingMessageNotificationSchema, (notification) => void heard.push(notification.params));
    await other.callTool({ name: "live__log_steps", arguments: { steps: 2 } });
    expect(heard).toEqual([
      { level: "debug", logger: "steps", data: "step 1" },
      { level: "info", logger: "steps", data: "step 2" },
    ]);
    await Promise.all([client.close(), other.close()]);
  });

  it("refuses an upstream's sampling request at once for a client without the capability", async ({ expect }) => {
    const gateway = await interactiveGateway();
    const client = await connect(gateway.key);
    const started = Date.now();
    const result = await client.callTool({ name: "live__ask_model", arguments: { prompt: "hi" } });
    expect(Date.now() - started).toBeLessThan(3_000);
    expect(result.isError).toBe(true);
    expect(text(result)).toBe(
      "sampling failed: MCP error -32601: The client calling through the Rayrun gateway did not declare the capability for sampling/createMessage, so the request is refused",
    );
  });
});

describe("gateway sessions", () => {
  it("answers initialize with a signed session id and refuses a forged or foreign one with 404", async ({ expect }) => {
    const gateway = await interactiveGateway();
    const init = await api("/mcp", {
      key: gateway.key,
      headers: { accept: "application/json, text/event-stream" },
      body: {
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: { protocolVersion: "2025-06-18", capabilities: { sampling: {} }, clientInfo: { name: "raw", version: "1" } },
      },
    });
    expect(init.status).toBe(200);
    const sessionId = init.headers.get("mcp-session-id")!;
    expect(sessionId).toMatch(/^[\w-]+\.[\w-]+$/);
    const list = (session: string, key = gateway.key) =>
      api("/mcp", {
        key,
        headers: { accept: "application/json, text/event-stream", "mcp-session-id": session, "mcp-protocol-version": "2025-06-18" },
        body: { jsonrpc: "2.0", id: 2, method: "tools/list" },
      });
    expect((await list(sessionId)).status).toBe(200);
    const [payload, signature] = sessionId.split(".");
    const forged = `${btoa(JSON.stringify({ ...JSON.parse(atob(payload!.replaceAll("-", "+").replaceAll("_", "/"))), keyId: "other" })).replace(/=+$/, "")}.${signature}`;
    const refused = await list(forged);
    expect(refused.status).toBe(404);
    expect(refused.body).toEqual({ jsonrpc: "2.0", error: { code: -32001, message: "Session not found" }, id: null });
    // Another key of the same workspace cannot use it either.
    const otherKey = await createKey(gateway, ["tools:call"], gateway.defaultProfileId);
    expect((await list(sessionId, otherKey)).status).toBe(404);
  });
});
