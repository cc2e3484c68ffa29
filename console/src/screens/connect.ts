// Client snippets for the /mcp URL: what an admin pastes into each client. The key is a placeholder: the
// console never holds a key's secret (Keys shows a new one once).
export interface Snippet {
  client: string;
  where: string;
  text: string;
}

export const KEY_PLACEHOLDER = "rr_…";

export function connectSnippets(mcpUrl: string): Snippet[] {
  return [
    {
      client: "Claude Code",
      where: "in a terminal",
      text: `claude mcp add --transport http rayrun ${mcpUrl} --header "Authorization: Bearer ${KEY_PLACEHOLDER}"`,
    },
    {
      client: "Claude Desktop",
      where: "claude_desktop_config.json (or Settings → Connectors with the URL, signing in with OAuth)",
      text: JSON.stringify(
        {
          mcpServers: {
            rayrun: {
              command: "npx",
              args: ["mcp-remote", mcpUrl, "--header", "Authorization:${RAYRUN_AUTH}"],
              env: { RAYRUN_AUTH: `Bearer ${KEY_PLACEHOLDER}` },
            },
          },
        },
        null,
        2,
      ),
    },
    {
      client: "Cursor",
      where: "~/.cursor/mcp.json",
      text: JSON.stringify({ mcpServers: { rayrun: { url: mcpUrl, headers: { Authorization: `Bearer ${KEY_PLACEHOLDER}` } } } }, null, 2),
    },
    {
      client: "MCP SDK",
      where: "TypeScript, @modelcontextprotocol/sdk",
      text: `import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const transport = new StreamableHTTPClientTransport(new URL("${mcpUrl}"), {
  requestInit: { headers: { authorization: "Bearer ${KEY_PLACEHOLDER}" } },
});
const client = new Client({ name: "my-agent", version: "1.0.0" });
await client.connect(transport);
console.log((await client.listTools()).tools.map((tool) => tool.name));`,
    },
  ];
}
