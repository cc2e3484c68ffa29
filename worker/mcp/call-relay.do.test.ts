import { env } from "cloudflare:test";
import { describe, it } from "vitest";

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
