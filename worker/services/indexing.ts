import { McpError } from "@modelcontextprotocol/sdk/types.js";
import { ApiError } from "../http/errors.ts";
import { indexStatements, listTools, type IndexSummary } from "../tools/tools.store.ts";
import {
  insertServiceStatement,
  markServiceIndexed,
  storedUpstreamTarget,
  upstreamTargetFor,
  type PendingService,
} from "./services.store.ts";
import { listUpstreamTools, MAX_TOOLS_PER_SERVICE, UpstreamFailure } from "./upstream.ts";

const STATUS: Record<UpstreamFailure["code"], 400 | 413 | 502> = {
  url_not_allowed: 400,
  too_many_tools: 413,
  upstream_unreachable: 502,
  upstream_protocol_error: 502,
};

/** Turns an upstream failure during indexing into the REST error the caller sees. */
function indexingError(error: unknown): unknown {
  if (error instanceof UpstreamFailure) {
    const details = error.code === "too_many_tools" ? { limit: MAX_TOOLS_PER_SERVICE } : undefined;
    return new ApiError(STATUS[error.code], error.code, error.message, details);
  }
  if (error instanceof McpError) {
    return new ApiError(502, "upstream_protocol_error", `The upstream answered tools/list with an error: ${error.message}`);
  }
  return error;
}

/** Indexes a new service and stores it with its tools in one batch: nothing is kept if indexing fails. */
export async function indexNewService(env: Env, service: PendingService): Promise<IndexSummary> {
  const target = await upstreamTargetFor(env, service);
  const listing = await listUpstreamTools(target).catch((error: unknown) => {
    throw indexingError(error);
  });
  const { statements, summary } = await indexStatements(env.DB, service.workspaceId, service.id, listing.tools, []);
  await env.DB.batch([insertServiceStatement(env.DB, service, listing.serverInfo), ...statements]);
  return summary;
}

/** Re-indexes a stored service; returns null when it does not exist (or was deleted). */
export async function refreshService(env: Env, workspaceId: string, serviceId: string): Promise<IndexSummary | null> {
  const target = await storedUpstreamTarget(env, workspaceId, serviceId);
  if (!target) return null;
  const listing = await listUpstreamTools(target).catch((error: unknown) => {
    throw indexingError(error);
  });
  const existing = await listTools(env.DB, workspaceId, { serviceId });
  const { statements, summary } = await indexStatements(env.DB, workspaceId, serviceId, listing.tools, existing);
  if (statements.length) await env.DB.batch(statements);
  await markServiceIndexed(env.DB, serviceId, listing.serverInfo);
  return summary;
}
