import { SELF } from "cloudflare:test";
import { describe, it } from "vitest";
import { demoGateway, ORIGIN } from "../../test/helpers.ts";

/** One raw POST to /mcp. */
async function post(key: string, body: string) {
  const response = await SELF.fetch(`${ORIGIN}/mcp`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json", accept: "application/json, text/event-stream" },
    body,
  });
  return { sessionId: response.headers.get("mcp-session-id"), body: (await response.json()) as Record<string, any> };
}

/**
 * Round-5 finding 7: an initialize's capabilities past a session id. The session id carries what `initialize`
 * declared; capabilities of a megabyte made a header of a megabyte, which broke the response ("Network connection
 * lost"), and an id over 4,096 characters is never honoured anyway.
 */
describe("round-5 finding 7: initialize capabilities too large for a session id", () => {
  it("answers -32602 with no session id, and a client declaring ordinary capabilities gets one", async ({ expect }) => {
    const gateway = await demoGateway();
    const initialize = (capabilities: string) =>
      `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","clientInfo":{"name":"t","version":"1"},"capabilities":${capabilities}}}`;
    const huge = await post(gateway.clientKey, initialize(`{"sampling":{"junk":"${"x".repeat(1024 * 1024)}"}}`));
    expect(huge.sessionId).toBeNull();
    expect(huge.body).toMatchObject({ id: 1, error: { code: -32602, message: expect.stringContaining("too large for a session") } });
    const ordinary = await post(gateway.clientKey, initialize(`{"sampling":{},"elicitation":{"form":{},"url":{}},"roots":{}}`));
    expect(ordinary.sessionId).toEqual(expect.any(String));
    expect(ordinary.body.result.protocolVersion).toBe("2025-11-25");
  });
});
