import { SELF } from "cloudflare:test";
import { describe, it } from "vitest";
import { demoGateway, ORIGIN } from "../../test/helpers.ts";

const APP_ORIGIN = "https://app.example.com"; // MCP_ALLOWED_ORIGINS in vitest.config.ts
const listTools = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" });
const mcpHeaders = (key: string, extra: Record<string, string> = {}) => ({
  authorization: `Bearer ${key}`,
  "content-type": "application/json",
  accept: "application/json, text/event-stream",
  ...extra,
});

describe("CORS on /mcp", () => {
  it("answers a browser preflight from an allowed origin with the methods and headers MCP uses", async ({ expect }) => {
    const res = await SELF.fetch(`${ORIGIN}/mcp`, {
      method: "OPTIONS",
      headers: {
        origin: APP_ORIGIN,
        "access-control-request-method": "POST",
        "access-control-request-headers": "authorization, content-type, mcp-protocol-version",
      },
    });
    expect(res.status).toBe(204);
    expect(res.headers.get("access-control-allow-origin")).toBe(APP_ORIGIN);
    expect(res.headers.get("access-control-allow-methods")).toBe("GET, POST, DELETE, OPTIONS");
    expect(res.headers.get("access-control-allow-headers")?.split(", ")).toEqual(
      expect.arrayContaining(["mcp-session-id", "mcp-protocol-version", "last-event-id", "authorization", "content-type"]),
    );
    expect(res.headers.get("access-control-expose-headers")?.split(", ")).toEqual(
      expect.arrayContaining(["mcp-session-id", "www-authenticate"]),
    );
    expect(res.headers.get("vary")).toContain("Origin");
  });

  it("refuses a preflight from an origin not on the list with 403 and a JSON-RPC error", async ({ expect }) => {
    const res = await SELF.fetch(`${ORIGIN}/mcp`, {
      method: "OPTIONS",
      headers: { origin: "https://evil.example", "access-control-request-method": "POST" },
    });
    expect(res.status).toBe(403);
    expect(res.headers.get("access-control-allow-origin")).toBeNull();
    expect(await res.json()).toEqual({
      jsonrpc: "2.0",
      error: { code: -32000, message: "This Origin may not call /mcp; see MCP_ALLOWED_ORIGINS", data: { code: "origin_not_allowed" } },
      id: null,
    });
  });

  it("lets an allowed origin call tools and read the 401 challenge", async ({ expect }) => {
    const gateway = await demoGateway();
    const ok = await SELF.fetch(`${ORIGIN}/mcp`, {
      method: "POST",
      headers: mcpHeaders(gateway.clientKey, { origin: APP_ORIGIN }),
      body: listTools,
    });
    expect(ok.status).toBe(200);
    expect(ok.headers.get("access-control-allow-origin")).toBe(APP_ORIGIN);
    expect(((await ok.json()) as { result: { tools: unknown[] } }).result.tools).toHaveLength(4);

    const anonymous = await SELF.fetch(`${ORIGIN}/mcp`, {
      method: "POST",
      headers: { origin: APP_ORIGIN, "content-type": "application/json" },
      body: listTools,
    });
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers.get("access-control-allow-origin")).toBe(APP_ORIGIN);
    expect(anonymous.headers.get("access-control-expose-headers")).toContain("www-authenticate");
    expect(anonymous.headers.get("www-authenticate")).toContain("resource_metadata=");
  });
});

describe("DNS-rebinding protection on /mcp", () => {
  it("refuses a request whose Origin is not allowed with 403, even with a valid key", async ({ expect }) => {
    const gateway = await demoGateway();
    for (const origin of ["https://evil.example", "null", "https://app.example.com.evil.example"]) {
      const res = await SELF.fetch(`${ORIGIN}/mcp`, {
        method: "POST",
        headers: mcpHeaders(gateway.clientKey, { origin }),
        body: listTools,
      });
      expect(res.status).toBe(403);
      expect(((await res.json()) as { error: { data: unknown } }).error.data).toEqual({ code: "origin_not_allowed" });
    }
  });

  it("refuses a Host that is not the gateway's with 403", async ({ expect }) => {
    const gateway = await demoGateway();
    const res = await SELF.fetch("https://evil.example/mcp", { method: "POST", headers: mcpHeaders(gateway.clientKey), body: listTools });
    expect(res.status).toBe(403);
    expect(await res.json()).toEqual({
      jsonrpc: "2.0",
      error: {
        code: -32000,
        message: "This Host is not one the gateway answers; see PUBLIC_URL and MCP_ALLOWED_HOSTS",
        data: { code: "host_not_allowed" },
      },
      id: null,
    });
    // A rebound name on the allowed address is refused too: the Host header is what counts.
    const rebound = await SELF.fetch("http://127.0.0.1:8787/mcp", {
      method: "POST",
      headers: mcpHeaders(gateway.clientKey, { host: "evil.example:8787", origin: "http://evil.example:8787" }),
      body: listTools,
    });
    expect(rebound.status).toBe(403);
    expect(((await rebound.json()) as { error: { data: unknown } }).error.data).toEqual({ code: "host_not_allowed" });
  });

  it("accepts loopback hosts from MCP_ALLOWED_HOSTS on any port, with their own origin", async ({ expect }) => {
    const gateway = await demoGateway();
    const res = await SELF.fetch("http://127.0.0.1:8787/mcp", {
      method: "POST",
      headers: mcpHeaders(gateway.clientKey, { origin: "http://127.0.0.1:8787" }),
      body: listTools,
    });
    expect(res.status).toBe(200);
    expect(res.headers.get("access-control-allow-origin")).toBe("http://127.0.0.1:8787");
    const crossPort = await SELF.fetch("http://127.0.0.1:8787/mcp", {
      method: "POST",
      headers: mcpHeaders(gateway.clientKey, { origin: "http://127.0.0.1:9999" }),
      body: listTools,
    });
    expect(crossPort.status).toBe(403);
  });
});
