import type { WaitUntil } from "../lib/after-response.ts";
import { WeightedLru } from "../lib/lru.ts";
import { isolateLeases, type HeldLease, type LeaseHolder } from "../leases/holder.ts";
import { workspaceClient } from "../workspaces/workspace.client.ts";
import type { Discovery, PolicyMode } from "../policy/profiles.store.ts";
import type { ServiceContentModes } from "../policy/service-policies.store.ts";
import type { RiskRules } from "../policy/risk.ts";
import type { ToolDeployments } from "./deployment.ts";
import { awaitsAuthorization, storedTarget, upstreamTargetFor } from "../services/services.store.ts";
import { serviceOAuth, type OAuthColumns, type ServiceOAuth } from "../upstream-auth/oauth.store.ts";
import type { UpstreamTarget } from "../services/upstream.ts";
import type { ToolRequirement } from "../services/upstream.call.ts";
import type { SchemaBoundBreach } from "../lib/schema-bounds.ts";
import { definitionBreach, publicToolName, type ToolDefinition, type ToolStatus } from "../tools/tools.store.ts";
import { toolNameProblem } from "../tools/tool-name.ts";

/** What the client endpoint needs about one tool to list it or decide a call. */
export interface CatalogTool {
  uid: string;
  publicName: string;
  name: string;
  status: ToolStatus;
  /** No definition of the tool was ever approved: a tool in review is a new one, not a changed one. */
  neverApproved: boolean;
  definition: ToolDefinition;
  definitionHash: string;
  projection: string[] | null;
  serviceId: string;
  serviceRequiresAuthorization: boolean;
  /** The validation bound the tool's upstream input or output schema breaks: every call is refused. */
  schemaBreach: SchemaBoundBreach | null;
  /** Why clients cannot be shown the tool's public name (tools/tool-name.ts): hidden, every call refused. */
  nameProblem: string | null;
  /** Hook-log details may be stored: the service captures payloads and the workspace policy allows it. */
  captureDetails: boolean;
  /** What a client must declare to see and call the tool; null: any client. */
  clientCapabilities: ToolRequirement[] | null;
}

export interface CatalogProfile {
  defaultMode: PolicyMode;
  /** Which tools /mcp offers the profile's clients: the direct tools, Code Mode's, or both. */
  discovery: Discovery;
  overrides: Map<string, PolicyMode>;
  riskRules: RiskRules;
  /** serviceId → the profile's modes for the service's resources and prompts (absent: from `defaultMode`). */
  serviceModes: Map<string, ServiceContentModes>;
}

/** One live service, as resources, prompts and instructions need it. */
export interface CatalogService {
  id: string;
  slug: string;
  instructions: string | null;
  requiresAuthorization: boolean;
  /** The service's upstream OAuth (mode, server, sealed client secret); null when it has none. */
  oauth: ServiceOAuth | null;
}

export interface Catalog {
  tools: Map<string, CatalogTool>;
  /** Hook pointers of every tool that has one, as the lease the catalog was read under carries them. */
  deployments: Map<string, ToolDeployments>;
  /** profileId → default mode, per-tool overrides and risk rules. */
  profiles: Map<string, CatalogProfile>;
  /** serviceId → how to reach it; every live service has one, with or without tools. */
  targets: Map<string, UpstreamTarget>;
  /** slug → live service, in slug order. */
  services: Map<string, CatalogService>;
  /** The same services by id. */
  servicesById: Map<string, CatalogService>;
  /** The lease the catalog was read under: while it holds, the catalog is the workspace's current state. */
  lease: CatalogLease;
  /** Characters of the stored tool definitions, policies and services it was read from: its weight in the cache. */
  chars: number;
}

export interface CatalogLease {
  readonly version: number;
  /** The pre-dispatch recheck, without I/O: the lease (or a renewal on the same version) is valid past the margin. */
  holds(): boolean;
  /** The catalog under a new grant (one round trip): this same object while the version has not moved. */
  renew(env: Env): Promise<Catalog>;
}

interface CachedCatalog {
  token: string;
  catalog: Promise<Catalog>;
  /** The catalog once read. */
  read?: Catalog;
}

/**
 * Each isolate keeps one catalog per workspace, read from D1 after the lease
 * it belongs to was granted and used for as long as that lease's version
 * lasts (docs/leases.md): a change anywhere moves the version, and the
 * change's API answer waits until no isolate can still act on an older one.
 */
export class CatalogCache {
  readonly #byWorkspace: WeightedLru<CachedCatalog>;

  constructor(
    readonly leases: LeaseHolder,
    readonly maxWorkspaces = 1_000,
    /** Tenants choose how many tools and how large their schemas are, so the count alone does not bound memory. */
    readonly maxChars = 16 * 1024 * 1024,
  ) {
    this.#byWorkspace = new WeightedLru(maxWorkspaces, maxChars);
  }

  /** Catalogs held, and their characters. */
  get size(): number {
    return this.#byWorkspace.size;
  }

  get chars(): number {
    return this.#byWorkspace.weight;
  }

  /** The workspace's catalog under a valid lease; a lease past half its life is renewed after the response. */
  async load(env: Env, workspaceId: string, waitUntil?: WaitUntil): Promise<Catalog> {
    return this.#under(env, await this.leases.lease(env, workspaceId, waitUntil));
  }

  #under(env: Env, lease: HeldLease): Promise<Catalog> {
    const workspaceId = lease.workspaceId;
    const cached = this.#byWorkspace.get(workspaceId);
    if (cached?.token === lease.token) return cached.catalog;
    const entry: CachedCatalog = { token: lease.token, catalog: this.#read(env, lease) };
    // Weighed once read (a catalog larger than maxChars alone is then let go: each call reads it again).
    this.#byWorkspace.set(workspaceId, entry, 0);
    entry.catalog.then(
      (catalog) => {
        entry.read = catalog;
        if (this.#byWorkspace.peek(workspaceId) === entry) this.#byWorkspace.set(workspaceId, entry, catalog.chars);
      },
      () => {
        if (this.#byWorkspace.peek(workspaceId) === entry) this.#byWorkspace.delete(workspaceId);
      },
    );
    return entry.catalog;
  }

  /** The last catalog read for the workspace, valid or not: only to say how a call without a lease is refused. */
  lastRead(workspaceId: string): Catalog | undefined {
    return this.#byWorkspace.peek(workspaceId)?.read;
  }

  async #read(env: Env, lease: HeldLease): Promise<Catalog> {
    const catalog = await readCatalog(env, lease.workspaceId, {
      version: lease.version,
      holds: () => this.leases.holds(lease),
      renew: async (current) => this.#under(current, await this.leases.renew(current, lease.workspaceId)),
    });
    catalog.deployments = new Map(lease.pointers.map(({ toolUid, ...pointers }) => [toolUid, pointers]));
    return catalog;
  }
}

/**
 * A change to what the catalog holds made outside a change window (an upstream OAuth callback, a grant that
 * ended during a call): moves the workspace's lease version, so every isolate reads it again once its lease
 * runs out (within LEASE_MS + SKEW_MARGIN_MS); this isolate gives its own lease up at once.
 */
export async function invalidateCatalog(env: Env, workspaceId: string): Promise<void> {
  isolateLeases.relinquish(workspaceId);
  const objects = workspaceClient(env, workspaceId);
  await objects.endChange(await objects.beginChange(), isolateLeases.id);
}

/** This isolate's catalogs, on this isolate's leases. */
export const isolateCatalogs = new CatalogCache(isolateLeases);

export function loadCatalog(env: Env, workspaceId: string, waitUntil: WaitUntil): Promise<Catalog> {
  return isolateCatalogs.load(env, workspaceId, waitUntil);
}

interface ServiceRow extends OAuthColumns {
  id: string;
  slug: string;
  url: string;
  secret_query: string | null;
  secret_headers: string | null;
  instructions: string | null;
  discover: string | null;
  requires_authorization: number;
}

interface CatalogRow extends Pick<OAuthColumns, "authorization_kind" | "oauth_status"> {
  uid: string;
  name: string;
  status: ToolStatus;
  never_approved: number;
  definition: string;
  definition_hash: string;
  projection: string | null;
  client_capabilities: string | null;
  service_id: string;
  slug: string;
  requires_authorization: number;
  payload_capture: number;
  detail_policy: "metadata" | "payloads";
}

async function readCatalog(env: Env, workspaceId: string, lease: CatalogLease): Promise<Catalog> {
  const [tools, profiles, policies, services, serviceModes] = await env.DB.batch([
    env.DB.prepare(
      `SELECT t.uid, t.name, t.status, t.approved_hash IS NULL AS never_approved, t.definition, t.definition_hash, t.projection,
              t.client_capabilities, t.service_id,
              s.slug, s.requires_authorization, s.authorization_kind, s.oauth_status, s.payload_capture, w.detail_policy
       FROM tools t JOIN services s ON s.id = t.service_id JOIN workspaces w ON w.id = t.workspace_id
       WHERE t.workspace_id = ? AND s.deleted_at IS NULL AND t.status != 'removed'`,
    ).bind(workspaceId),
    env.DB.prepare("SELECT id, default_mode, risk_rules, discovery FROM access_profiles WHERE workspace_id = ?").bind(workspaceId),
    env.DB.prepare("SELECT profile_id, tool_uid, mode FROM tool_policies WHERE workspace_id = ?").bind(workspaceId),
    env.DB.prepare(
      `SELECT * FROM services
       WHERE workspace_id = ? AND deleted_at IS NULL ORDER BY slug`,
    ).bind(workspaceId),
    env.DB.prepare("SELECT profile_id, service_id, resources, prompts FROM service_policies WHERE workspace_id = ?").bind(workspaceId),
  ]);

  const catalog: Catalog = {
    tools: new Map(),
    profiles: new Map(),
    targets: new Map(),
    services: new Map(),
    servicesById: new Map(),
    deployments: new Map(),
    lease,
    chars: 0,
  };
  for (const row of (tools?.results ?? []) as CatalogRow[]) {
    const publicName = publicToolName(row.slug, row.name);
    const definition = JSON.parse(row.definition) as ToolDefinition;
    catalog.chars += row.definition.length + (row.projection?.length ?? 0);
    catalog.tools.set(publicName, {
      uid: row.uid,
      publicName,
      name: row.name,
      status: row.status,
      neverApproved: row.never_approved === 1,
      definition,
      definitionHash: row.definition_hash,
      schemaBreach: definitionBreach(definition),
      nameProblem: toolNameProblem(row.name, publicName),
      projection: row.projection ? (JSON.parse(row.projection) as string[]) : null,
      serviceId: row.service_id,
      serviceRequiresAuthorization: awaitsAuthorization(row),
      captureDetails: row.payload_capture === 1 && row.detail_policy === "payloads",
      clientCapabilities: row.client_capabilities ? (JSON.parse(row.client_capabilities) as ToolRequirement[]) : null,
    });
  }
  for (const row of (services?.results ?? []) as ServiceRow[]) {
    // Everything kept of the service counts: its upstream OAuth server (scopes and auth methods are the upstream's
    // metadata's, hundreds of KiB) and its stored `server/discover` result were kept unweighed (round 6, finding 5).
    catalog.chars +=
      row.url.length +
      (row.secret_query?.length ?? 0) +
      (row.instructions?.length ?? 0) +
      (row.secret_headers?.length ?? 0) +
      (row.discover?.length ?? 0) +
      (row.oauth_server?.length ?? 0) +
      (row.oauth_pending_reason?.length ?? 0);
    const service: CatalogService = {
      id: row.id,
      slug: row.slug,
      instructions: row.instructions,
      requiresAuthorization: awaitsAuthorization(row),
      oauth: serviceOAuth(row),
    };
    catalog.services.set(row.slug, service);
    catalog.servicesById.set(row.id, service);
    catalog.targets.set(row.id, await upstreamTargetFor(env, storedTarget(row)));
  }
  for (const row of (profiles?.results ?? []) as { id: string; default_mode: PolicyMode; risk_rules: string; discovery: Discovery }[]) {
    catalog.chars += row.risk_rules.length;
    catalog.profiles.set(row.id, {
      defaultMode: row.default_mode,
      discovery: row.discovery,
      overrides: new Map(),
      riskRules: JSON.parse(row.risk_rules) as RiskRules,
      serviceModes: new Map(),
    });
  }
  for (const row of (policies?.results ?? []) as { profile_id: string; tool_uid: string; mode: PolicyMode }[]) {
    catalog.profiles.get(row.profile_id)?.overrides.set(row.tool_uid, row.mode);
  }
  for (const row of (serviceModes?.results ?? []) as ({ profile_id: string; service_id: string } & ServiceContentModes)[]) {
    catalog.profiles.get(row.profile_id)?.serviceModes.set(row.service_id, { resources: row.resources, prompts: row.prompts });
  }
  return catalog;
}
