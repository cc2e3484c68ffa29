import { newId, nowIso } from "../lib/ids.ts";
import type { RiskRules } from "./risk.ts";

export type PolicyMode = "allow" | "block" | "approval";

/** How a profile's clients discover tools on /mcp: each as an MCP tool, through Code Mode, or both. */
export type Discovery = "direct" | "code" | "both";

export interface ProfileRecord {
  id: string;
  name: string;
  defaultMode: PolicyMode;
  riskRules: RiskRules;
  discovery: Discovery;
  createdAt: string;
  updatedBy: string | null;
  updatedAt: string | null;
}

type ProfileRow = Omit<ProfileRecord, "riskRules"> & { riskRules: string };

const COLUMNS =
  "id, name, default_mode AS defaultMode, risk_rules AS riskRules, discovery, created_at AS createdAt, updated_by AS updatedBy, updated_at AS updatedAt";

const toRecord = (row: ProfileRow): ProfileRecord => ({ ...row, riskRules: JSON.parse(row.riskRules) as RiskRules });

export async function findProfile(db: D1Database, workspaceId: string, profileId: string): Promise<ProfileRecord | null> {
  const row = await db
    .prepare(`SELECT ${COLUMNS} FROM access_profiles WHERE workspace_id = ? AND id = ?`)
    .bind(workspaceId, profileId)
    .first<ProfileRow>();
  return row ? toRecord(row) : null;
}

export async function listProfiles(db: D1Database, workspaceId: string): Promise<ProfileRecord[]> {
  const { results } = await db
    .prepare(`SELECT ${COLUMNS} FROM access_profiles WHERE workspace_id = ? ORDER BY name`)
    .bind(workspaceId)
    .all<ProfileRow>();
  return results.map(toRecord);
}

/**
 * Access profiles one workspace may hold. Every view of policy is tools × profiles (the console's matrix,
 * `GET …/policy/matrix`), so this bounds that product per tool; documented in docs/limits.md.
 */
export const MAX_PROFILES = 50;

/**
 * Returns `name_taken` when the workspace already has a profile of that name, `full` when it holds
 * MAX_PROFILES. The count is part of the insert, so two concurrent creates cannot both pass it.
 */
export async function createProfile(
  db: D1Database,
  workspaceId: string,
  input: { name: string; defaultMode: PolicyMode; riskRules: RiskRules; discovery: Discovery },
): Promise<ProfileRecord | "name_taken" | "full"> {
  const profile: ProfileRecord = { id: newId("prof"), ...input, createdAt: nowIso(), updatedBy: null, updatedAt: null };
  const inserted = await db
    .prepare(
      `INSERT INTO access_profiles (id, workspace_id, name, default_mode, risk_rules, discovery, created_at)
       SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?7 WHERE (SELECT COUNT(*) FROM access_profiles WHERE workspace_id = ?2) < ?8
       ON CONFLICT (workspace_id, name) DO NOTHING`,
    )
    .bind(
      profile.id,
      workspaceId,
      input.name,
      input.defaultMode,
      JSON.stringify(input.riskRules),
      input.discovery,
      profile.createdAt,
      MAX_PROFILES,
    )
    .run();
  if (inserted.meta.changes === 1) return profile;
  const taken = await db.prepare("SELECT 1 FROM access_profiles WHERE workspace_id = ? AND name = ?").bind(workspaceId, input.name).first();
  return taken ? "name_taken" : "full";
}

/**
 * Sets the given fields (riskRules replaces the whole set); null when the workspace has no such profile,
 * `name_taken` when another of its profiles already has the new name.
 */
export async function updateProfile(
  db: D1Database,
  workspaceId: string,
  profileId: string,
  input: { name?: string; defaultMode?: PolicyMode; riskRules?: RiskRules; discovery?: Discovery; updatedBy: string },
): Promise<ProfileRecord | "name_taken" | null> {
  if (input.name !== undefined) {
    const taken = await db
      .prepare("SELECT 1 FROM access_profiles WHERE workspace_id = ? AND name = ? AND id <> ?")
      .bind(workspaceId, input.name, profileId)
      .first();
    if (taken) return "name_taken";
  }
  const row = await db
    .prepare(
      `UPDATE access_profiles
       SET name = COALESCE(?, name), default_mode = COALESCE(?, default_mode), risk_rules = COALESCE(?, risk_rules),
           discovery = COALESCE(?, discovery), updated_by = ?, updated_at = ?
       WHERE workspace_id = ? AND id = ?
       RETURNING ${COLUMNS}`,
    )
    .bind(
      input.name ?? null,
      input.defaultMode ?? null,
      input.riskRules ? JSON.stringify(input.riskRules) : null,
      input.discovery ?? null,
      input.updatedBy,
      nowIso(),
      workspaceId,
      profileId,
    )
    .first<ProfileRow>();
  return row ? toRecord(row) : null;
}

/** The unrevoked keys that belong to a profile: while there are any, it cannot be deleted. */
export async function keysInProfile(db: D1Database, workspaceId: string, profileId: string): Promise<{ id: string; name: string }[]> {
  const { results } = await db
    .prepare("SELECT id, name FROM api_keys WHERE workspace_id = ? AND profile_id = ? AND revoked_at IS NULL ORDER BY created_at")
    .bind(workspaceId, profileId)
    .all<{ id: string; name: string }>();
  return results;
}

/** Live keys of the profile block every statement below, so a key created meanwhile keeps its profile whole. */
const NO_LIVE_KEYS = "NOT EXISTS (SELECT 1 FROM api_keys WHERE profile_id = ?1 AND revoked_at IS NULL)";

/**
 * Deletes a profile with its per-tool and per-service modes, in one transaction; revoked keys that belonged
 * to it keep their history with no profile. `in_use` (nothing changed) when an unrevoked key belongs to it.
 */
export async function deleteProfile(db: D1Database, workspaceId: string, profileId: string): Promise<"deleted" | "in_use" | null> {
  if (!(await findProfile(db, workspaceId, profileId))) return null;
  const results = await db.batch([
    db.prepare(`DELETE FROM tool_policies WHERE profile_id = ?1 AND workspace_id = ?2 AND ${NO_LIVE_KEYS}`).bind(profileId, workspaceId),
    db.prepare(`DELETE FROM service_policies WHERE profile_id = ?1 AND workspace_id = ?2 AND ${NO_LIVE_KEYS}`).bind(profileId, workspaceId),
    db
      .prepare(`UPDATE api_keys SET profile_id = NULL WHERE profile_id = ?1 AND workspace_id = ?2 AND ${NO_LIVE_KEYS}`)
      .bind(profileId, workspaceId),
    db.prepare(`DELETE FROM access_profiles WHERE id = ?1 AND workspace_id = ?2 AND ${NO_LIVE_KEYS}`).bind(profileId, workspaceId),
  ]);
  return results[3]!.meta.changes === 1 ? "deleted" : "in_use";
}
