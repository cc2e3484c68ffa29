import { newId, nowIso } from "../lib/ids.ts";

export type PolicyMode = "allow" | "block" | "approval";

export interface ProfileRecord {
  id: string;
  name: string;
  defaultMode: PolicyMode;
  createdAt: string;
}

const SELECT = "SELECT id, name, default_mode AS defaultMode, created_at AS createdAt FROM access_profiles";

export async function findProfile(db: D1Database, workspaceId: string, profileId: string): Promise<ProfileRecord | null> {
  return db.prepare(`${SELECT} WHERE workspace_id = ? AND id = ?`).bind(workspaceId, profileId).first<ProfileRecord>();
}

export async function listProfiles(db: D1Database, workspaceId: string): Promise<ProfileRecord[]> {
  const { results } = await db.prepare(`${SELECT} WHERE workspace_id = ? ORDER BY name`).bind(workspaceId).all<ProfileRecord>();
  return results;
}

/** Returns null when the workspace already has a profile of that name. */
export async function createProfile(
  db: D1Database,
  workspaceId: string,
  name: string,
  defaultMode: PolicyMode,
): Promise<ProfileRecord | null> {
  const profile: ProfileRecord = { id: newId("prof"), name, defaultMode, createdAt: nowIso() };
  const inserted = await db
    .prepare(
      `INSERT INTO access_profiles (id, workspace_id, name, default_mode, created_at) VALUES (?, ?, ?, ?, ?)
       ON CONFLICT (workspace_id, name) DO NOTHING`,
    )
    .bind(profile.id, workspaceId, name, defaultMode, profile.createdAt)
    .run();
  return inserted.meta.changes === 1 ? profile : null;
}
