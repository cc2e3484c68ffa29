/**
 * An upstream's attacks on result pass-through (upstream.passthrough.ts, mcp.passthrough.ts): answers framed so
 * that the bytes spliced into the client's answer say more than the result the gateway parsed. Tests that pass
 * document a defence; tests that fail on main are findings, each with its proposed fix.
 */
import { SELF } from "cloudflare:test";
import { describe, it } from "vitest";
import { connectMcp, hostileGateway, ORIGIN, upstreamOrigin } from "../../test/helpers.ts";

/**
 * One tools/call POSTed to /mcp as raw bytes: what a client's parser would be handed. With a progress token, the
 * gateway answers in SSE.
 */
async function callBytes(
  key: string,
  name: string,
  { args = {}, accept = "application/json, text/event-stream", progressToken }: CallOptions = {},
) {
  const params = { name, arguments: args, ...(progressToken ? { _meta: { progressToken } } : {}) };
  const response = await SELF.fetch(`${ORIGIN}/mcp`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json", accept, "mcp-protocol-version": "2025-06-18" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 3, method: "tools/call", params }),
  });
  return { type: response.headers.get("content-type"), bytes: new Uint8Array(await response.arrayBuffer()) };
}

interface CallOptions {
  args?: Record<string, unknown>;
  accept?: string;
  progressToken?: string;
}

/**
 * The `result` value of the hostile upstream's own SSE answer to a tools/call with id 3, as its bytes decode: what a
 * client must receive byte for byte when the result passes through.
 */
async function upstreamResultText(tag: string, name: string, args: Record<string, unknown>): Promise<string> {
  const response = await fetch(`${upstreamOrigin()}/fixtures/hostile/${tag}/mcp`, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 3, method: "tools/call", params: { name, arguments: args } }),
  });
  const answer = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(await response.arrayBuffer());
  const prefix = 'data: {"result":';
  const suffix = ',"jsonrpc":"2.0","id":3}\n\n';
  if (!answer.startsWith(prefix) || !answer.endsWith(suffix)) throw new Error(`unexpected upstream answer: ${answer.slice(0, 80)}`);
  return answer.slice(prefix.length, -suffix.length);
}

/** The one data line of the gateway's SSE answer that carries the call's result, as sent (strict UTF-8). */
function resultLine(bytes: Uint8Array): string {
  const answer = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(bytes);
  const lines = answer.split("\n").filter((line) => line.startsWith("data: ") && line.includes('"id":3'));
  if (lines.length !== 1) throw new Error(`expected one result line, got ${lines.length}: ${answer.slice(0, 200)}`);
  return lines[0]!;
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
    const { bytes } = await callBytes(gateway.key, "evil__invalid_utf8");
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

describe("attack: which event is the result", () => {
  /**
   * FOUND AND FIXED (low): the pass-through diverted the first result for the call's id that qualified, and the SDK
   * client took the first result for that id, qualifying or not. An SSE answer whose first result the splitter passes
   * on (an `isError`, an event of more than 16 lines, a byte order mark before the stream's first line) and whose
   * second one qualifies answered the client with the second, while the gateway's client had resolved the call with
   * the first (with `isError`, the client saw a success where the gateway had an upstream error). Same class as the
   * named-event finding above, whose fix a byte order mark also got round: before the stream's first line it hid the
   * `event: decoy` name from the splitter but not from the SDK, which strips the mark and ignores the event.
   * Fixed: the stub the SDK client gets carries a token of the call's capture (`_meta["dev.rayrun/diverted"]`), and
   * the pipeline answers with the diverted bytes only when the result the SDK client resolved with is that stub.
   */
  for (const first of ["is_error", "many_lines", "bom", "bom_named"]) {
    it(`the client gets the result the gateway's MCP client accepted, not a later one for the same id (first: ${first})`, async ({
      expect,
    }) => {
      const gateway = await hostileGateway();
      const client = await connectMcp(gateway.key);
      const result = await client.callTool({ name: "evil__second_result_sse", arguments: { first } });
      expect(JSON.stringify(result)).not.toContain("SMUGGLED");
      expect(result).toEqual({ content: [{ type: "text", text: "the real answer" }], ...(first === "is_error" ? { isError: true } : {}) });
    });
  }

  it("defeated: a second result for the same id after a diverted one never reaches the client", async ({ expect }) => {
    const gateway = await hostileGateway();
    const line = resultLine((await callBytes(gateway.key, "evil__double_result_sse", { progressToken: "p-3" })).bytes);
    expect(line).toBe('data: {"result":{ "content": [ { "type": "text", "text": "first" } ] },"jsonrpc":"2.0","id":3}');
    const client = await connectMcp(gateway.key);
    expect(await client.callTool({ name: "evil__double_result_sse", arguments: {} })).toEqual({
      content: [{ type: "text", text: "first" }],
    });
  });
});

describe("attack: a result in small pieces cut where the reader carries state", () => {
  it("defeated: cuts inside `data:`, `\\u` escapes (in values and member names), multi-byte characters and after a long string (holding a raw U+2028) reach the client byte for byte", async ({
    expect,
  }) => {
    const gateway = await hostileGateway();
    for (const variant of ["plain", "long_name"]) {
      const sent = await upstreamResultText(gateway.tag, "trickle_sse", { variant });
      const { type, bytes } = await callBytes(gateway.key, "evil__trickle_sse", { args: { variant }, progressToken: "p-3" });
      expect(type).toBe("text/event-stream");
      expect(resultLine(bytes)).toBe(`data: {"result":${sent},"jsonrpc":"2.0","id":3}`);
    }
    const client = await connectMcp(gateway.key);
    const read = await client.callTool({ name: "evil__trickle_sse", arguments: { variant: "plain" } });
    expect(read._meta).toEqual({ "example.com/é": "ok" });
    expect((read.content as { type: string; text: string }[])[0]).toMatchObject({
      type: "text",
      text: expect.stringContaining('A\n"quoted" café 𝄞 \u2028 '),
    });
  });

  it("defeated: `isError` and the gateway's metadata spelled with escapes beside a long text, cut mid-escape, take the parsed path", async ({
    expect,
  }) => {
    const gateway = await hostileGateway();
    const failed = resultLine(
      (await callBytes(gateway.key, "evil__trickle_sse", { args: { variant: "escaped_error" }, progressToken: "p" })).bytes,
    );
    expect(failed).not.toContain("\\u0045");
    expect(JSON.parse(failed.slice(6)).result).toMatchObject({ isError: true, content: [{ type: "text" }] });

    const forged = resultLine(
      (await callBytes(gateway.key, "evil__trickle_sse", { args: { variant: "escaped_meta" }, progressToken: "p" })).bytes,
    );
    expect(forged).not.toContain("approval_required");
    const result = JSON.parse(forged.slice(6)).result;
    expect(result.isError).toBeUndefined();
    expect(result._meta?.["dev.rayrun/error"]).toBeUndefined();
  });
});

describe("attack: the stream around the result", () => {
  it("defeated: an upstream that keeps its stream open after the result does not hold the client's answer", async ({ expect }) => {
    const gateway = await hostileGateway();
    // The upstream holds the stream for two minutes; the test's timeout (30 s) fails this if the answer waits for it.
    const line = resultLine((await callBytes(gateway.key, "evil__result_then_hold_sse", { progressToken: "p-3" })).bytes);
    expect(line).toBe('data: {"result":{ "content" : [ { "text": "as the upstream wrote it", "type": "text" } ] },"jsonrpc":"2.0","id":3}');
    const client = await connectMcp(gateway.key);
    expect(await client.callTool({ name: "evil__result_then_hold_sse", arguments: {} })).toEqual({
      content: [{ type: "text", text: "as the upstream wrote it" }],
    });
  });

  /**
   * FOUND AND FIXED (medium): each of an upstream's one-byte writes reaches the gateway as a read of its own, and every
   * read was kept as its own chunk. A result written in 200,000 writes (a second or two for the upstream) was 200,000
   * chunks, which the answer's assembly spread into one `push` call: the client got `internal_error` (Maximum call
   * stack size exceeded), the same spread ended a non-diverted result's event in the splitter, and each chunk was an
   * object held until the call ended.
   * Fixed: small reads are copied end to end into a shared buffer and adjacent pieces joined as they are kept
   * (`appendBytes`), so a trickle is a few views; and no chunk list is spread into a call's arguments.
   */
  it("a result written one byte at a time reaches the client whole, diverted or not", async ({ expect }) => {
    const gateway = await hostileGateway();
    const bytes = 200_000;
    const diverted = resultLine((await callBytes(gateway.key, "evil__tiny_writes_sse", { args: { bytes }, progressToken: "p-3" })).bytes);
    expect(diverted).toBe(`data: {"result":{"content":[{"type":"text","text":"${"a".repeat(bytes)}"}]},"jsonrpc":"2.0","id":3}`);
    const failed = resultLine(
      (await callBytes(gateway.key, "evil__tiny_writes_sse", { args: { bytes, isError: true }, progressToken: "p-3" })).bytes,
    );
    expect(JSON.parse(failed.slice(6)).result).toEqual({ content: [{ type: "text", text: "a".repeat(bytes) }], isError: true });
    // 400,000 one-byte writes from the Node fixture: what this asserts is the whole answer, not its speed, so the
    // bound leaves room for a machine loaded by other work (50 s at a load average of 7 on 2 cores).
  }, 120_000);

  /**
   * FOUND AND FIXED (medium): the SSE splitter handed the SDK's stream one chunk per event, and an empty line is a
   * one-byte event: each 64 KiB read of line feeds became 65,536 chunks, each a trip through the SDK's decoder and
   * parser streams (about 30 µs here). 1 MiB of line feeds took 37 s and the call ended in upstream_timeout instead of
   * its answer; 16 MiB kept the isolate's CPU busy past this test's 30 s without reaching the response bound.
   * Fixed: what a read lets go on unchanged leaves as one view per run of adjacent bytes (`adjacentJoined`): 1 MiB of
   * line feeds now takes under a second, and 16 MiB ends at the bound.
   */
  it("empty SSE events past the response bound end the call with upstream_response_too_large, and cost little", async ({ expect }) => {
    const gateway = await hostileGateway();
    // 16 MiB of empty events; then 16 Mi comment lines (32 MiB) in one event the splitter holds: both end at the bound.
    for (const comments of [false, true]) {
      const answer = JSON.parse(
        text((await callBytes(gateway.key, "evil__blank_lines_sse", { args: { lines: 16 * 1024 * 1024, comments } })).bytes),
      );
      expect(answer.result.isError).toBe(true);
      expect(answer.result._meta["dev.rayrun/error"]).toMatchObject({ code: "upstream_response_too_large" });
    }
  });
});

/**
 * FOUND AND FIXED (low): `qualifies` checked block types, `isError` and the gateway's metadata, not the shape MCP gives
 * a result. A text block whose `text` is a number or missing, or a `_meta` or `structuredContent` that is not an
 * object, passed through as sent: the gateway's own SDK client refuses such a result (the parsed path answers
 * upstream_protocol_error), and so does every SDK client downstream, which then fails the call with a schema error.
 * Fixed: the reduced result must pass the SDK's `CallToolResultSchema` (cheap on the reduction).
 */
describe("attack: results MCP's schema refuses", () => {
  for (const variant of ["text_not_string", "text_missing", "meta_not_object", "structured_not_object"]) {
    it(`a result the SDK would refuse does not reach the client as it came (${variant})`, async ({ expect }) => {
      const gateway = await hostileGateway();
      const answer = text((await callBytes(gateway.key, "evil__malformed_result", { args: { variant } })).bytes);
      expect(answer).not.toContain("forged");
      const client = await connectMcp(gateway.key);
      const result = await client.callTool({ name: "evil__malformed_result", arguments: { variant } });
      expect(result.isError).toBe(true);
      expect((result._meta as Record<string, { code: string }>)["dev.rayrun/error"]?.code).toBe("upstream_protocol_error");
    });
  }
});

/**
 * FOUND AND FIXED (low): the schema check above runs on the reduction, where a string over 1,024 characters is `""`, and
 * `""` is valid base64. An image or audio block whose long `data` is not base64 passes through; the gateway's own SDK
 * client would have refused it (`Invalid Base64 string`), and every SDK client downstream does.
 * Fixed as proposed: SkeletonBuilder empties a long string to `""` only when its raw text is what `atob` takes without
 * whitespace or escapes (`[A-Za-z0-9+/]`, at most two trailing `=` with the length a multiple of 4, else a length
 * that is not 1 more than one), tested natively per piece, and to `"-"` (never base64) otherwise; text fields take
 * either, and a non-base64 `data` then fails `CallToolResultSchema` and takes the parsed path. The extra native scan
 * over long strings is to be measured with `npm run bench -- proxy`.
 */
it("a long image `data` that is not base64 does not reach the client as it came", async ({ expect }) => {
  const gateway = await hostileGateway();
  const answer = text((await callBytes(gateway.key, "evil__malformed_result", { args: { variant: "long_image_not_base64" } })).bytes);
  expect(answer).not.toContain("forged!");
  const client = await connectMcp(gateway.key);
  const result = await client.callTool({ name: "evil__malformed_result", arguments: { variant: "long_image_not_base64" } });
  expect((result._meta as Record<string, { code: string }>)["dev.rayrun/error"]?.code).toBe("upstream_protocol_error");
});

/**
 * FOUND AND FIXED (info): a number out of a double's range (`1e400`) passes through as written. The gateway's parse reads
 * Infinity, the parsed path writes `null` (JSON.stringify), and a client's parser reads Infinity (JavaScript,
 * Python) or refuses the whole message (Go's encoding/json): not one value under every standard parser.
 * Fixed as proposed: `qualifies` walks the parsed reduction (a stack, in `forwardsAsParsed`) and refuses a non-finite
 * number, so the parsed path writes it. A regex for a 309-digit run would cost the length times 309 on a text of
 * 308-digit numbers; the walk costs about what the parse did (to be measured with `npm run bench -- proxy`).
 */
it("a number no double holds does not reach the client as the upstream wrote it", async ({ expect }) => {
  const gateway = await hostileGateway();
  const answer = text((await callBytes(gateway.key, "evil__malformed_result", { args: { variant: "number_out_of_range" } })).bytes);
  expect(answer).not.toContain("1e400");
});

describe("finding 8: pass-through forwards `__proto__` and repeated members", () => {
  /**
   * Issue 26, finding 8 (low): a result whose `__proto__` member holds a forged `dev.rayrun/error` and `isError: true`
   * passed byte for byte: JSON.parse makes `__proto__` an own property, which the checks for `isError` and the
   * gateway's metadata never read, while a client that copies the result into an object gets it as the prototype.
   * Fixed: a `__proto__` member anywhere (however spelled) sends the result down the parsed path, which drops it.
   */
  for (const where of ["result", "block", "escaped"]) {
    it(`a \`__proto__\` member (${where}) takes the parsed path and never reaches the client`, async ({ expect }) => {
      const gateway = await hostileGateway();
      const answer = text((await callBytes(gateway.key, "evil__proto_error", { args: { where } })).bytes);
      expect(answer).not.toContain("attacker.example");
      expect(answer).not.toMatch(/__pr(o|\\u006f)to__/);
      expect(JSON.parse(answer)).toEqual({ jsonrpc: "2.0", id: 3, result: { content: [{ type: "text", text: "ok" }] } });
      const client = await connectMcp(gateway.key);
      const result = await client.callTool({ name: "evil__proto_error", arguments: { where } });
      expect(result).toEqual({ content: [{ type: "text", text: "ok" }] });
      expect(Object.getPrototypeOf(result)).toBe(Object.prototype);
      expect(result.isError).toBeUndefined();
    });
  }

  /**
   * Issue 26, finding 8 (low): a repeated member that spells none of the gateway's names (`content`, a block's
   * `text`) passed as it came, so a first-wins parser read other text than the gateway's parse (its logs, Code Mode).
   * Fixed: any repeated member takes the parsed path, which writes the one value the gateway read.
   */
  for (const where of ["content", "text"]) {
    it(`a repeated \`${where}\` member takes the parsed path: the client reads the text the gateway read`, async ({ expect }) => {
      const gateway = await hostileGateway();
      const answer = text((await callBytes(gateway.key, "evil__duplicate_content", { args: { where } })).bytes);
      expect(answer).not.toContain("FIRST");
      expect(answer).toBe('{"result":{"content":[{"type":"text","text":"the checked text"}]},"jsonrpc":"2.0","id":3}');
    });
  }
});
