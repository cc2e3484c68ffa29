import { classifyInboundRequest, PROTOCOL_VERSION_META_KEY } from "@modelcontextprotocol/server";
import fc from "fast-check";
import { describe, it } from "vitest";
import { isModernRequest } from "./mcp.modern.ts";

/** The SDK classifier's own verdict, which `isModernRequest` answers without it for 2025-era traffic. */
function sdkVerdict(request: Request, body: unknown): boolean {
  const outcome = classifyInboundRequest({
    httpMethod: request.method,
    protocolVersionHeader: request.headers.get("mcp-protocol-version") ?? undefined,
    mcpMethodHeader: request.headers.get("mcp-method") ?? undefined,
    mcpNameHeader: request.headers.get("mcp-name") ?? undefined,
    body,
  });
  return outcome.kind === "modern" || (outcome.kind === "reject" && outcome.rung !== "jsonrpc-shape");
}

const versions = fc.constantFrom("2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28", "2027-01-01", "", "latest", 7);
const meta = fc.oneof(
  fc.constant(undefined),
  fc.constant(null),
  fc.constant([]),
  fc.record({ progressToken: fc.integer() }),
  fc.record(
    {
      [PROTOCOL_VERSION_META_KEY]: versions,
      "io.modelcontextprotocol/clientCapabilities": fc.constantFrom({}, null, "x"),
      "io.modelcontextprotocol/clientInfo": fc.constantFrom({ name: "a", version: "1" }, 3),
    },
    { requiredKeys: [] },
  ),
);
const params = fc.oneof(
  fc.constant(undefined),
  fc.constant("params"),
  fc.record({ name: fc.constantFrom("demo__search", "x"), arguments: fc.constant({ q: "a" }), _meta: meta }, { requiredKeys: [] }),
);
const message = fc.record(
  {
    jsonrpc: fc.constantFrom("2.0", "1.0"),
    id: fc.oneof(fc.integer(), fc.string({ maxLength: 3 }), fc.constant(null)),
    method: fc.constantFrom("tools/call", "tools/list", "initialize", "notifications/initialized", "server/discover", 5),
    params,
    result: fc.constant({}),
    error: fc.constant({ code: -32600, message: "no" }),
  },
  { requiredKeys: [] },
);
const body = fc.oneof(message, fc.array(message, { maxLength: 3 }), fc.constantFrom(null, 3, "text", true));
const headerValue = fc.oneof(
  fc.constant(undefined),
  versions.map(String),
  versions.map((version) => ` \t${String(version)}\t `),
  fc.constantFrom("2026-07-28x", "3000", "\v2026-07-28"),
);

describe("isModernRequest", () => {
  it("agrees with the SDK's classifier on every shape of message, header and envelope", ({ expect }) => {
    fc.assert(
      fc.property(
        body,
        headerValue,
        fc.constantFrom(undefined, "tools/call", "tools/list"),
        fc.constantFrom(undefined, "demo__search"),
        (parsed, version, method, name) => {
          const headers = new Headers({ "content-type": "application/json" });
          if (version !== undefined) headers.set("mcp-protocol-version", version);
          if (method !== undefined) headers.set("mcp-method", method);
          if (name !== undefined) headers.set("mcp-name", name);
          const request = new Request("https://rayrun.test/mcp", { method: "POST", headers, body: JSON.stringify(parsed) });
          expect(isModernRequest(request, parsed)).toBe(sdkVerdict(request, parsed));
        },
      ),
      { numRuns: 3000 },
    );
  });

  it("takes a 2025-era call as 2025-era, and a claim or a 2026 header to the classifier", ({ expect }) => {
    const call = { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "demo__search", arguments: {} } };
    const request = (version?: string) =>
      new Request("https://rayrun.test/mcp", { method: "POST", headers: version ? { "mcp-protocol-version": version } : {} });
    expect(isModernRequest(request(), call)).toBe(false);
    expect(isModernRequest(request("2025-06-18"), call)).toBe(false);
    // A 2026 header without the envelope is that revision's refusal, not 2025-era traffic.
    expect(isModernRequest(request("2026-07-28"), call)).toBe(true);
    const claimed = { ...call, params: { ...call.params, _meta: { [PROTOCOL_VERSION_META_KEY]: "2026-07-28" } } };
    expect(isModernRequest(request(), claimed)).toBe(true);
    expect(isModernRequest(request(), [claimed])).toBe(false);
  });
});
