import { SELF } from "cloudflare:test";
import { describe, it } from "vitest";
import { demoGateway, ORIGIN } from "../../test/helpers.ts";

const MODERN = "2026-07-28";

/** One raw POST to /mcp, as a 2026-07-28 request (its envelope and headers) or a 2025-11-25 one. */
async function post(key: string, revision: "modern" | "legacy", method: string, params: Record<string, unknown>) {
  const modern = revision === "modern";
  const envelope = { "io.modelcontextprotocol/protocolVersion": MODERN, "io.modelcontextprotocol/clientCapabilities": {} };
  const name: Record<string, string> = typeof params.name === "string" ? { "mcp-name": params.name } : {};
  const response = await SELF.fetch(`${ORIGIN}/mcp`, {
    method: "POST",
    headers: {
      authorization: `Bearer ${key}`,
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      ...(modern ? { "mcp-protocol-version": MODERN, "mcp-method": method, ...name } : { "mcp-protocol-version": "2025-11-25" }),
    },
    body: JSON.stringify({ jsonrpc: "2.0", id: 7, method, params: modern ? { _meta: envelope, ...params } : params }),
  });
  return { status: response.status, body: (await response.json()) as Record<string, any> };
}

/**
 * Params of the right members but the wrong shape (a prompt argument that is a number, a completion without its
 * argument, a cursor that is a number) reached the SDK servers, which answered -32603 (internal error) with their
 * schema library's report dumped as the message. The spec asks for -32602, and a client deserves one line.
 */
describe("params of the wrong shape", () => {
  const cases: [string, Record<string, unknown>, RegExp][] = [
    ["prompts/get", { name: "demo__summarize_release", arguments: { version: 5 } }, /^Invalid params: params\.arguments\.version: /],
    [
      "completion/complete",
      { ref: { type: "ref/prompt", name: 5 }, argument: { name: "version", value: "2" } },
      /^Invalid params: params\.ref/,
    ],
    ["completion/complete", { ref: { type: "ref/prompt", name: "demo__summarize_release" } }, /^Invalid params: params\.argument: /],
    [
      "completion/complete",
      { ref: { type: "ref/prompt", name: "demo__summarize_release" }, argument: { name: "version", value: 2 } },
      /^Invalid params: params\.argument\.value: /,
    ],
    ["tools/list", { cursor: 5 }, /^Invalid params: params\.cursor: /],
    ["resources/list", { cursor: 5 }, /^Invalid params: params\.cursor: /],
  ];
  for (const revision of ["modern", "legacy"] as const) {
    it(`answers -32602 in one line, never an internal error (${revision})`, async ({ expect }) => {
      const gateway = await demoGateway();
      for (const [method, params, message] of cases) {
        const answer = await post(gateway.clientKey, revision, method, params);
        expect(answer.status, `${method} ${JSON.stringify(params)}`).toBe(200);
        expect(answer.body, `${method} ${JSON.stringify(params)}`).toMatchObject({ id: 7, error: { code: -32602, message } });
        expect(answer.body.error.message).not.toContain("\n");
      }
    });
  }

  it("still serves the same requests when their params are well formed", async ({ expect }) => {
    const gateway = await demoGateway();
    for (const revision of ["modern", "legacy"] as const) {
      const prompt = await post(gateway.clientKey, revision, "prompts/get", {
        name: "demo__summarize_release",
        arguments: { version: "2.4.0" },
      });
      expect(prompt.body.error).toBeUndefined();
      expect(prompt.body.result.messages.length).toBeGreaterThan(0);
      const list = await post(gateway.clientKey, revision, "tools/list", {});
      expect(list.body.result.tools.length).toBeGreaterThan(0);
    }
  });
});

describe("logging/setLevel with a level that is none", () => {
  it("is answered -32602 in one line at 2025-11-25, and a good level is kept; 2026-07-28 serves no logging/setLevel (-32601)", async ({
    expect,
  }) => {
    const gateway = await demoGateway();
    const bad = await post(gateway.clientKey, "legacy", "logging/setLevel", { level: "nope" });
    expect(bad.status).toBe(200);
    expect(bad.body).toMatchObject({ id: 7, error: { code: -32602, message: expect.stringMatching(/^Invalid params: params\.level: /) } });
    expect(bad.body.error.message).not.toContain("\n");
    const good = await post(gateway.clientKey, "legacy", "logging/setLevel", { level: "warning" });
    expect(good.body).toEqual({ jsonrpc: "2.0", id: 7, result: {} });
    const modern = await post(gateway.clientKey, "modern", "logging/setLevel", { level: "nope" });
    expect(modern.body).toMatchObject({ id: 7, error: { code: -32601 } });
  });
});

describe("a progress token that is neither a string nor a number", () => {
  for (const revision of ["modern", "legacy"] as const) {
    it(`is a param of the wrong type (-32602), not a parse error (${revision})`, async ({ expect }) => {
      const gateway = await demoGateway();
      for (const progressToken of [{ a: 1 }, [1], true, null]) {
        const answer = await post(gateway.clientKey, revision, "tools/call", {
          name: "demo__search_release_notes",
          arguments: { query: "sso" },
          _meta: {
            ...(revision === "modern"
              ? { "io.modelcontextprotocol/protocolVersion": MODERN, "io.modelcontextprotocol/clientCapabilities": {} }
              : {}),
            progressToken,
          },
        });
        expect(answer.status, JSON.stringify(progressToken)).toBe(200);
        expect(answer.body).toMatchObject({
          id: 7,
          error: { code: -32602, message: "Invalid params: params._meta.progressToken must be a string or a number" },
        });
      }
    });
  }
});
