import { nowIso } from "../lib/ids.ts";
import type { PolicyMode } from "./profiles.store.ts";

/** Resources and prompts are read, never called: there is no one-call approval for them, only allow or block. */
export type ContentMode = "allow" | "block";

/** A profile's modes for one service's resources and prompts. */
export interface ServiceContentModes {
  resources: ContentMode;
  prompts: ContentMode;
}

export interface ServicePolicy extends ServiceContentModes {
  profileId: string;
  serviceId: string;
  updatedBy: string;
  updatedAt: string;
}

/**
 * A profile's modes for a service without its own row: those of its default
 * mode, where `approval` falls closed to `block` (a read cannot wait for a human).
 */
export function defaultContentModes(defaultMode: PolicyMode): ServiceContentModes {
  const mode: ContentMode = defaultMode === "allow" ? "allow" : "block";
  return { resources: mode, prompts: mode };
}

/** Sets the given kinds; a kind left out keeps its current mode (or the profile default's on the first write). */
export async function setServicePolicy(
  db: D1Database,
  workspaceId: string,
  input: {
    profileId: string;
    serviceId: string;
    resources?: ContentMode;
    prompts?: ContentMode;
    updatedBy: string;
    defaults: ServiceContentModes;
  },
): Promise<ServicePolicy> {
  const row = await db
    .prepare(
      `INSERT INTO service_policies (profile_id, service_id, workspace_id, resources, prompts, updated_by, updated_at)
       VALUES (?1, ?2, ?3, COALESCE(?4, ?5), COALESCE(?6, ?7), ?8, ?9)
       ON CONFLICT (profile_id, service_id) DO UPDATE SET
         resources = COALESCE(?4, resources), prompts = COALESCE(?6, prompts), updated_by = ?8, updated_at = ?9
       RETURNING ${COLUMNS}`,
    )
    .bind(
      input.profileId,
      input.serviceId,
      workspaceId,
      input.resources ?? null,
      input.defaults.resources,
      input.prompts ?? null,
      input.defaults.prompts,
      input.updatedBy,
      nowIso(),
    )
    .first<ServicePolicy>();
  if (!row) throw new Error("service policy upsert returned no row");
  return row;
}

const COLUMNS = "profile_id AS profileId, service_id AS serviceId, resources, prompts, updated_by AS updatedBy, updated_at AS updatedAt";

export async function listServicePolicies(db: D1Database, workspaceId: string, serviceId: string): Promise<ServicePolicy[]> {
  const { results } = await db
    .prepare(`SELECT ${COLUMNS} FROM service_policies WHERE workspace_id = ? AND service_id = ? ORDER BY profile_id`)
    .bind(workspaceId, serviceId)
    .all<ServicePolicy>();
  return results;
}
