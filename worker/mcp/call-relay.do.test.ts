import { env } from "cloudflare:test";
import { describe, it } from "vitest";
import { MAX_HELD_BYTES } from "./call-relay.do.ts";

const readLine = async (stream: ReadableStream<Uint8Array>) => {
  const reader = stream.getReader();
  const { value } = await reader.read();
  await reader.cancel();
  return JSON.parse(new TextDecoder().decode(value)) as unknown;
};

describe("call relay", () => {
  it("holds a cancellation that arrives before its call listens, and hands it over when it does", async ({ expect }) => {
    const relay = env.CALL_RELAY.getByName(`key:${crypto.randomUUID()}`);
    const cancel = { jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 3, reason: "stop" } };
    await relay.deliver({ requestId: "3" }, cancel);
    expect(await readLine(await relay.listen(crypto.randomUUID(), ["3"]))).toEqual(cancel);
  });

  // FOUND AND FIXED (medium, round 6): held messages were bounded by number only (256), and each may be as large as a
  // POST (4 MiB): one key's answers to relayed requests no call waited for held a gigabyte in the object's isolate for
  // as long as the object lived. Fixed: at most MAX_HELD_BYTES are held, the oldest dropped first.
  it("holds at most MAX_HELD_BYTES of messages for calls not listening, dropping the oldest, and always the newest", async ({ expect }) => {
    const relay = env.CALL_RELAY.getByName(`key:${crypto.randomUUID()}`);
    const tokens = Array.from({ length: 12 }, () => crypto.randomUUID());
    const pad = "a".repeat(1024 * 1024);
    for (const token of tokens) await relay.deliver({ callToken: token }, { jsonrpc: "2.0", id: `rr-${token}-0`, result: { pad } });
    const heldFor = async (token: string) => {
      const reader = (await relay.listen(token, [])).getReader();
      const line = await Promise.race([reader.read().then(({ value }) => value), scheduler.wait(200).then(() => null)]);
      await reader.cancel();
      return line;
    };
    // Twelve 1 MiB answers against an 8 MiB bound: the oldest went, the newest stayed.
    expect(await heldFor(tokens[0]!)).toBeNull();
    expect(await heldFor(tokens.at(-1)!)).not.toBeNull();
    // One message past the bound on its own is still held: a call's large result on its way to its retry.
    const large = crypto.randomUUID();
    await relay.deliver({ callToken: large }, { result: { pad: "b".repeat(MAX_HELD_BYTES + 1024) } });
    expect(await heldFor(large)).not.toBeNull();
    expect(await heldFor(tokens.at(-2)!)).toBeNull();
  });

  it("routes an answer by its call token only to that call", async ({ expect }) => {
    const relay = env.CALL_RELAY.getByName(`session:${crypto.randomUUID()}`);
    const [mine, other] = [crypto.randomUUID(), crypto.randomUUID()];
    const otherStream = await relay.listen(other, ["1"]);
    const myStream = await relay.listen(mine, ["1"]);
    const answer = { jsonrpc: "2.0", id: `rr-${mine}-0`, result: { action: "decline" } };
    await relay.deliver({ callToken: mine }, answer);
    expect(await readLine(myStream)).toEqual(answer);
    // The other call got nothing: its next message is the one meant for it.
    const second = { jsonrpc: "2.0", id: `rr-${other}-0`, result: {} };
    await relay.deliver({ callToken: other }, second);
    expect(await readLine(otherStream)).toEqual(second);
  });
});
