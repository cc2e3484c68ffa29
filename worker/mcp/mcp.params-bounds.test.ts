import { SELF } from "cloudflare:test";
import { describe, it } from "vitest";
import { demoGateway, gatewayError, ORIGIN } from "../../test/helpers.ts";
import { MAX_VALUE_NESTING } from "../lib/json-schema.ts";

const MODERN = "2026-07-28";

/** One raw POST to /mcp; the body is text, so it can nest as deep as a client likes. */
async function post(key: string, body: string, headers: Record<string, string>) {
  const response = await SELF.fetch(`${ORIGIN}/mcp`, {
    method: "POST",
    headers: {
      authorization: `Bearer ${key}`,
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      ...headers,
    },
    body,
  });
  return {
    status: response.status,
    sessionId: response.headers.get("mcp-session-id"),
    body: (await response.json()) as Record<string, any>,
  };
}

const nested = (levels: number) => `${'{"a":'.repeat(levels)}1${"}".repeat(levels)}`;
const modernHeaders = (method: string, name?: string) => ({
  "mcp-protocol-version": MODERN,
  "mcp-method": method,
  ...(name ? { "mcp-name": name } : {}),
});
const modernCall = (params: string, capabilities = "{}") =>
  `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"demo__lookup_customer",${params}"_meta":{"io.modelcontextprotocol/protocolVersion":"${MODERN}","io.modelcontextprotocol/clientCapabilities":${capabilities}}}}`;

/**
 * Round-5 finding 6: params nested past the bound. The SDKs' schemas recurse on a request's `_meta` (a 2026-07-28
 * request's declared capabilities), and 100,000 levels there overflowed the stack: HTTP 500 with the REST error body,
 * `internal_error`, on /mcp. Every params member but `arguments` (the tool's schema check's, `invalid_arguments`) now
 * nests at most MAX_VALUE_NESTING levels, or the request is answered -32602 before anything parses it.
 */
describe("round-5 finding 6: params nested past the bound", () => {
  it("answers -32602 for declared capabilities, _meta and inputResponses nested 100,000 levels", async ({ expect }) => {
    const gateway = await demoGateway();
    const cases = [
      modernCall("", `{"experimental":${nested(100_000)}}`),
      modernCall("", `{"elicitation":${nested(100_000)}}`),
      modernCall(`"inputResponses":{"r1":${nested(100_000)}},"requestState":"x",`),
    ];
    for (const body of cases) {
      const answer = await post(gateway.clientKey, body, modernHeaders("tools/call", "demo__lookup_customer"));
      expect(answer.status).toBe(200);
      expect(answer.body).toMatchObject({
        id: 7,
        error: {
          code: -32602,
          message: expect.stringMatching(/^Invalid params: params\.\w+ nests objects and arrays deeper than 64 levels$/),
        },
      });
    }
    const legacy = await post(gateway.clientKey, `{"jsonrpc":"2.0","id":8,"method":"tools/list","params":{"_meta":${nested(100_000)}}}`, {
      "mcp-protocol-version": "2025-11-25",
    });
    expect(legacy.body).toMatchObject({ id: 8, error: { code: -32602 } });
  });

  it("lets the bound's own depth through, and leaves deep arguments to the tool's schema check", async ({ expect }) => {
    const gateway = await demoGateway();
    // `_meta` is the first level, so its members may nest one level less.
    const within = await post(
      gateway.clientKey,
      modernCall("", `{"experimental":${nested(MAX_VALUE_NESTING - 3)}}`),
      modernHeaders("tools/call", "demo__lookup_customer"),
    );
    expect(within.body.error).toBeUndefined();
    const deepArguments = await post(
      gateway.clientKey,
      modernCall(`"arguments":${nested(100_000)},`),
      modernHeaders("tools/call", "demo__lookup_customer"),
    );
    expect(gatewayError(deepArguments.body.result)).toMatchObject({ code: "invalid_arguments" });
  });
});
