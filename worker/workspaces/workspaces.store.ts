import { newId, nowIso } from "../lib/ids.ts";

export interface WorkspaceRecord {
  id: string;
  name: string;
  detailPolicy: "metadata" | "payloads";
  createdAt: string;
}

const DEFAULT_PROFILE_NAME = "default";

/** Creates the workspace with its default access profile in one batch. */
export async function createWorkspace(db: D1Database, name: string): Promise<{ workspace: WorkspaceRecord; defaultProfileId: string }> {
  const workspace: WorkspaceRecord = { id: newId("ws"), name, detailPolicy: "metadata", createdAt: nowIso() };
  const defaultProfileId = newId("prof");
  await db.batch([
    db
      .prepare("INSERT INTO workspaces (id, name, detail_policy, created_at) VALUES (?, ?, ?, ?)")
      .bind(workspace.id, workspace.name, workspace.detailPolicy, workspace.createdAt),
    db
      .prepare("INSERT INTO access_profiles (id, workspace_id, name, default_mode, created_at) VALUES (?, ?, ?, 'allow', ?)")
      .bind(defaultProfileId, workspace.id, DEFAULT_PROFILE_NAME, workspace.createdAt),
  ]);
  return { workspace, defaultProfileId };
}

export async function getWorkspace(db: D1Database, id: string): Promise<WorkspaceRecord | null> {
  return db
    .prepare("SELECT id, name, detail_policy AS detailPolicy, created_at AS createdAt FROM workspaces WHERE id = ?")
    .bind(id)
    .first<WorkspaceRecord>();
}

export async function updateWorkspace(
  db: D1Database,
  id: string,
  changes: { name?: string; detailPolicy?: WorkspaceRecord["detailPolicy"] },
): Promise<WorkspaceRecord | null> {
  return db
    .prepare(
      `UPDATE workspaces SET name = COALESCE(?, name), detail_policy = COALESCE(?, detail_policy) WHERE id = ?
       RETURNING id, name, detail_policy AS detailPolicy, created_at AS createdAt`,
    )
    .bind(changes.name ?? null, changes.detailPolicy ?? null, id)
    .first<WorkspaceRecord>();
}
