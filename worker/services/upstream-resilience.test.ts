import { SELF } from "cloudflare:test";
import { describe, it } from "vitest";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import {
  addService,
  connectMcp,
  createKey,
  createWorkspace,
  eventually,
  newTag,
  ORIGIN,
  upstreamOrigin,
  upstreamReceived,
} from "../../test/helpers.ts";

/** A workspace with one service at `url`, and an MCP client with a key of the default profile. */
async function clientFor(slug: string, url: string) {
  const workspace = await createWorkspace();
  await addService(workspace, { slug, url });
  return connectMcp(await createKey(workspace, ["tools:call"], workspace.defaultProfileId));
}

describe("upstream resilience", () => {
  it("re-establishes a session once when a restarted upstream answers 400 'No valid session ID provided'", async ({ expect }) => {
    const key = newTag();
    const control = (change: object) =>
      fetch(`${upstreamOrigin()}/fixtures/sessions/${key}/state`, { method: "POST", body: JSON.stringify(change) });
    const client = await clientFor("restarting", `${upstreamOrigin()}/fixtures/sessions/${key}/mcp`);
    const ping = () => client.callTool({ name: "restarting__ping", arguments: {} });
    expect(await ping()).toEqual({ content: [{ type: "text", text: "pong" }] });

    // The restart: every session is gone, and the stale one is answered 400, not 404.
    await control({ forget: true, staleStatus: 400 });
    expect(await ping()).toEqual({ content: [{ type: "text", text: "pong" }] });
    const received = await upstreamReceived(`sessions-${key}`);
    expect(received.calls).toHaveLength(2);
    // Indexing's own two sessions (as a client without and with sampling, elicitation and roots), the first call's,
    // and the one after the restart.
    expect(received.methods.filter((message) => message.method === "initialize")).toHaveLength(4);
  });

  it("resumes a call whose upstream closes its SSE stream to be polled, with Last-Event-ID, and opens no other GET stream", async ({
    expect,
  }) => {
    const key = newTag();
    const client = await clientFor("polling", `${upstreamOrigin()}/fixtures/polling/${key}/mcp`);
    const result = await client.callTool({ name: "polling__slow_report", arguments: {} });
    expect(result).toEqual({ content: [{ type: "text", text: "report ready" }] });

    const gets = (await upstreamReceived(`polling-${key}`)).methods.filter((message) => message.method === "GET");
    expect(gets).toHaveLength(1);
    expect(gets[0]!.headers["last-event-id"]).toMatch(/^\S+:\d+$/);
    expect(gets[0]!.headers.accept).toBe("text/event-stream");
  });

  it("ends the upstream sessions it opens with a DELETE: indexing's, and each relaying call's", async ({ expect }) => {
    const key = newTag();
    const openSessions = async () =>
      (
        (await (await fetch(`${upstreamOrigin()}/fixtures/sessions/${key}/state`, { method: "POST", body: "{}" })).json()) as {
          sessions: number;
        }
      ).sessions;
    const workspace = await createWorkspace();
    await addService(workspace, { slug: "counted", url: `${upstreamOrigin()}/fixtures/sessions/${key}/mcp` });
    // Indexing opened two sessions (without and with the relayed capabilities) and ended both.
    expect(await openSessions()).toBe(0);
    const clientKey = await createKey(workspace, ["tools:call"], workspace.defaultProfileId);

    // A client that answers elicitation gets a session of its own per call; each is ended after its call.
    const relaying = new Client({ name: "eliciting-agent", version: "1.0.0" }, { capabilities: { elicitation: {} } });
    relaying.setRequestHandler(ElicitRequestSchema, async () => ({ action: "decline" }));
    await relaying.connect(
      new StreamableHTTPClientTransport(new URL(`${ORIGIN}/mcp`), {
        fetch: (input, init) => SELF.fetch(input as string, init),
        requestInit: { headers: { authorization: `Bearer ${clientKey}` } },
      }),
    );
    for (let call = 0; call < 3; call++) await relaying.callTool({ name: "counted__ping", arguments: {} });
    expect(await eventually(openSessions, (open) => open === 0)).toBe(0);

    // Plain clients share one session per service in an isolate, reused by every call.
    const plain = await connectMcp(clientKey);
    for (let call = 0; call < 3; call++) await plain.callTool({ name: "counted__ping", arguments: {} });
    expect(await openSessions()).toBe(1);
    expect((await upstreamReceived(`sessions-${key}`)).calls).toHaveLength(6);
  });
});
