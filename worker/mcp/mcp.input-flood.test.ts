import { SELF } from "cloudflare:test";
import { describe, it } from "vitest";
import { Client as ModernClient, StreamableHTTPClientTransport as ModernTransport } from "@modelcontextprotocol/client";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ListRootsRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { addService, createKey, createWorkspace, gatewayError, newTag, ORIGIN, upstreamOrigin } from "../../test/helpers.ts";
import { MAX_PENDING_INPUT_REQUESTS } from "../services/upstream.call.ts";

/**
 * Round-5 finding 1: an upstream's input flood. One input-required result may name as many input requests as its
 * bytes hold; the gateway used to relay every one at once (for a 2026-07-28 client, each a CallRelayDO listener held
 * 25 s), and 20,000 of them held a gateway isolate, every tenant's calls with it, for minutes. A call now has at most
 * MAX_PENDING_INPUT_REQUESTS waiting on its client; one more ends it `upstream_protocol_error`.
 */
async function floodGateway() {
  const ws = await createWorkspace();
  await addService(ws, { slug: "flood", url: `${upstreamOrigin()}/fixtures/input-flood/${newTag()}/mcp` });
  return { ...ws, key: await createKey(ws, ["tools:call"], ws.defaultProfileId) };
}

const transportFor = (key: string) => ({
  fetch: (input: string | URL | Request, init?: RequestInit) => SELF.fetch(input as string, init),
  requestInit: { headers: { authorization: `Bearer ${key}` } },
});

async function legacyClient(key: string, onRoots: () => void): Promise<Client> {
  const client = new Client({ name: "legacy-agent", version: "1.0.0" }, { capabilities: { roots: {} } });
  client.setRequestHandler(ListRootsRequestSchema, async () => {
    onRoots();
    return { roots: [] };
  });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${ORIGIN}/mcp`), transportFor(key)));
  return client;
}

async function modernClient(key: string, onRoots: () => void): Promise<ModernClient> {
  const client = new ModernClient(
    { name: "modern-agent", version: "1.0.0" },
    { capabilities: { roots: {} }, versionNegotiation: { mode: { pin: "2026-07-28" } } },
  );
  client.setRequestHandler("roots/list", async () => {
    onRoots();
    return { roots: [] };
  });
  await client.connect(new ModernTransport(new URL(`${ORIGIN}/mcp`), transportFor(key)));
  return client;
}

const text = (result: Record<string, unknown>) => (result.content as { text: string }[])[0]!.text;

describe("round-5 finding 1: an upstream's input flood", () => {
  it("ends a 2025-era client's call upstream_protocol_error past the bound, and relays no more than the bound", async ({ expect }) => {
    const gateway = await floodGateway();
    let asked = 0;
    const client = await legacyClient(gateway.key, () => asked++);
    const flooded = await client.callTool({ name: "flood__flood", arguments: { count: 5_000 } });
    expect(gatewayError(flooded)).toMatchObject({ code: "upstream_protocol_error", message: expect.stringContaining("at once") });
    expect(asked).toBeLessThanOrEqual(MAX_PENDING_INPUT_REQUESTS);
    // Within the bound, every request is relayed and answered, and the upstream gets every answer.
    const within = await client.callTool({ name: "flood__flood", arguments: { count: MAX_PENDING_INPUT_REQUESTS } });
    expect(text(within)).toBe(`answered ${MAX_PENDING_INPUT_REQUESTS}`);
    await client.close();
  });

  it("ends a 2026-07-28 client's bridged call upstream_protocol_error past the bound", async ({ expect }) => {
    const gateway = await floodGateway();
    let asked = 0;
    const client = await modernClient(gateway.key, () => asked++);
    const flooded = await client.callTool({ name: "flood__flood", arguments: { count: 5_000 } });
    expect(gatewayError(flooded)).toMatchObject({ code: "upstream_protocol_error", message: expect.stringContaining("at once") });
    expect(asked).toBeLessThanOrEqual(MAX_PENDING_INPUT_REQUESTS);
  });
});

/**
 * Round-5 finding 5: several inputs in one round. An input-required result may name several input requests at once;
 * a 2026-07-28 client in front of the gateway got the first, and the rest waited for answers that could never come
 * (25 s, then the call failed), so no upstream asking for two inputs at once could be used from such a client.
 */
describe("round-5 finding 5: several inputs an upstream asks for in one round", () => {
  it("reach a 2026-07-28 client one bridged round each, and the upstream gets every answer", async ({ expect }) => {
    const gateway = await floodGateway();
    let asked = 0;
    const client = await modernClient(gateway.key, () => asked++);
    const result = await client.callTool({ name: "flood__flood", arguments: { count: 3 } });
    expect(text(result)).toBe("answered 3");
    expect(asked).toBe(3);
  });
});
