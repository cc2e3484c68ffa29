import { McpError } from "@modelcontextprotocol/sdk/types.js";
import { ApiError } from "../http/errors.ts";
import { indexStatements, listTools, type IndexSummary } from "../tools/tools.store.ts";
import {
  findService,
  insertServiceStatement,
  markServiceIndexed,
  MAX_SERVICES_PER_WORKSPACE,
  servicesFull,
  upstreamTargetFor,
  type IndexedServer,
  type PendingService,
} from "./services.store.ts";
import type { ClientCapabilities, Tool } from "@modelcontextprotocol/sdk/types.js";
import type { DiscoverResult } from "@modelcontextprotocol/client";
import {
  discoverUpstream,
  listUpstreamTools,
  MAX_TOOL_LIST_BYTES,
  MAX_TOOLS_PER_SERVICE,
  MAX_UPSTREAM_RESPONSE_BYTES,
  UpstreamFailure,
  type UpstreamTarget,
} from "./upstream.ts";
import { declaring, TOOL_REQUIREMENTS, type ToolRequirement } from "./upstream.call.ts";

/** The bound each indexing failure code reports in `details.limit`. */
const LIMIT_OF: Partial<Record<UpstreamFailure["code"], number>> = {
  too_many_tools: MAX_TOOLS_PER_SERVICE,
  tool_list_too_large: MAX_TOOL_LIST_BYTES,
  upstream_response_too_large: MAX_UPSTREAM_RESPONSE_BYTES,
};

/** Turns an upstream failure during indexing into the REST error the caller sees. */
function indexingError(error: unknown): unknown {
  if (error instanceof UpstreamFailure) {
    // A 401 is for the caller to decide (OAuth discovery at connect time), not an indexing failure.
    if (error.code === "upstream_unauthorized") return error;
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

export const tooManyServices = () =>
  new ApiError("too_many_services", {
    message: `A workspace holds at most ${MAX_SERVICES_PER_WORKSPACE} services; delete one first`,
    details: { limit: MAX_SERVICES_PER_WORKSPACE },
  });

/**
 * Characters of tool definitions all of a workspace's live services may hold together: two services at the
 * per-service bound (MAX_TOOL_LIST_BYTES). Every call reads its workspace's catalog, kept per isolate within
 * 16 Mi characters for all workspaces (worker/calls/catalog.ts); a workspace past that would be read from D1
 * and parsed again on every call, in an isolate other workspaces share.
 */
export const MAX_WORKSPACE_TOOL_CHARS = 2 * MAX_TOOL_LIST_BYTES;

/**
 * Refuses a listing that would take the workspace's tool definitions past MAX_WORKSPACE_TOOL_CHARS, counting
 * every other live service's stored definitions and this listing in place of the service's own. Checked before
 * anything is written, so a refused refresh keeps the service's index as it was. `listing`: the characters of this
 * service's new definitions, as `listForEveryClient` counted them.
 */
async function assertWorkspaceRoom(env: Env, workspaceId: string, serviceId: string, listing: number): Promise<void> {
  const others =
    (await env.DB.prepare(
      `SELECT COALESCE(SUM(LENGTH(t.definition)), 0) AS chars FROM tools t JOIN services s ON s.id = t.service_id
       WHERE t.workspace_id = ? AND t.service_id != ? AND t.status != 'removed' AND s.deleted_at IS NULL`,
    )
      .bind(workspaceId, serviceId)
      .first<number>("chars")) ?? 0;
  if (others + listing <= MAX_WORKSPACE_TOOL_CHARS) return;
  throw new ApiError("workspace_tools_too_large", {
    message:
      `The workspace's services would hold ${others + listing} characters of tool definitions, over its ` +
      `${MAX_WORKSPACE_TOOL_CHARS}; remove a service or tools first`,
    details: { limit: MAX_WORKSPACE_TOOL_CHARS, otherServices: others, thisService: listing },
  });
}

/**
 * The last statement of a batch that writes a service's tools: it fails (and D1 rolls the batch back) when the
 * workspace's live tool definitions are past MAX_WORKSPACE_TOOL_CHARS once the batch's own writes are in. The check
 * before listing answers with the figures; this one holds against connects and refreshes that raced it.
 */
export function workspaceToolsGuard(db: D1Database, workspaceId: string): D1PreparedStatement {
  return db
    .prepare(
      `INSERT INTO bound_guards (bound) SELECT 'workspace_tools' WHERE (
         SELECT COALESCE(SUM(LENGTH(t.definition)), 0) FROM tools t JOIN services s ON s.id = t.service_id
         WHERE t.workspace_id = ? AND t.status != 'removed' AND s.deleted_at IS NULL) > ?`,
    )
    .bind(workspaceId, MAX_WORKSPACE_TOOL_CHARS);
}

/** A batch ended by `workspaceToolsGuard` failed on it: answered as the check before listing would have. */
async function guardedWrite<T>(env: Env, workspaceId: string, serviceId: string, listing: number, write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (error) {
    if (!String(error).includes("bound_broken")) throw error;
    await assertWorkspaceRoom(env, workspaceId, serviceId, listing);
    throw new ApiError("workspace_tools_too_large", {
      message: `The workspace's services would hold more than ${MAX_WORKSPACE_TOOL_CHARS} characters of tool definitions`,
      details: { limit: MAX_WORKSPACE_TOOL_CHARS },
    });
  }
}

/**
 * Characters of one service's instructions the gateway keeps. Each visible
 * service's text goes into every client's `initialize`, so a longer text is cut
 * here (and the index summary says `instructionsTruncated: true`).
 */
export const MAX_SERVICE_INSTRUCTIONS_CHARS = 4096;

function indexedServer(listing: { serverInfo: unknown; instructions: string | undefined; discover: DiscoverResult | null }): {
  server: IndexedServer;
  truncated: boolean;
} {
  const text = listing.instructions?.trim() || null;
  if (text === null || text.length <= MAX_SERVICE_INSTRUCTIONS_CHARS)
    return { server: { serverInfo: listing.serverInfo, instructions: text, discover: listing.discover }, truncated: false };
  // Never end on half of a surrogate pair.
  let end = MAX_SERVICE_INSTRUCTIONS_CHARS - 1;
  if (/[\uD800-\uDBFF]/.test(text.charAt(end - 1))) end--;
  return {
    server: { serverInfo: listing.serverInfo, instructions: `${text.slice(0, end)}…`, discover: listing.discover },
    truncated: true,
  };
}

const withTruncation = (summary: IndexSummary, truncated: boolean): IndexSummary =>
  truncated ? { ...summary, instructionsTruncated: true } : summary;

/**
 * Every tool the upstream lists to some client, and what a client must declare
 * to see the ones it lists only to clients with sampling, elicitation (form or
 * URL mode) or roots. The upstream is listed as a client without them and as
 * one with all of them; only when the second shows more tools is it listed
 * once per capability, to find the one each extra tool needs (all of them when
 * no single one shows it).
 * The bounds hold for the tools of all listings together. First the upstream
 * is asked `server/discover`: one that offers 2026-07-28 is listed, and
 * afterwards called, in that revision (the result is stored with the service).
 */
async function listForEveryClient(stored: UpstreamTarget) {
  const discover = await discoverUpstream(stored);
  // What the upstream answers now decides, not what it answered at the last indexing.
  const target: UpstreamTarget = { ...stored, discover: discover ?? undefined };
  const [plain, capable] = await Promise.all([listUpstreamTools(target), listUpstreamTools(target, declaring(TOOL_REQUIREMENTS))]);
  const plainNames = new Set(plain.tools.map((tool) => tool.name));
  const extra = capable.tools.filter((tool) => !plainNames.has(tool.name));
  const requirements = new Map<string, ToolRequirement[]>();
  if (extra.length) {
    const singles = await Promise.all(
      TOOL_REQUIREMENTS.map(async (name) => {
        const listing = await listUpstreamTools(target, declaring([name]));
        return { name, tools: new Set(listing.tools.map((tool) => tool.name)) };
      }),
    );
    for (const tool of extra) {
      const single = singles.find((listing) => listing.tools.has(tool.name));
      requirements.set(tool.name, single ? [single.name] : [...TOOL_REQUIREMENTS]);
    }
  }
  const tools: Tool[] = [...plain.tools, ...extra];
  if (tools.length > MAX_TOOLS_PER_SERVICE) {
    throw new UpstreamFailure("too_many_tools", `The upstream lists more than ${MAX_TOOLS_PER_SERVICE} tools`);
  }
  // Characters of the listing's definitions: bounded per service here, and per workspace by assertWorkspaceRoom.
  const chars = tools.reduce((sum, tool) => sum + JSON.stringify(tool).length, 0);
  if (chars > MAX_TOOL_LIST_BYTES) {
    throw new UpstreamFailure("tool_list_too_large", `The upstream's tool definitions exceed ${MAX_TOOL_LIST_BYTES} bytes`);
  }
  return { tools, chars, requirements, serverInfo: plain.serverInfo, instructions: plain.instructions, discover };
}

/** Indexes a new service and stores it with its tools in one batch: nothing is kept if indexing fails. */
export async function indexNewService(env: Env, service: PendingService): Promise<IndexSummary> {
  const target = await upstreamTargetFor(env, service);
  const listing = await listForEveryClient(target).catch((error: unknown) => {
    throw indexingError(error);
  });
  await assertWorkspaceRoom(env, service.workspaceId, service.id, listing.chars);
  const { statements, summary } = await indexStatements(env.DB, service.workspaceId, service.id, listing.tools, [], {
    requirements: listing.requirements,
    newTools: service.reviewInitialTools ? "review_required" : "active",
    serviceSlug: service.slug,
  });
  const { server, truncated } = indexedServer(listing);
  let inserted: D1Result[];
  try {
    inserted = await guardedWrite(env, service.workspaceId, service.id, listing.chars, () =>
      env.DB.batch([insertServiceStatement(env.DB, service, server), ...statements, workspaceToolsGuard(env.DB, service.workspaceId)]),
    );
  } catch (error) {
    if (error instanceof ApiError) throw error;
    // The service insert counts the workspace's services itself; when another connect filled the last place since
    // the route's check, it inserts nothing and the tools, whose service is then missing, fail the whole batch.
    if (await servicesFull(env.DB, service.workspaceId)) throw tooManyServices();
    throw error;
  }
  if (inserted[0]?.meta.changes !== 1) throw tooManyServices();
  return withTruncation(summary, truncated);
}

/**
 * Re-indexes a stored service through `target` (its own, or one carrying an OAuth token). A service indexed
 * before has every tool the upstream adds now reviewed before it reaches any agent; one stored but never indexed
 * (an OAuth service's first listing, after its authorization) is newly connected, and its setting decides.
 */
export async function reindexService(env: Env, workspaceId: string, serviceId: string, target: UpstreamTarget): Promise<IndexSummary> {
  const listing = await listForEveryClient(target).catch((error: unknown) => {
    throw indexingError(error);
  });
  await assertWorkspaceRoom(env, workspaceId, serviceId, listing.chars);
  const [existing, service] = await Promise.all([
    listTools(env.DB, workspaceId, { serviceId }),
    findService(env.DB, workspaceId, serviceId),
  ]);
  const firstIndexing = service?.indexedAt === null;
  const { statements, summary } = await indexStatements(env.DB, workspaceId, serviceId, listing.tools, existing, {
    requirements: listing.requirements,
    newTools: firstIndexing && !service.reviewInitialTools ? "active" : "review_required",
    serviceSlug: service?.slug ?? "",
  });
  if (statements.length) {
    await guardedWrite(env, workspaceId, serviceId, listing.chars, () =>
      env.DB.batch([...statements, workspaceToolsGuard(env.DB, workspaceId)]),
    );
  }
  const { server, truncated } = indexedServer(listing);
  await markServiceIndexed(env.DB, serviceId, server);
  return withTruncation(summary, truncated);
}
