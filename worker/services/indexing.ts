import { McpError } from "@modelcontextprotocol/sdk/types.js";
import { ApiError } from "../http/errors.ts";
import { indexStatements, listTools, type IndexSummary } from "../tools/tools.store.ts";
import {
  insertServiceStatement,
  markServiceIndexed,
  storedUpstreamTarget,
  upstreamTargetFor,
  type IndexedServer,
  type PendingService,
} from "./services.store.ts";
import { listUpstreamTools, MAX_TOOL_LIST_BYTES, MAX_TOOLS_PER_SERVICE, MAX_UPSTREAM_RESPONSE_BYTES, UpstreamFailure } from "./upstream.ts";

/** The bound each indexing failure code reports in `details.limit`. */
const LIMIT_OF: Partial<Record<UpstreamFailure["code"], number>> = {
  too_many_tools: MAX_TOOLS_PER_SERVICE,
  tool_list_too_large: MAX_TOOL_LIST_BYTES,
  upstream_response_too_large: MAX_UPSTREAM_RESPONSE_BYTES,
};

/** Turns an upstream failure during indexing into the REST error the caller sees. */
function indexingError(error: unknown): unknown {
  if (error instanceof UpstreamFailure) {
    const limit = LIMIT_OF[error.code];
    const details = limit === undefined ? undefined : { limit };
    return new ApiError(error.code, { message: error.message, details });
  }
  if (error instanceof McpError) {
    return new ApiError("upstream_protocol_error", {
      message: `The upstream answered tools/list with an error: ${error.message}`,
      // The upstream's JSON-RPC code and data go to the Worker log.
      cause: error,
    });
  }
  return error;
}

/**
 * Characters of one service's instructions the gateway keeps. Each visible
 * service's text goes into every client's `initialize`, so a longer text is cut
 * here (and the index summary says `instructionsTruncated: true`).
 */
export const MAX_SERVICE_INSTRUCTIONS_CHARS = 4096;

function indexedServer(listing: { serverInfo: unknown; instructions: string | undefined }): {
  server: IndexedServer;
  truncated: boolean;
} {
  const text = listing.instructions?.trim() || null;
  if (text === null || text.length <= MAX_SERVICE_INSTRUCTIONS_CHARS)
    return { server: { serverInfo: listing.serverInfo, instructions: text }, truncated: false };
  // Never end on half of a surrogate pair.
  let end = MAX_SERVICE_INSTRUCTIONS_CHARS - 1;
  if (/[\uD800-\uDBFF]/.test(text.charAt(end - 1))) end--;
  return { server: { serverInfo: listing.serverInfo, instructions: `${text.slice(0, end)}…` }, truncated: true };
}

const withTruncation = (summary: IndexSummary, truncated: boolean): IndexSummary =>
  truncated ? { ...summary, instructionsTruncated: true } : summary;

/** Indexes a new service and stores it with its tools in one batch: nothing is kept if indexing fails. */
export async function indexNewService(env: Env, service: PendingService): Promise<IndexSummary> {
  const target = await upstreamTargetFor(env, service);
  const listing = await listUpstreamTools(target).catch((error: unknown) => {
    throw indexingError(error);
  });
  const { statements, summary } = await indexStatements(env.DB, service.workspaceId, service.id, listing.tools, []);
  const { server, truncated } = indexedServer(listing);
  await env.DB.batch([insertServiceStatement(env.DB, service, server), ...statements]);
  return withTruncation(summary, truncated);
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
  const { server, truncated } = indexedServer(listing);
  await markServiceIndexed(env.DB, serviceId, server);
  return withTruncation(summary, truncated);
}
