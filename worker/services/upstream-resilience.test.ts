import { describe, it } from "vitest";
import { addService, connectMcp, createKey, createWorkspace, newTag, upstreamOrigin, upstreamReceived } from "../../test/helpers.ts";

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
});
