// An agent as users run one: the MCP SDK client over Streamable HTTP with an API key.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

export const ERROR_META = "dev.rayrun/error";

export async function connectAgent(origin: string, key: string): Promise<Client> {
  const client = new Client({ name: "browser-test-agent", version: "1.0.0" });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${origin}/mcp`), { requestInit: { headers: { authorization: `Bearer ${key}` } } }),
  );
  return client;
}

/** The gateway's refusal carried in a tool result's `_meta`, if any. */
export function refusal(result: { _meta?: unknown }): { code: string; details: Record<string, unknown> } | undefined {
  return (result._meta as Record<string, { code: string; details: Record<string, unknown> }> | undefined)?.[ERROR_META];
}
