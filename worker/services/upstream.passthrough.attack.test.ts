/**
 * An upstream's attacks on result pass-through (upstream.passthrough.ts, mcp.passthrough.ts): answers framed so
 * that the bytes spliced into the client's answer say more than the result the gateway parsed. Tests that pass
 * document a defence; tests that fail on main are findings, each with its proposed fix.
 */
import { SELF } from "cloudflare:test";
import { describe, it } from "vitest";
import { connectMcp, hostileGateway, ORIGIN } from "../../test/helpers.ts";

/** One tools/call POSTed to /mcp as raw bytes: what a client's parser would be handed. */
async function callBytes(key: string, name: string, accept = "application/json, text/event-stream") {
  const response = await SELF.fetch(`${ORIGIN}/mcp`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json", accept, "mcp-protocol-version": "2025-06-18" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 3, method: "tools/call", params: { name, arguments: {} } }),
  });
  return { type: response.headers.get("content-type"), bytes: new Uint8Array(await response.arrayBuffer()) };
}

const text = (bytes: Uint8Array) => new TextDecoder().decode(bytes);

describe("attack: pass-through framing", () => {
  /**
   * FOUND AND FIXED (low): `qualifies` decoded the upstream's bytes with a lenient TextDecoder (invalid UTF-8 becomes
   * U+FFFD), parses that, and then forwards the original, invalid bytes. The parsed path would have sent valid
   * UTF-8; a strict client (Python's json over bytes, Rust's serde_json::from_slice) rejects the whole answer,
   * and a decoder that swallows continuation bytes differently would read other JSON than the gateway checked.
   * Proposed fix: decode with `new TextDecoder("utf-8", { fatal: true, ignoreBOM: false })` in `qualifies` (a throw means: parsed path).
   */
  it("the answer is valid UTF-8 even when the upstream's result bytes are not", async ({ expect }) => {
    const gateway = await hostileGateway();
    const { bytes } = await callBytes(gateway.key, "evil__invalid_utf8", "application/json, text/event-stream");
    expect(() => new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(bytes)).not.toThrow();
    expect(JSON.parse(text(bytes)).result.content).toEqual([{ type: "text", text: "a\uFFFDb" }]);
  });

  /**
   * FOUND AND FIXED (low): JSON.parse keeps the last of duplicate members, so a result with a forged
   * `"_meta":{"dev.rayrun/error":…}` followed by `"_meta":{}` qualifies, and its bytes (forged error and all) reach
   * the client. A first-wins or duplicate-rejecting parser downstream sees the gateway's error slot filled by the
   * upstream, which the parsed path always drops.
   * Fixed: `qualifies` counts the members the bytes declare against the parsed value's; a repeated name takes the
   * parsed path, which drops the gateway's metadata.
   */
  it("an upstream cannot get a forged `dev.rayrun/error` into the answer through a duplicate `_meta`", async ({ expect }) => {
    const gateway = await hostileGateway();
    const { bytes } = await callBytes(gateway.key, "evil__duplicate_meta");
    const answer = text(bytes);
    expect(JSON.parse(answer).result.content).toEqual([{ type: "text", text: "ok" }]);
    expect(answer).not.toContain("attacker.example");
  });

  /**
   * FOUND AND FIXED (low): the SSE splitter diverted the first event that holds a result for the call's id, whatever the
   * event's name. An MCP client (the SDK the gateway itself uses) ignores a named event, so the gateway forwards a
   * result its own client never accepted, in place of the one it did (here an `isError` the log then misses).
   * Fixed: `eventOut` diverts only events with no `event:` name or `message`, as the SDK reads them.
   */
  it("a result in a named SSE event the MCP client ignores is not what the client receives", async ({ expect }) => {
    const gateway = await hostileGateway();
    const client = await connectMcp(gateway.key);
    const result = await client.callTool({ name: "evil__named_event_sse", arguments: {} });
    expect(JSON.stringify(result)).not.toContain("SMUGGLED");
    expect(result.isError).toBe(true);
  });

  it("defeated: `isError` spelled with an escape, two data lines, and CRLF events all take the parsed path", async ({ expect }) => {
    const gateway = await hostileGateway();
    const escaped = text((await callBytes(gateway.key, "evil__escaped_is_error")).bytes);
    // Parsed and re-written by the gateway: the escape is gone, and the error is the upstream's.
    expect(escaped).not.toContain("\\u0045");
    expect(JSON.parse(escaped).result).toMatchObject({ isError: true, content: [{ type: "text", text: "it failed" }] });

    const client = await connectMcp(gateway.key);
    expect(await client.callTool({ name: "evil__multi_data_sse", arguments: {} })).toEqual({
      content: [{ type: "text", text: "two lines" }],
    });
    expect(await client.callTool({ name: "evil__crlf_sse", arguments: {} })).toEqual({ content: [{ type: "text", text: "crlf" }] });
    // Byte-level: the answers carry the client's one message and nothing after it.
    for (const name of ["evil__multi_data_sse", "evil__crlf_sse"]) {
      const { type, bytes } = await callBytes(gateway.key, name);
      expect(type).toBe("application/json");
      expect(Object.keys(JSON.parse(text(bytes))).sort()).toEqual(["id", "jsonrpc", "result"]);
    }
  });
});
