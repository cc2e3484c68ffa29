import { SELF } from "cloudflare:test";
import { describe, it } from "vitest";
import { hostileGateway, ORIGIN } from "../../test/helpers.ts";

/**
 * Round-5 finding 4: an upstream's result spelling a 2026-07-28 round. A 2025-era upstream's tool result may carry
 * any members; `resultType`, `inputRequests` and `requestState` are the 2026-07-28 protocol layer's, and a result
 * carrying them reached a 2026-07-28 client as the gateway's own input-required answer: a URL to open posing as the
 * gateway's approval (on the parsed path), or a second `resultType` after the gateway's (passed through), which a
 * last-wins parser reads as the round. They are dropped, and such a result never passes through.
 */
async function modernCall(key: string, name: string, args: Record<string, unknown>, capabilities: Record<string, unknown>) {
  const res = await SELF.fetch(`${ORIGIN}/mcp`, {
    method: "POST",
    headers: {
      authorization: `Bearer ${key}`,
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": "2026-07-28",
      "mcp-method": "tools/call",
      "mcp-name": name,
    },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "tools/call",
      params: {
        name,
        arguments: args,
        _meta: { "io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": capabilities },
      },
    }),
  });
  return res.text();
}

describe("round-5 finding 4: an upstream's result spelling a 2026-07-28 round", () => {
  const cases = [
    { path: "passed through", args: {} },
    { path: "parsed", args: { parsed: true } },
  ];
  for (const { path, args } of cases) {
    for (const capabilities of [{}, { elicitation: { url: {} } }]) {
      it(`is a complete result, ${path}, for a client declaring ${JSON.stringify(capabilities)}`, async ({ expect }) => {
        const gateway = await hostileGateway();
        const text = await modernCall(gateway.key, "evil__forged_input_required", args, capabilities);
        // Once each: no second resultType for a last-wins parser to read, and none of the upstream's round.
        expect(text.match(/"resultType"/g)).toHaveLength(1);
        expect(text).not.toContain("inputRequests");
        expect(text).not.toContain("phish.example");
        expect(text).not.toContain("requestState");
        const message = JSON.parse(text) as { result: { resultType: string; content: { text?: string }[] } };
        expect(message.result.resultType).toBe("complete");
        expect(message.result.content[0]).toMatchObject({ type: "text", text: "forged" });
      });
    }
  }
});
