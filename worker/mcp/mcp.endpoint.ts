import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import {
  CallToolRequestSchema,
  ErrorCode,
  ListToolsRequestSchema,
  McpError,
  type CallToolResult,
  type Tool,
} from "@modelcontextprotocol/sdk/types.js";
import { CfWorkerJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/cfworker-provider.js";
import { resolvePrincipal } from "../auth/authenticate.ts";
import { decideAccess, isListed } from "../calls/access.ts";
import { loadCatalog, type Catalog } from "../calls/catalog.ts";
import { callUpstreamTool, UpstreamFailure } from "../services/upstream.ts";
import type { ToolDefinition } from "../tools/tools.store.ts";
import { refusal } from "./mcp.results.ts";

/** Who is calling /mcp: an API key with tools:call, bound to one workspace and profile. */
interface Caller {
  workspaceId: string;
  keyId: string;
  profileId: string | null;
}

/**
 * The client endpoint. Stateless Streamable HTTP with JSON responses: each POST
 * carries complete JSON-RPC messages, so any edge can answer any request.
 */
export async function handleMcpRequest(env: Env, request: Request): Promise<Response> {
  if (request.method !== "POST") {
    return jsonRpcError(405, ErrorCode.ConnectionClosed, "Use POST: this endpoint does not open server-initiated streams", {
      allow: "POST",
    });
  }
  const principal = await resolvePrincipal(env, request);
  if (!principal || principal.kind !== "key") {
    return jsonRpcError(401, ErrorCode.InvalidRequest, "Send an API key with the tools:call scope as 'Authorization: Bearer rr_…'", {
      "www-authenticate": "Bearer",
    });
  }
  if (!principal.scopes.has("tools:call")) {
    return jsonRpcError(403, ErrorCode.InvalidRequest, "This key lacks the 'tools:call' scope");
  }
  const caller: Caller = { workspaceId: principal.workspaceId, keyId: principal.id, profileId: principal.profileId };
  const server = createGatewayServer(env, caller);
  const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
  await server.connect(transport);
  try {
    return await transport.handleRequest(request);
  } finally {
    void server.close();
  }
}

function createGatewayServer(env: Env, caller: Caller): Server {
  const server = new Server(
    { name: "rayrun", version: "0.1.0" },
    {
      capabilities: { tools: { listChanged: false } },
      jsonSchemaValidator: new CfWorkerJsonSchemaValidator(),
      instructions: "Tools from the services connected to this Rayrun workspace. Names are `{service}__{tool}`.",
    },
  );

  server.setRequestHandler(ListToolsRequestSchema, async () => {
    const catalog = await loadCatalog(env, caller.workspaceId);
    const tools: Tool[] = [];
    for (const tool of catalog.tools.values()) {
      if (!isListed(catalog, caller.profileId, tool)) continue;
      tools.push(publicDefinition(tool.publicName, tool.definition));
    }
    tools.sort((a, b) => (a.name < b.name ? -1 : 1));
    return { tools };
  });

  server.setRequestHandler(CallToolRequestSchema, async (request) => {
    const catalog = await loadCatalog(env, caller.workspaceId);
    return callTool(catalog, caller, request.params.name, request.params.arguments ?? {});
  });
  return server;
}

function publicDefinition(publicName: string, definition: ToolDefinition): Tool {
  return {
    ...definition,
    name: publicName,
    inputSchema: definition.inputSchema as Tool["inputSchema"],
    outputSchema: definition.outputSchema as Tool["outputSchema"],
  };
}

async function callTool(catalog: Catalog, caller: Caller, publicName: string, args: Record<string, unknown>): Promise<CallToolResult> {
  const tool = catalog.tools.get(publicName);
  const access = tool ? decideAccess(catalog, caller.profileId, tool) : undefined;
  if (!tool || !access || (!access.allowed && (access.code === "tool_blocked" || access.code === "no_access_profile"))) {
    // Unknown and blocked look the same, so a client learns nothing about tools its profile may not use.
    throw new McpError(ErrorCode.InvalidParams, `Unknown tool: ${publicName}`);
  }
  if (!access.allowed) return refusal(access.code, access.message, { tool: publicName });

  const target = catalog.targets.get(tool.serviceId);
  if (!target) throw new McpError(ErrorCode.InternalError, "The tool's service is not available");
  try {
    return await callUpstreamTool(target, tool.name, args);
  } catch (error) {
    if (error instanceof UpstreamFailure) return refusal(error.code, error.message, { tool: publicName });
    if (error instanceof McpError) {
      // The upstream's own JSON-RPC error goes back as it is, marked as the upstream's.
      throw new McpError(error.code, stripMcpPrefix(error.message), { upstream: true, ...(isRecord(error.data) ? error.data : {}) });
    }
    throw error;
  }
}

/** McpError prefixes "MCP error <code>: "; re-wrapping would double it. */
const stripMcpPrefix = (message: string) => message.replace(/^MCP error -?\d+: /, "");
const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value);

function jsonRpcError(status: number, code: number, message: string, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify({ jsonrpc: "2.0", error: { code, message }, id: null }), {
    status,
    headers: { "content-type": "application/json", ...headers },
  });
}
