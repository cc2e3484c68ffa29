import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { describe, it } from "vitest";
import { demoUpstreamUrl, newTag } from "../../test/helpers.ts";
import { MAX_UPSTREAM_SESSIONS, upstreamSessions } from "./upstream.ts";
import { SessionPool } from "./upstream.sessions.ts";

/** A real MCP session with the demo upstream, counted so a test can tell which connection it got. */
function connector(tag: string) {
  const made: Client[] = [];
  const connect = async () => {
    const client = new Client({ name: "rayrun-gateway", version: "0.1.0" });
    await client.connect(new StreamableHTTPClientTransport(new URL(demoUpstreamUrl(tag))));
    made.push(client);
    return client;
  };
  return { made, connect };
}

/** The SDK client drops its transport when closed; a closed client cannot send. */
const isOpen = (client: Client) => client.transport !== undefined;
const answers = async (client: Client) => (await client.listTools()).tools.some((tool) => tool.name === "search_release_notes");

describe("upstream session pool", () => {
  it("the gateway's pool is the bounded one docs/limits.md names", ({ expect }) => {
    expect(upstreamSessions.maxSessions).toBe(MAX_UPSTREAM_SESSIONS);
    expect(MAX_UPSTREAM_SESSIONS).toBe(128);
  });

  it("reuses a session per key, holds at most maxSessions, and closes the least recently used", async ({ expect }) => {
    const pool = new SessionPool<Client>(2);
    const { made, connect } = connector(newTag());
    const first = await pool.acquire("service-a", undefined, connect);
    first.release();
    const again = await pool.acquire("service-a", undefined, connect);
    expect(again.session).toBe(first.session);
    again.release();
    (await pool.acquire("service-b", undefined, connect)).release();
    // Using a again leaves b the least recently used.
    (await pool.acquire("service-a", undefined, connect)).release();
    const c = await pool.acquire("service-c", undefined, connect);
    c.release();

    expect(made).toHaveLength(3);
    expect(pool.size).toBe(2);
    const [a, b] = made as [Client, Client, Client];
    expect(isOpen(b)).toBe(false);
    expect(isOpen(a)).toBe(true);
    expect(await answers(a)).toBe(true);
    expect(await answers(c.session)).toBe(true);
    // The evicted key connects anew.
    const bAgain = await pool.acquire("service-b", undefined, connect);
    expect(bAgain.session).not.toBe(b);
    expect(await answers(bAgain.session)).toBe(true);
    bAgain.release();
    expect(made).toHaveLength(4);
    expect(pool.size).toBe(2);
  });

  it("never closes a session under a call: an evicted one in use closes when its call is done", async ({ expect }) => {
    const pool = new SessionPool<Client>(1);
    const { connect } = connector(newTag());
    const busy = await pool.acquire("service-a", undefined, connect);
    const other = await pool.acquire("service-b", undefined, connect);
    expect(pool.size).toBe(1);
    expect(isOpen(busy.session)).toBe(true);
    expect(await answers(busy.session)).toBe(true);
    busy.release();
    expect(isOpen(busy.session)).toBe(false);
    // Releasing twice changes nothing.
    busy.release();
    expect(isOpen(other.session)).toBe(true);
    other.release();
    expect(isOpen(other.session)).toBe(true);
  });

  it("replaces a session of an older credential, and closes it once its call is done", async ({ expect }) => {
    const pool = new SessionPool<Client>(4);
    const { made, connect } = connector(newTag());
    const old = await pool.acquire("service-a:alice", "token-v1", connect);
    const renewed = await pool.acquire("service-a:alice", "token-v2", connect);
    expect(renewed.session).not.toBe(old.session);
    expect(isOpen(old.session)).toBe(true);
    old.release();
    expect(isOpen(old.session)).toBe(false);
    renewed.release();
    expect((await pool.acquire("service-a:alice", "token-v2", connect)).session).toBe(renewed.session);
    expect(made).toHaveLength(2);
    expect(pool.size).toBe(1);
  });

  it("two calls connecting at once for one key each keep their own; the one left out is closed after its call", async ({ expect }) => {
    const pool = new SessionPool<Client>(4);
    const { connect } = connector(newTag());
    const [one, two] = await Promise.all([pool.acquire("service-a", undefined, connect), pool.acquire("service-a", undefined, connect)]);
    expect(one.session).not.toBe(two.session);
    expect(pool.size).toBe(1);
    one.release();
    two.release();
    const open = [one.session, two.session].filter(isOpen);
    expect(open).toHaveLength(1);
    expect((await pool.acquire("service-a", undefined, connect)).session).toBe(open[0]);
  });

  it("a dropped session is closed and not handed out again", async ({ expect }) => {
    const pool = new SessionPool<Client>(4);
    const { made, connect } = connector(newTag());
    const failed = await pool.acquire("service-a", undefined, connect);
    failed.drop();
    expect(isOpen(failed.session)).toBe(false);
    expect(pool.size).toBe(0);
    const fresh = await pool.acquire("service-a", undefined, connect);
    expect(fresh.session).not.toBe(failed.session);
    expect(await answers(fresh.session)).toBe(true);
    expect(made).toHaveLength(2);
  });
});
