import type { DiscoverResult } from "@modelcontextprotocol/client";
import { newId, nowIso } from "../lib/ids.ts";
import { openHeaders, openSecret, sealHeaders, sealSecret } from "./secrets.ts";
import type { UpstreamTarget } from "./upstream.ts";
import { parseAllowList } from "./url-guard.ts";
import { sha256Hex } from "../lib/crypto.ts";
import { serviceOAuth, type OAuthColumns, type PendingReason, type ServiceOAuth } from "../upstream-auth/oauth.store.ts";
import type { ClientRegistration } from "../upstream-auth/oauth.server.ts";

/** How the gateway authenticates to the service, as the API shows it: never a secret. */
export type ServiceAuthorization =
  | { kind: "none" }
  | {
      kind: "oauth";
      mode: "shared" | "per_user";
      status: "pending" | "authorized";
      pendingReason: PendingReason | null;
      resource: string;
      issuer: string;
      scopes: string[];
      registration: ClientRegistration;
      clientId: string;
      revocation: boolean;
      authorizedBy: string | null;
      authorizedAt: string | null;
    };

function authorizationView(oauth: ServiceOAuth | null): ServiceAuthorization {
  if (!oauth) return { kind: "none" };
  return {
    kind: "oauth",
    mode: oauth.mode,
    status: oauth.status,
    pendingReason: oauth.pendingReason,
    resource: oauth.server.resource,
    issuer: oauth.server.metadata.issuer,
    scopes: oauth.server.scopes,
    registration: oauth.server.registration,
    clientId: oauth.server.clientId,
    revocation: !!oauth.server.metadata.revocation_endpoint,
    authorizedBy: oauth.authorizedBy,
    authorizedAt: oauth.authorizedAt,
  };
}

/**
 * Whether calls are refused for want of upstream authorization: an OAuth
 * service not (or no longer) authorized, or a hold set by hand before upstream
 * OAuth existed (`requires_authorization`, which only PATCH can lift).
 */
export const awaitsAuthorization = (row: { requires_authorization: number } & Pick<OAuthColumns, "authorization_kind" | "oauth_status">) =>
  row.requires_authorization === 1 || (row.authorization_kind === "oauth" && row.oauth_status !== "authorized");

/** A service as the API shows it: secret header values never leave the store. */
export interface ServiceRecord {
  id: string;
  slug: string;
  /** Without its query: the query's values are as secret as the headers'. */
  url: string;
  secretQueryNames: string[];
  secretHeaderNames: string[];
  requiresAuthorization: boolean;
  authorization: ServiceAuthorization;
  payloadCapture: boolean;
  /** Whether the tools of the first indexing started in review; tools a refresh adds always do. */
  reviewInitialTools: boolean;
  serverInfo: unknown;
  /** The revision spoken to the upstream (services.discover). */
  protocol: "2026-07-28" | "2025-era";
  indexedAt: string | null;
  createdAt: string;
  deletedAt: string | null;
}

interface ServiceRow extends OAuthColumns {
  id: string;
  workspace_id: string;
  slug: string;
  url: string;
  secret_headers: string | null;
  secret_header_names: string;
  /** The URL's query, sealed (migration 0021); null without one, or on a row from before that still holds it in `url`. */
  secret_query: string | null;
  secret_query_names: string | null;
  requires_authorization: number;
  payload_capture: number;
  review_initial_tools: number;
  server_info: string | null;
  discover: string | null;
  indexed_at: string | null;
  created_at: string;
  deleted_at: string | null;
}

/**
 * A service URL as stored and shown, and its query apart. Hosted MCP servers commonly take their key in the query
 * (`?api_key=…`), so a query is kept like secret headers: sealed at rest, its names shown, its values never. The
 * fragment goes too; no request carries it.
 */
function splitServiceUrl(url: string): { publicUrl: string; query: string | null } {
  const parsed = new URL(url);
  if (!parsed.search) return { publicUrl: url.split("#")[0]!, query: null };
  return { publicUrl: url.slice(0, url.indexOf("?")), query: parsed.search.slice(1) };
}

/**
 * The names of the query's `name=value` parameters. A part without `=` (`?sk-…`, `?a&b`) is all value, its text the
 * secret itself: it is not named.
 */
const queryNames = (query: string | null) =>
  query ? [...new Set(query.split("&").flatMap((part) => (part.includes("=") ? [...new URLSearchParams(part).keys()] : [])))].sort() : [];

/** The query's envelope is bound to its service and to being a query, so no other sealed value opens in its place. */
const queryBinding = (serviceId: string) => `${serviceId}:query`;

/** A URL's public part and its query sealed to `serviceId`, as the columns hold them. */
async function sealedUrl(env: Env, serviceId: string, url: string) {
  const { publicUrl, query } = splitServiceUrl(url);
  return {
    url: publicUrl,
    sealedQuery: query === null ? null : await sealSecret(query, queryBinding(serviceId), env.SECRETS_KEY),
    queryNames: JSON.stringify(queryNames(query)),
  };
}

const toRecord = (row: ServiceRow): ServiceRecord => ({
  id: row.id,
  slug: row.slug,
  // A row from before migration 0021 still holds its query in `url`: shown without it all the same.
  url: splitServiceUrl(row.url).publicUrl,
  secretQueryNames: row.secret_query_names ? (JSON.parse(row.secret_query_names) as string[]) : queryNames(splitServiceUrl(row.url).query),
  secretHeaderNames: JSON.parse(row.secret_header_names) as string[],
  requiresAuthorization: awaitsAuthorization(row),
  authorization: authorizationView(serviceOAuth(row)),
  payloadCapture: row.payload_capture === 1,
  reviewInitialTools: row.review_initial_tools === 1,
  serverInfo: row.server_info ? (JSON.parse(row.server_info) as unknown) : null,
  protocol: row.discover ? "2026-07-28" : "2025-era",
  indexedAt: row.indexed_at,
  createdAt: row.created_at,
  deletedAt: row.deleted_at,
});

export interface NewService {
  slug: string;
  url: string;
  headers: Record<string, string>;
  payloadCapture: boolean;
  reviewInitialTools: boolean;
}

/** A service not yet stored: it is only written once its first indexing succeeded. */
export interface PendingService extends NewService {
  id: string;
  workspaceId: string;
  /** Without its query, which is in `sealedQuery`. */
  url: string;
  sealedQuery: string | null;
  /** The query's parameter names, as JSON. */
  queryNames: string;
  sealedHeaders: string | null;
}

export async function prepareService(env: Env, workspaceId: string, input: NewService): Promise<PendingService> {
  const id = newId("svc");
  const sealedHeaders = Object.keys(input.headers).length ? await sealHeaders(input.headers, id, env.SECRETS_KEY) : null;
  return { ...input, id, workspaceId, ...(await sealedUrl(env, id, input.url)), sealedHeaders };
}

/** What one indexing pass learned about the upstream server itself. */
export interface IndexedServer {
  serverInfo: unknown;
  /** The upstream's `initialize` instructions, already bounded; null when it sent none. */
  instructions: string | null;
  /** Its `server/discover` result when it speaks 2026-07-28 (upstream.modern.ts); null for a 2025-era upstream. */
  discover: DiscoverResult | null;
}

/**
 * Live services a workspace holds. Every call reads its workspace's catalog (every live service's tools, targets
 * and OAuth settings), so how many a workspace connects is a cost every call in the isolate shares.
 */
export const MAX_SERVICES_PER_WORKSPACE = 50;

/** Inserts a service only while its workspace holds fewer than MAX_SERVICES_PER_WORKSPACE live ones, in the same statement. */
const UNDER_SERVICE_LIMIT = `WHERE (SELECT COUNT(*) FROM services WHERE workspace_id = ?2 AND deleted_at IS NULL) < ${MAX_SERVICES_PER_WORKSPACE}`;

export async function servicesFull(db: D1Database, workspaceId: string): Promise<boolean> {
  const live = await db
    .prepare("SELECT COUNT(*) AS live FROM services WHERE workspace_id = ? AND deleted_at IS NULL")
    .bind(workspaceId)
    .first<number>("live");
  return (live ?? 0) >= MAX_SERVICES_PER_WORKSPACE;
}

export function insertServiceStatement(db: D1Database, service: PendingService, server: IndexedServer): D1PreparedStatement {
  const now = nowIso();
  return db
    .prepare(
      `INSERT INTO services (id, workspace_id, slug, url, secret_query, secret_query_names, secret_headers, secret_header_names,
         requires_authorization, payload_capture, review_initial_tools, server_info, instructions, discover, indexed_at, created_at)
       SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, 0, ?9, ?10, ?11, ?12, ?13, ?14, ?15 ${UNDER_SERVICE_LIMIT}`,
    )
    .bind(
      service.id,
      service.workspaceId,
      service.slug,
      service.url,
      service.sealedQuery,
      service.queryNames,
      service.sealedHeaders,
      JSON.stringify(Object.keys(service.headers).sort()),
      service.payloadCapture ? 1 : 0,
      service.reviewInitialTools ? 1 : 0,
      JSON.stringify(server.serverInfo ?? null),
      server.instructions,
      server.discover ? JSON.stringify(server.discover) : null,
      now,
      now,
    );
}

/**
 * Stores a service whose upstream asked for OAuth: pending, with nothing
 * indexed, until an admin authorizes it. The client secret is sealed to the service.
 * False, storing nothing, when the workspace already holds MAX_SERVICES_PER_WORKSPACE.
 */
export async function insertOAuthService(
  db: D1Database,
  service: PendingService,
  oauth: { mode: "shared" | "per_user"; server: unknown; sealedClientSecret: string | null },
): Promise<boolean> {
  const inserted = await db
    .prepare(
      `INSERT INTO services (id, workspace_id, slug, url, secret_query, secret_query_names, secret_headers, secret_header_names,
         requires_authorization, payload_capture, review_initial_tools, authorization_kind, oauth_mode, oauth_status,
         oauth_pending_reason, oauth_server, oauth_client_secret, created_at)
       SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, 0, ?9, ?10, 'oauth', ?11, 'pending', ?12, ?13, ?14, ?15 ${UNDER_SERVICE_LIMIT}`,
    )
    .bind(
      service.id,
      service.workspaceId,
      service.slug,
      service.url,
      service.sealedQuery,
      service.queryNames,
      service.sealedHeaders,
      JSON.stringify(Object.keys(service.headers).sort()),
      service.payloadCapture ? 1 : 0,
      service.reviewInitialTools ? 1 : 0,
      oauth.mode,
      JSON.stringify({ code: "connected", message: "Connected; an admin must authorize it", at: nowIso() }),
      JSON.stringify(oauth.server),
      oauth.sealedClientSecret,
      nowIso(),
    )
    .run();
  // Nothing inserted: the workspace reached MAX_SERVICES_PER_WORKSPACE meanwhile.
  return inserted.meta.changes === 1;
}

export async function slugTaken(db: D1Database, workspaceId: string, slug: string): Promise<boolean> {
  const row = await db
    .prepare("SELECT 1 AS taken FROM services WHERE workspace_id = ? AND slug = ? AND deleted_at IS NULL")
    .bind(workspaceId, slug)
    .first();
  return row !== null;
}

async function findRow(db: D1Database, workspaceId: string, serviceId: string): Promise<ServiceRow | null> {
  return db.prepare("SELECT * FROM services WHERE workspace_id = ? AND id = ?").bind(workspaceId, serviceId).first<ServiceRow>();
}

export async function findService(db: D1Database, workspaceId: string, serviceId: string): Promise<ServiceRecord | null> {
  const row = await findRow(db, workspaceId, serviceId);
  return row ? toRecord(row) : null;
}

export async function listServices(db: D1Database, workspaceId: string, includeDeleted: boolean): Promise<ServiceRecord[]> {
  const { results } = await db
    .prepare(`SELECT * FROM services WHERE workspace_id = ? ${includeDeleted ? "" : "AND deleted_at IS NULL"} ORDER BY slug, created_at`)
    .bind(workspaceId)
    .all<ServiceRow>();
  return results.map(toRecord);
}

export interface ServiceChanges {
  url?: string;
  headers?: Record<string, string>;
  /** Only `false`: lifts a hold set by hand before upstream OAuth; nothing sets one any more. */
  requiresAuthorization?: false;
  payloadCapture?: boolean;
}

export async function updateService(
  env: Env,
  workspaceId: string,
  serviceId: string,
  changes: ServiceChanges,
): Promise<ServiceRecord | null> {
  const row = await findRow(env.DB, workspaceId, serviceId);
  if (!row || row.deleted_at) return null;
  const sealed =
    changes.headers === undefined
      ? row.secret_headers
      : Object.keys(changes.headers).length
        ? await sealHeaders(changes.headers, serviceId, env.SECRETS_KEY)
        : null;
  const names = changes.headers === undefined ? row.secret_header_names : JSON.stringify(Object.keys(changes.headers).sort());
  // A new URL replaces the query with its own (or none); a row from before migration 0021 has its query sealed now.
  const url =
    changes.url !== undefined || row.secret_query_names === null
      ? await sealedUrl(env, serviceId, changes.url ?? row.url)
      : { url: row.url, sealedQuery: row.secret_query, queryNames: row.secret_query_names };
  const updated = await env.DB.prepare(
    `UPDATE services SET url = ?, secret_query = ?, secret_query_names = ?, secret_headers = ?, secret_header_names = ?,
       requires_authorization = ?, payload_capture = ?
     WHERE workspace_id = ? AND id = ? RETURNING *`,
  )
    .bind(
      url.url,
      url.sealedQuery,
      url.queryNames,
      sealed,
      names,
      changes.requiresAuthorization === false ? 0 : row.requires_authorization,
      (changes.payloadCapture ?? row.payload_capture === 1) ? 1 : 0,
      workspaceId,
      serviceId,
    )
    .first<ServiceRow>();
  return updated ? toRecord(updated) : null;
}

export async function markServiceIndexed(db: D1Database, serviceId: string, server: IndexedServer): Promise<void> {
  await db
    .prepare("UPDATE services SET server_info = ?, instructions = ?, discover = ?, indexed_at = ? WHERE id = ?")
    .bind(
      JSON.stringify(server.serverInfo ?? null),
      server.instructions,
      server.discover ? JSON.stringify(server.discover) : null,
      nowIso(),
      serviceId,
    )
    .run();
}

export async function softDeleteService(db: D1Database, workspaceId: string, serviceId: string): Promise<boolean> {
  const result = await db
    .prepare("UPDATE services SET deleted_at = ? WHERE workspace_id = ? AND id = ? AND deleted_at IS NULL")
    .bind(nowIso(), workspaceId, serviceId)
    .run();
  return result.meta.changes === 1;
}

/** A service as its row (or a pending service) keeps what reaching it takes. */
export interface StoredTarget {
  id: string;
  url: string;
  sealedQuery: string | null;
  sealedHeaders: string | null;
  discover?: string | null;
}

export const storedTarget = (row: Pick<ServiceRow, "id" | "url" | "secret_query" | "secret_headers" | "discover">): StoredTarget => ({
  id: row.id,
  url: row.url,
  sealedQuery: row.secret_query,
  sealedHeaders: row.secret_headers,
  discover: row.discover,
});

/** Everything needed to reach the service, with its URL's query and its secret headers opened. */
export async function upstreamTargetFor(env: Env, service: StoredTarget): Promise<UpstreamTarget> {
  const headers = service.sealedHeaders ? await openHeaders(service.sealedHeaders, service.id, env.SECRETS_KEY) : {};
  const query = service.sealedQuery ? await openSecret(service.sealedQuery, queryBinding(service.id), env.SECRETS_KEY) : null;
  const discover = service.discover ? (JSON.parse(service.discover) as DiscoverResult) : undefined;
  const sealed = `${service.url}\n${service.sealedQuery ?? ""}\n${service.sealedHeaders ?? ""}`;
  return {
    // The revision is part of the key: a re-indexing that finds another one leaves no client of the old behind.
    cacheKey: `${service.id}:${discover ? "2026" : "2025"}:${await sha256Hex(sealed)}`,
    url: query === null ? service.url : `${service.url}?${query}`,
    headers,
    allowList: parseAllowList(env.DEV_ALLOWED_HOSTS),
    ...(discover ? { discover } : {}),
  };
}

/** A live service's target and OAuth settings (null without OAuth); null when the service does not exist or was deleted. */
export async function storedUpstreamTarget(
  env: Env,
  workspaceId: string,
  serviceId: string,
): Promise<{ target: UpstreamTarget; oauth: ServiceOAuth | null; slug: string } | null> {
  const row = await findRow(env.DB, workspaceId, serviceId);
  if (!row || row.deleted_at) return null;
  const target = await upstreamTargetFor(env, storedTarget(row));
  return { target, oauth: serviceOAuth(row), slug: row.slug };
}
