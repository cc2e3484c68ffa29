import { SELF } from "cloudflare:test";
import { describe, it } from "vitest";
import {
  Client as ModernClient,
  StreamableHTTPClientTransport as ModernTransport,
  type ClientCapabilities as ModernCapabilities,
} from "@modelcontextprotocol/client";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { CreateMessageRequestSchema, ElicitRequestSchema, type ClientCapabilities } from "@modelcontextprotocol/sdk/types.js";
import { CfWorkerJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/cfworker-provider.js";
import { addService, api, createKey, createWorkspace, newTag, ORIGIN, upstreamOrigin, upstreamReceived } from "../../test/helpers.ts";

/**
 * The gateway as a client of a 2026-07-28 upstream: the v2 SDK's `McpServer` behind its HTTP entry with no
 * 2025-era leg (demo/upstream/modern.ts), which refuses `initialize`. Whatever revision the gateway's client
 * speaks, the upstream sees only 2026-07-28.
 */
async function modernGateway() {
  const ws = await createWorkspace();
  const tag = newTag();
  const added = await addService(ws, { slug: "next", url: `${upstreamOrigin()}/fixtures/modern/${tag}/mcp` });
  const key = await createKey(ws, ["tools:call"], ws.defaultProfileId);
  const received = () => upstreamReceived(`modern-${tag}`);
  return { ...ws, key, added, received };
}

async function connectLegacy(key: string, capabilities: ClientCapabilities = {}): Promise<Client> {
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
  return client;
}

async function connectModern(key: string, capabilities: ModernCapabilities = {}): Promise<ModernClient> {
  const client = new ModernClient(
    { name: "modern-agent", version: "1.0.0" },
    { capabilities, versionNegotiation: { mode: { pin: "2026-07-28" } } },
  );
  await client.connect(
    new ModernTransport(new URL(`${ORIGIN}/mcp`), {
      fetch: (input, init) => SELF.fetch(input as string, init),
      requestInit: { headers: { authorization: `Bearer ${key}` } },
    }),
  );
  return client;
}

const text = (result: Record<string, unknown>) => (result.content as { text: string }[])[0]!.text;

describe("a 2026-07-28 upstream", () => {
  it("is found at indexing, stored with its revision, and listed and called in 2026-07-28 from either client", async ({ expect }) => {
    const gateway = await modernGateway();
    expect(gateway.added.index.added.sort()).toEqual(["ask_model", "ask_user", "echo"]);
    const legacy = await connectLegacy(gateway.key);
    expect((await legacy.listTools()).tools.map((tool) => tool.name).sort()).toEqual(["next__ask_model", "next__ask_user", "next__echo"]);
    expect(text(await legacy.callTool({ name: "next__echo", arguments: { text: "from 2025-11-25" } }))).toBe("echo: from 2025-11-25");
    const modern = await connectModern(gateway.key);
    expect(text(await modern.callTool({ name: "next__echo", arguments: { text: "from 2026-07-28" } }))).toBe("echo: from 2026-07-28");
    const received = await gateway.received();
    expect(received.calls.map((call) => call.arguments)).toEqual([{ text: "from 2025-11-25" }, { text: "from 2026-07-28" }]);
    // No handshake and no session upstream: every request named the revision, none was an initialize.
    expect(received.methods.map((message) => message.method)).not.toContain("initialize");
    for (const message of received.methods) expect(message.headers["mcp-protocol-version"]).toBe("2026-07-28");
    expect(received.methods.some((message) => message.headers["mcp-session-id"])).toBe(false);
    await legacy.close();
  });

  it("asks a 2025-era client with a stream for the input the upstream requires, and retries the upstream with its answer", async ({
    expect,
  }) => {
    const gateway = await modernGateway();
    const client = await connectLegacy(gateway.key, { elicitation: {}, sampling: {} });
    const asked: string[] = [];
    client.setRequestHandler(ElicitRequestSchema, async (request) => {
      asked.push(request.params.message);
      return { action: "accept", content: { name: "Ada" } };
    });
    client.setRequestHandler(CreateMessageRequestSchema, async () => ({
      role: "assistant",
      content: { type: "text", text: "forty-two" },
      model: "test-model",
    }));
    const answered = await client.callTool({ name: "next__ask_user", arguments: { question: "Who is asking?" } }, undefined, {
      onprogress: () => {},
    });
    expect(asked).toEqual(["Who is asking?"]);
    expect(text(answered)).toBe('accept: {"name":"Ada"}');
    const sampled = await client.callTool({ name: "next__ask_model", arguments: { prompt: "The answer?" } }, undefined, {
      onprogress: () => {},
    });
    expect(text(sampled)).toBe("model said: forty-two");
    // Each call reached the upstream twice: the first round, then the retry carrying the answer.
    const rounds = (await gateway.received()).calls.map((call) => [call.tool, (call as { round?: number }).round]);
    expect(rounds).toEqual([
      ["ask_user", 1],
      ["ask_user", 2],
      ["ask_model", 1],
      ["ask_model", 2],
    ]);
    await client.close();
  });

  it("bridges the upstream's input request to a 2026-07-28 client as its own input-required round", async ({ expect }) => {
    const gateway = await modernGateway();
    const client = await connectModern(gateway.key, { elicitation: { form: {} } });
    client.setRequestHandler("elicitation/create", async () => ({ action: "accept", content: { name: "Grace" } }));
    const result = await client.callTool({ name: "next__ask_user", arguments: { question: "Name?" } });
    expect(text(result)).toBe('accept: {"name":"Grace"}');
  });

  it("gives a client that did not declare the capability the upstream's own refusal, at once", async ({ expect }) => {
    const gateway = await modernGateway();
    const client = await connectLegacy(gateway.key);
    const started = Date.now();
    // The spec's answer for an input request the request's capabilities do not allow: -32021, from the upstream.
    await expect(client.callTool({ name: "next__ask_user", arguments: { question: "Name?" } })).rejects.toMatchObject({
      code: -32021,
      data: expect.objectContaining({ upstream: true }),
    });
    expect(Date.now() - started).toBeLessThan(5_000);
    await client.close();
  });

  it("refuses at indexing an upstream whose server/discover result is over the bound, and stores nothing", async ({ expect }) => {
    const ws = await createWorkspace();
    const res = await api(`/v1/workspaces/${ws.ws}/services`, {
      key: ws.adminKey,
      body: { slug: "huge", url: `${upstreamOrigin()}/fixtures/huge-discover/mcp` },
    });
    expect(res.status).toBe(502);
    expect(res.body.error).toMatchObject({ code: "upstream_protocol_error", message: expect.stringContaining("server/discover result") });
    expect((await api(`/v1/workspaces/${ws.ws}/services`, { key: ws.adminKey })).body.services).toEqual([]);
  });

  it("keeps the stored revision per service: a 2025-era service beside it is still spoken to in 2025-era", async ({ expect }) => {
    const gateway = await modernGateway();
    const tag = newTag();
    await addService(gateway, { slug: "demo", url: `${upstreamOrigin()}/t/${tag}/mcp` });
    const services = (await api(`/v1/workspaces/${gateway.ws}/services`, { key: gateway.adminKey })).body.services as {
      slug: string;
      protocol: string;
    }[];
    expect(Object.fromEntries(services.map((service) => [service.slug, service.protocol]))).toEqual({
      next: "2026-07-28",
      demo: "2025-era",
    });
    const client = await connectModern(gateway.key);
    const result = await client.callTool({ name: "demo__search_release_notes", arguments: { query: "sso" } });
    expect(JSON.stringify(result)).toContain("SSO");
    expect((await upstreamReceived(tag)).methods.map((message) => message.method)).toContain("initialize");
  });
});
