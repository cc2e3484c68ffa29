import { nowIso } from "../lib/ids.ts";
import type { PolicyMode } from "./profiles.store.ts";

export interface ToolPolicy {
  profileId: string;
  toolUid: string;
  mode: PolicyMode;
  updatedBy: string;
  updatedAt: string;
}

/**
 * Per-tool overrides one workspace holds, over all its profiles. Every call reads its workspace's catalog, overrides
 * included, so their number is bounded as its services and tool definitions are (50 profiles over a workspace's
 * tools would otherwise allow millions).
 */
export const MAX_TOOL_POLICIES = 25_000;

/**
 * Sets a tool's override under a profile; `full` when that would be a new override past MAX_TOOL_POLICIES (checked
 * in the insert; changing an existing override is never refused).
 */
export async function setToolPolicy(
  db: D1Database,
  workspaceId: string,
  input: { profileId: string; toolUid: string; mode: PolicyMode; updatedBy: string },
): Promise<ToolPolicy | "full"> {
  const updatedAt = nowIso();
  const written = await db
    .prepare(
      `INSERT INTO tool_policies (profile_id, tool_uid, workspace_id, mode, updated_by, updated_at)
       SELECT ?1, ?2, ?3, ?4, ?5, ?6 WHERE (SELECT COUNT(*) FROM tool_policies WHERE workspace_id = ?3) < ${MAX_TOOL_POLICIES}
         OR EXISTS (SELECT 1 FROM tool_policies WHERE profile_id = ?1 AND tool_uid = ?2)
       ON CONFLICT (profile_id, tool_uid) DO UPDATE SET mode = excluded.mode, updated_by = excluded.updated_by, updated_at = excluded.updated_at`,
    )
    .bind(input.profileId, input.toolUid, workspaceId, input.mode, input.updatedBy, updatedAt)
    .run();
  return written.meta.changes === 1 ? { ...input, updatedAt } : "full";
}

export async function listToolPolicies(db: D1Database, workspaceId: string, toolUid: string): Promise<ToolPolicy[]> {
  const { results } = await db
    .prepare(
      `SELECT profile_id AS profileId, tool_uid AS toolUid, mode, updated_by AS updatedBy, updated_at AS updatedAt
       FROM tool_policies WHERE workspace_id = ? AND tool_uid = ? ORDER BY profile_id`,
    )
    .bind(workspaceId, toolUid)
    .all<ToolPolicy>();
  return results;
}

/** Removes a tool's override under one profile, if it has one, so the profile's default mode applies again. */
export async function removeToolPolicy(db: D1Database, workspaceId: string, profileId: string, toolUid: string): Promise<void> {
  await db
    .prepare("DELETE FROM tool_policies WHERE workspace_id = ? AND profile_id = ? AND tool_uid = ?")
    .bind(workspaceId, profileId, toolUid)
    .run();
}

/** Every per-tool override of the workspace: profileId → toolUid → mode. */
export async function workspaceOverrides(db: D1Database, workspaceId: string): Promise<Map<string, Map<string, PolicyMode>>> {
  const { results } = await db
    .prepare("SELECT profile_id AS profileId, tool_uid AS toolUid, mode FROM tool_policies WHERE workspace_id = ?")
    .bind(workspaceId)
    .all<{ profileId: string; toolUid: string; mode: PolicyMode }>();
  const overrides = new Map<string, Map<string, PolicyMode>>();
  for (const row of results) {
    const ofProfile = overrides.get(row.profileId) ?? new Map<string, PolicyMode>();
    ofProfile.set(row.toolUid, row.mode);
    overrides.set(row.profileId, ofProfile);
  }
  return overrides;
}
