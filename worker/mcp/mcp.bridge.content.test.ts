import { env, SELF } from "cloudflare:test";
import { describe, it } from "vitest";
import {
  Client as ModernClient,
  StreamableHTTPClientTransport as ModernTransport,
  type ClientCapabilities,
} from "@modelcontextprotocol/client";
import { createRequestStateCodec } from "@modelcontextprotocol/server";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  type ClientCapabilities as LegacyCapabilities,
} from "@modelcontextprotocol/sdk/types.js";
import { CfWorkerJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/cfworker-provider.js";
import {
  addService,
  createKey,
  createWorkspace,
  eventually,
  newTag,
  ORIGIN,
  upstreamOrigin,
  upstreamReceived,
} from "../../test/helpers.ts";

/**
 * Input requests bridged for `prompts/get` and `resources/read`, both ways, against real peers: the v2 client pinned
 * to 2026-07-28 in front of a 2025-era v1 `McpServer` upstream (demo/upstream/interactive.ts), and the v1 client at
 * 2025-11-25 in front of a 2026-07-28 v2 `McpServer` upstream (demo/upstream/modern.ts). Each upstream has a prompt
 * `ask` and a resource template `…://ask/{kind}` that ask the client (kind `elicit`) or its model (kind `sample`).
 */

const REVISION = "2026-07-28";

async function gatewayFor(fixture: "interactive" | "modern") {
  const ws = await createWorkspace();
  const tag = newTag();
  await addService(ws, { slug: "live", url: `${upstreamOrigin()}/fixtures/${fixture}/${tag}/mcp` });
  const key = await createKey(ws, ["tools:call"], ws.defaultProfileId);
  return { ...ws, key, received: () => upstreamReceived(`${fixture}-${tag}`) };
}

async function connectModern(key: string, capabilities: ClientCapabilities): Promise<ModernClient> {
  const client = new ModernClient(
    { name: "modern-agent", version: "1.0.0" },
    { capabilities, versionNegotiation: { mode: { pin: REVISION } } },
  );
  await client.connect(
    new ModernTransport(new URL(`${ORIGIN}/mcp`), {
      fetch: (input, init) => SELF.fetch(input as string, init),
      requestInit: { headers: { authorization: `Bearer ${key}` } },
    }),
  );
  if (capabilities.elicitation)
    client.setRequestHandler("elicitation/create", async () => ({ action: "accept", content: { name: "Ada" } }));
  if (capabilities.sampling) {
    client.setRequestHandler("sampling/createMessage", async () => ({
      role: "assistant",
      content: { type: "text", text: "forty-two" },
      model: "test-model",
    }));
  }
  return client;
}

async function connectLegacy(key: string, capabilities: LegacyCapabilities): Promise<Client> {
  const client = new Client(
    { name: "legacy-agent", version: "1.0.0" },
    { capabilities, jsonSchemaValidator: new CfWorkerJsonSchemaValidator() },
  );
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${ORIGIN}/mcp`), {
      fetch: (input, init) => SELF.fetch(input as string, init),
      requestInit: { headers: { authorization: `Bearer ${key}` } },
    }),
  );
  if (capabilities.elicitation)
    client.setRequestHandler(ElicitRequestSchema, async () => ({ action: "accept", content: { name: "Grace" } }));
  if (capabilities.sampling) {
    client.setRequestHandler(CreateMessageRequestSchema, async () => ({
      role: "assistant",
      content: { type: "text", text: "seven" },
      model: "test-model",
    }));
  }
  return client;
}

/** One raw 2026-07-28 request with the headers the revision requires; the JSON-RPC answer. */
async function raw(key: string, method: string, params: Record<string, unknown>, capabilities: ClientCapabilities) {
  const name = method === "resources/read" ? params.uri : params.name;
  const res = await SELF.fetch(`${ORIGIN}/mcp`, {
    method: "POST",
    headers: {
      authorization: `Bearer ${key}`,
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": REVISION,
      "mcp-method": method,
      "mcp-name": String(name),
    },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method,
      params: {
        ...params,
        _meta: { "io.modelcontextprotocol/protocolVersion": REVISION, "io.modelcontextprotocol/clientCapabilities": capabilities },
      },
    }),
  });
  return (await res.json()) as { result?: Record<string, any>; error?: { code: number; message: string; data?: any } };
}

const promptText = (result: { messages: { content: unknown }[] }) => (result.messages[0]!.content as { text: string }).text;
const resourceText = (result: { contents: unknown[] }) => (result.contents[0] as { text: string }).text;

describe("a 2026-07-28 client, a 2025-era upstream that asks for input during a prompt or a resource read", () => {
  it("gets each elicitation and sampling request as an input-required round, and its answer reaches the waiting upstream", async ({
    expect,
  }) => {
    const gateway = await gatewayFor("interactive");
    const client = await connectModern(gateway.key, { elicitation: { form: {} }, sampling: {} });
    const elicited = await client.getPrompt({ name: "live__ask", arguments: { kind: "elicit", topic: "tides" } });
    expect(promptText(elicited)).toBe("accept: Ada on tides");
    const sampled = await client.getPrompt({ name: "live__ask", arguments: { kind: "sample", topic: "tides" } });
    expect(promptText(sampled)).toBe("model said: forty-two");
    const read = await client.readResource({ uri: "rayrun://live/interactive://ask/elicit" });
    expect(read.contents[0]!.uri).toBe("rayrun://live/interactive://ask/elicit");
    expect(resourceText(read)).toBe("accept: Ada on interactive://ask/elicit");
    expect(resourceText(await client.readResource({ uri: "rayrun://live/interactive://ask/sample" }))).toBe("model said: forty-two");
    // Each reached the upstream once: every retry answered the pending request, none asked again.
    expect((await gateway.received()).calls.map((call) => call.tool)).toEqual(["prompt:ask", "prompt:ask", "resource:ask", "resource:ask"]);
  });

  it("binds the signed state to the method, the prompt and its arguments or the URI, the credential and the workspace", async ({
    expect,
  }) => {
    const gateway = await gatewayFor("interactive");
    const capabilities = { elicitation: { form: {} } };
    const prompt = { name: "live__ask", arguments: { kind: "elicit", topic: "tides" } };
    const first = await raw(gateway.key, "prompts/get", prompt, capabilities);
    expect(first.result).toMatchObject({
      resultType: "input_required",
      inputRequests: { r1: { method: "elicitation/create", params: { mode: "form", message: "Who asks about tides?" } } },
      requestState: expect.stringMatching(/^v1\./),
    });
    const retry = { requestState: first.result!.requestState, inputResponses: { r1: { action: "accept", content: { name: "Eve" } } } };
    const resource = { uri: "rayrun://live/interactive://ask/elicit" };
    const otherKey = await createKey(gateway, ["tools:call"], gateway.defaultProfileId);
    const otherWorkspace = await gatewayFor("interactive");
    const mismatched = [
      await raw(gateway.key, "prompts/get", { ...prompt, arguments: { kind: "elicit", topic: "reefs" }, ...retry }, capabilities),
      await raw(gateway.key, "prompts/get", { ...prompt, arguments: { kind: "elicit" }, ...retry }, capabilities),
      await raw(gateway.key, "prompts/get", { ...prompt, name: "live__other", ...retry }, capabilities),
      await raw(gateway.key, "resources/read", { ...resource, ...retry }, capabilities),
      await raw(gateway.key, "tools/call", { name: "live__ask_user", arguments: { question: "Name?" }, ...retry }, capabilities),
      await raw(otherKey, "prompts/get", { ...prompt, ...retry }, capabilities),
      await raw(otherWorkspace.key, "prompts/get", { ...prompt, ...retry }, capabilities),
    ];
    for (const answer of mismatched) {
      expect(answer.error).toMatchObject({
        code: -32602,
        message: "Invalid params: requestState belongs to another call; repeat the call it was issued for",
        data: { code: "request_state_mismatch" },
      });
    }
    // A resource read's state, minted for one URI, is refused for another and for a prompt.
    const read = await raw(gateway.key, "resources/read", resource, capabilities);
    const readRetry = { requestState: read.result!.requestState, inputResponses: { r1: { action: "accept", content: { name: "Bo" } } } };
    for (const answer of [
      await raw(gateway.key, "resources/read", { uri: "rayrun://live/interactive://ask/elicit2", ...readRetry }, capabilities),
      await raw(gateway.key, "prompts/get", { ...prompt, ...readRetry }, capabilities),
    ]) {
      expect(answer.error).toMatchObject({ code: -32602, data: { code: "request_state_mismatch" } });
    }
    // The rightful retries still complete their requests, once each upstream.
    const done = await raw(gateway.key, "prompts/get", { ...prompt, ...retry }, capabilities);
    expect(done.result).toMatchObject({ resultType: "complete", messages: [{ content: { text: "accept: Eve on tides" } }] });
    const readDone = await raw(gateway.key, "resources/read", { ...resource, ...readRetry }, capabilities);
    expect(readDone.result).toMatchObject({ resultType: "complete", contents: [{ text: "accept: Bo on interactive://ask/elicit" }] });
  });

  it("asks a retry without the pending answer again, and the answered retry completes the request", async ({ expect }) => {
    const gateway = await gatewayFor("interactive");
    const capabilities = { elicitation: { form: {} } };
    const prompt = { name: "live__ask", arguments: { kind: "elicit", topic: "tides" } };
    const first = await raw(gateway.key, "prompts/get", prompt, capabilities);
    expect(first.result).toMatchObject({ resultType: "input_required", inputRequests: { r1: { method: "elicitation/create" } } });
    let state = first.result!.requestState as string;
    for (const inputResponses of [{ r2: { action: "decline" } }, undefined, { r1: "not an answer" }]) {
      const again = await raw(
        gateway.key,
        "prompts/get",
        { ...prompt, requestState: state, ...(inputResponses && { inputResponses }) },
        capabilities,
      );
      expect(again.result).toEqual({ ...first.result, requestState: expect.any(String) });
      state = again.result!.requestState as string;
    }
    const done = await raw(
      gateway.key,
      "prompts/get",
      { ...prompt, requestState: state, inputResponses: { r1: { action: "accept", content: { name: "Ida" } } } },
      capabilities,
    );
    expect(done.result).toMatchObject({ resultType: "complete", messages: [{ content: { text: "accept: Ida on tides" } }] });
  });

  it("refuses a state the gateway did not sign, or signed but past its expiry", async ({ expect }) => {
    const gateway = await gatewayFor("interactive");
    const capabilities = { elicitation: { form: {} } };
    const prompt = { name: "live__ask", arguments: { kind: "elicit", topic: "tides" } };
    const first = await raw(gateway.key, "prompts/get", prompt, capabilities);
    const state = first.result!.requestState as string;
    // Signed with the gateway's own key, bound to this very request, but expired ten seconds ago.
    const key = new Uint8Array(
      await crypto.subtle.digest("SHA-256", new TextEncoder().encode(`rayrun-mcp-request-state:${env.SECRETS_KEY}`)),
    );
    const lapsed = createRequestStateCodec<Record<string, unknown>>({ key, ttlSeconds: -10 });
    const payload = JSON.parse(atob(state.slice(3, state.lastIndexOf(".")).replace(/-/g, "+").replace(/_/g, "/"))).p;
    const expired = await lapsed.mint(payload);
    const forged = await createRequestStateCodec<Record<string, unknown>>({ key: new Uint8Array(32).fill(7) }).mint(payload);
    for (const requestState of [expired, forged, "v1.not-a-state"]) {
      const answer = await raw(
        gateway.key,
        "prompts/get",
        { ...prompt, requestState, inputResponses: { r1: { action: "decline" } } },
        capabilities,
      );
      expect(answer.error).toMatchObject({ code: -32602, message: "Invalid or expired requestState" });
    }
    // The same for a resource read's state.
    const resource = { uri: "rayrun://live/interactive://ask/elicit" };
    const read = (await raw(gateway.key, "resources/read", resource, capabilities)).result!.requestState as string;
    const readExpired = await lapsed.mint(JSON.parse(atob(read.slice(3, read.lastIndexOf(".")).replace(/-/g, "+").replace(/_/g, "/"))).p);
    const lapsedRead = await raw(
      gateway.key,
      "resources/read",
      { ...resource, requestState: readExpired, inputResponses: { r1: { action: "decline" } } },
      capabilities,
    );
    expect(lapsedRead.error).toMatchObject({ code: -32602, message: "Invalid or expired requestState" });
  });

  it("refuses the upstream's request at once for a client that declared no capability to answer it", async ({ expect }) => {
    const gateway = await gatewayFor("interactive");
    const client = await connectModern(gateway.key, {});
    const started = Date.now();
    const prompt = await client.getPrompt({ name: "live__ask", arguments: { kind: "elicit", topic: "tides" } });
    expect(promptText(prompt)).toMatch(/^refused: .*did not declare the capability for elicitation\/create/);
    const read = await client.readResource({ uri: "rayrun://live/interactive://ask/sample" });
    expect(resourceText(read)).toMatch(/^refused: .*did not declare the capability for sampling\/createMessage/);
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it("records one content row per request, whatever the rounds", async ({ expect }) => {
    const gateway = await gatewayFor("interactive");
    const client = await connectModern(gateway.key, { elicitation: { form: {} } });
    await client.getPrompt({ name: "live__ask", arguments: { kind: "elicit", topic: "tides" } });
    const rows = await eventually(
      () =>
        env.DB.prepare("SELECT kind, item, outcome FROM calls WHERE workspace_id = ? AND kind = 'prompts/get'")
          .bind(gateway.ws)
          .all<{ kind: string; item: string; outcome: string }>()
          .then((found) => found.results),
      (found) => found.length > 0,
    );
    expect(rows).toEqual([{ kind: "prompts/get", item: "ask", outcome: "ok" }]);
  });
});

describe("a 2025-era client with a stream, a 2026-07-28 upstream that answers a prompt or a resource read input-required", () => {
  it("gets the upstream's elicitation and sampling requests on the request's stream, and the upstream is retried with the answers", async ({
    expect,
  }) => {
    const gateway = await gatewayFor("modern");
    const client = await connectLegacy(gateway.key, { elicitation: {}, sampling: {} });
    expect(promptText(await client.getPrompt({ name: "live__ask", arguments: { kind: "elicit", topic: "kelp" } }))).toBe(
      "accept: Grace on kelp",
    );
    expect(promptText(await client.getPrompt({ name: "live__ask", arguments: { kind: "sample", topic: "kelp" } }))).toBe(
      "model said: seven",
    );
    expect(resourceText(await client.readResource({ uri: "rayrun://live/modern://ask/elicit" }))).toBe(
      "accept: Grace on modern://ask/elicit",
    );
    expect(resourceText(await client.readResource({ uri: "rayrun://live/modern://ask/sample" }))).toBe("model said: seven");
    // Each request reached the upstream twice: the first round, then the retry carrying the answer.
    const rounds = (await gateway.received()).calls.map((call) => [call.tool, (call as { round?: number }).round]);
    expect(rounds).toEqual([
      ["prompt:ask", 1],
      ["prompt:ask", 2],
      ["prompt:ask", 1],
      ["prompt:ask", 2],
      ["resource:ask", 1],
      ["resource:ask", 2],
      ["resource:ask", 1],
      ["resource:ask", 2],
    ]);
    await client.close();
  });

  it("gives a client that did not declare the capability the upstream's own refusal, -32021, at once", async ({ expect }) => {
    const gateway = await gatewayFor("modern");
    const client = await connectLegacy(gateway.key, {});
    const started = Date.now();
    await expect(client.getPrompt({ name: "live__ask", arguments: { kind: "elicit", topic: "kelp" } })).rejects.toMatchObject({
      code: -32021,
      data: expect.objectContaining({ upstream: true }),
    });
    await expect(client.readResource({ uri: "rayrun://live/modern://ask/sample" })).rejects.toMatchObject({
      code: -32021,
      data: expect.objectContaining({ upstream: true }),
    });
    // A 2026-07-28 client without the capability gets the same.
    const modern = await raw(gateway.key, "prompts/get", { name: "live__ask", arguments: { kind: "sample", topic: "kelp" } }, {});
    expect(modern.error).toMatchObject({ code: -32021, data: { upstream: true } });
    expect(Date.now() - started).toBeLessThan(5_000);
    await client.close();
  });

  it("chains the upstream's round into a 2026-07-28 client's own round", async ({ expect }) => {
    const gateway = await gatewayFor("modern");
    const client = await connectModern(gateway.key, { elicitation: { form: {} } });
    expect(promptText(await client.getPrompt({ name: "live__ask", arguments: { kind: "elicit", topic: "kelp" } }))).toBe(
      "accept: Ada on kelp",
    );
    expect(resourceText(await client.readResource({ uri: "rayrun://live/modern://ask/elicit" }))).toBe(
      "accept: Ada on modern://ask/elicit",
    );
  });
});

describe("a 2025-era client with a stream, a 2025-era upstream", () => {
  it("relays the upstream's request during a prompt or a resource read on the request's own stream", async ({ expect }) => {
    const gateway = await gatewayFor("interactive");
    const client = await connectLegacy(gateway.key, { elicitation: {}, sampling: {} });
    expect(promptText(await client.getPrompt({ name: "live__ask", arguments: { kind: "elicit", topic: "dunes" } }))).toBe(
      "accept: Grace on dunes",
    );
    expect(resourceText(await client.readResource({ uri: "rayrun://live/interactive://ask/sample" }))).toBe("model said: seven");
    await client.close();
  });
});
