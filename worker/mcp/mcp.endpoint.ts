import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import { CallToolRequestSchema, ErrorCode, ListToolsRequestSchema, McpError, type Tool } from "@modelcontextprotocol/sdk/types.js";
import { CfWorkerJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/cfworker-provider.js";
import { resolvePrincipal } from "../auth/authenticate.ts";
import type { JsonObject } from "../../schema/hooks/contract.ts";
import { decideAccess, isListed } from "../calls/access.ts";
import { loadCatalog, type CatalogTool } from "../calls/catalog.ts";
import { runToolCall } from "../calls/pipeline.ts";
import { projectOutputSchema } from "../calls/projection.ts";
import type { PublicContract } from "../hooks/compiler/index.ts";
import { afterResponse } from "../lib/after-response.ts";
import { newId } from "../lib/ids.ts";
import { insertLogStatements, type CallLogEntry } from "../logs/logs.store.ts";
import { MAX_BODY_BYTES, readJsonBody } from "./mcp.body.ts";

/** Who is calling /mcp: an API key with tools:call, bound to one workspace and profile. */
interface Caller {
  workspaceId: string;
  keyId: string;
  profileId: string | null;
  origin: string;
}

/**
 * The client endpoint. Stateless Streamable HTTP with JSON responses: each POST
 * carries complete JSON-RPC messages, so any edge can answer any request.
 */
export async function handleMcpRequest(env: Env, request: Request, ctx: ExecutionContext): Promise<Response> {
  if (request.method !== "POST") {
    return jsonRpcError(405, ErrorCode.ConnectionClosed, "Use POST: this endpoint does not open server-initiated streams", {
      allow: "POST",
    });
  }
  const principal = await resolvePrincipal(env, request, (promise) => ctx.waitUntil(promise));
  if (!principal || principal.kind !== "key") {
    return jsonRpcError(401, ErrorCode.InvalidRequest, "Send an API key with the tools:call scope as 'Authorization: Bearer rr_…'", {
      "www-authenticate": "Bearer",
    });
  }
  if (!principal.scopes.has("tools:call")) {
    return jsonRpcError(403, ErrorCode.InvalidRequest, "This key lacks the 'tools:call' scope");
  }
  const caller: Caller = {
    workspaceId: principal.workspaceId,
    keyId: principal.id,
    profileId: principal.profileId,
    origin: new URL(request.url).origin,
  };
  const body = await readJsonBody(request);
  const server = createGatewayServer(env, ctx, caller);
  const transport = new WebStandardStreamableHTTPServerTransport({
    sessionIdGenerator: undefined,
    enableJsonResponse: true,
    maxRequestBodySize: MAX_BODY_BYTES,
  });
  await server.connect(transport);
  // No server.close(): with JSON responses, handleRequest resolves only once every response is
  // written, so nothing is left open. close() would only abort the finished handler's signal and
  // build a "Connection closed" error, on every call; both objects are dropped with the request.
  return transport.handleRequest(body.request, "parsedBody" in body ? { parsedBody: body.parsedBody } : undefined);
}

function createGatewayServer(env: Env, ctx: ExecutionContext, caller: Caller): Server {
  const waitUntil = (promise: Promise<unknown>) => ctx.waitUntil(promise);
  const server = new Server(
    { name: "rayrun", version: "0.1.0" },
    {
      capabilities: { tools: { listChanged: false } },
      jsonSchemaValidator: new CfWorkerJsonSchemaValidator(),
      instructions: "Tools from the services connected to this Rayrun workspace. Names are `{service}__{tool}`.",
    },
  );

  server.setRequestHandler(ListToolsRequestSchema, async () => {
    const catalog = await loadCatalog(env, caller.workspaceId, waitUntil);
    const tools: Tool[] = [];
    for (const tool of catalog.tools.values()) {
      if (!isListed(catalog, caller.profileId, tool)) continue;
      tools.push(publicDefinition(tool, catalog.deployments.get(tool.uid)?.active?.contract ?? null));
    }
    tools.sort((a, b) => (a.name < b.name ? -1 : 1));
    return { tools };
  });

  server.setRequestHandler(CallToolRequestSchema, async (request) => {
    const catalog = await loadCatalog(env, caller.workspaceId, waitUntil);
    const publicName = request.params.name;
    const tool = catalog.tools.get(publicName);
    const access = tool ? decideAccess(catalog, caller.profileId, tool) : undefined;
    if (!tool || (access && !access.allowed && (access.code === "tool_blocked" || access.code === "no_access_profile"))) {
      if (tool && access && !access.allowed) {
        // Still a pre-dispatch refusal worth an admin's eye, though the client only sees "unknown".
        const refused = blockedLog(tool.uid, access.code, access.message);
        afterResponse(waitUntil, "call log write", () => writeLogs(env, caller.workspaceId, tool.captureDetails, [refused]));
      }
      // Unknown and blocked look the same, so a client learns nothing about tools its profile may not use.
      throw new McpError(ErrorCode.InvalidParams, `Unknown tool: ${publicName}`);
    }
    const entries: CallLogEntry[] = [];
    const record = (batch: CallLogEntry[]) => writeLogs(env, caller.workspaceId, tool.captureDetails, batch);
    try {
      return await runToolCall({
        env,
        waitUntil,
        catalog,
        tool,
        workspaceId: caller.workspaceId,
        keyId: caller.keyId,
        profileId: caller.profileId,
        arguments: (request.params.arguments ?? {}) as JsonObject,
        requestId: newId("req"),
        approvalsUrl: `${caller.origin}/v1/workspaces/${caller.workspaceId}/approvals`,
        log: (entry) => entries.push(entry),
        record,
      });
    } catch (error) {
      if (error instanceof McpError) throw new UpstreamRpcError(error);
      throw error;
    } finally {
      // Written after the response: a local D1 write would otherwise hold the thread while the response goes out.
      if (entries.length) afterResponse(waitUntil, "call log write", () => record(entries));
    }
  });
  return server;
}

/** What discovery shows: the active hook's public contract where it replaces the upstream's, and the projection. */
function publicDefinition(tool: CatalogTool, contract: PublicContract | null): Tool {
  const definition = tool.definition;
  return {
    ...definition,
    name: tool.publicName,
    description: contract?.description ?? definition.description,
    inputSchema: (contract?.inputSchema ?? definition.inputSchema) as Tool["inputSchema"],
    outputSchema: projectOutputSchema(contract?.outputSchema ?? definition.outputSchema, tool.projection) as Tool["outputSchema"],
  };
}

function blockedLog(toolUid: string, code: string, message: string): CallLogEntry {
  return {
    toolUid,
    requestId: newId("req"),
    stage: "pre_dispatch",
    channel: "active",
    outcome: "refused",
    code,
    durationMs: 0,
    revisionId: null,
    shadowDiffered: null,
    details: { message },
  };
}

async function writeLogs(env: Env, workspaceId: string, captureDetails: boolean, entries: CallLogEntry[]): Promise<void> {
  if (!entries.length) return;
  await env.DB.batch(insertLogStatements(env.DB, workspaceId, entries, captureDetails, new Date().toISOString()));
}

/**
 * The upstream's own JSON-RPC error, passed on with its code and message and
 * marked as the upstream's. The SDK server sends a thrown error's `code`,
 * `message` and `data` as they are; McpError would prefix the message again.
 */
class UpstreamRpcError extends Error {
  readonly code: number;
  readonly data: Record<string, unknown>;

  constructor(upstream: McpError) {
    super(upstream.message.replace(/^MCP error -?\d+: /, ""));
    this.code = upstream.code;
    this.data = { upstream: true, ...(isRecord(upstream.data) ? upstream.data : {}) };
  }
}

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value);

function jsonRpcError(status: number, code: number, message: string, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify({ jsonrpc: "2.0", error: { code, message }, id: null }), {
    status,
    headers: { "content-type": "application/json", ...headers },
  });
}
