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

/** Returns null when the workspace already has a profile of that name. */
export async function createProfile(
  db: D1Database,
  workspaceId: string,
  input: { name: string; defaultMode: PolicyMode; riskRules: RiskRules; discovery: Discovery },
): Promise<ProfileRecord | null> {
  const profile: ProfileRecord = { id: newId("prof"), ...input, createdAt: nowIso(), updatedBy: null, updatedAt: null };
  const inserted = await db
    .prepare(
      `INSERT INTO access_profiles (id, workspace_id, name, default_mode, risk_rules, discovery, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (workspace_id, name) DO NOTHING`,
    )
    .bind(profile.id, workspaceId, input.name, input.defaultMode, JSON.stringify(input.riskRules), input.discovery, profile.createdAt)
    .run();
  return inserted.meta.changes === 1 ? profile : null;
}

/** Sets the given fields (riskRules replaces the whole set); null when the workspace has no such profile. */
export async function updateProfile(
  db: D1Database,
  workspaceId: string,
  profileId: string,
  input: { defaultMode?: PolicyMode; riskRules?: RiskRules; discovery?: Discovery; updatedBy: string },
): Promise<ProfileRecord | null> {
  const row = await db
    .prepare(
      `UPDATE access_profiles
       SET default_mode = COALESCE(?, default_mode), risk_rules = COALESCE(?, risk_rules), discovery = COALESCE(?, discovery),
           updated_by = ?, updated_at = ?
       WHERE workspace_id = ? AND id = ?
       RETURNING ${COLUMNS}`,
    )
    .bind(
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
