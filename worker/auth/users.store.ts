import { newId, nowIso } from "../lib/ids.ts";
import type { Role } from "./principal.ts";

export interface UserRecord {
  id: string;
  email: string;
}

export async function findUserByEmail(db: D1Database, email: string): Promise<UserRecord | null> {
  return db.prepare("SELECT id, email FROM users WHERE email = ?").bind(email).first<UserRecord>();
}

export async function membershipRole(db: D1Database, workspaceId: string, userId: string): Promise<Role | null> {
  const row = await db
    .prepare("SELECT role FROM memberships WHERE workspace_id = ? AND user_id = ?")
    .bind(workspaceId, userId)
    .first<{ role: Role }>();
  return row?.role ?? null;
}

/** Adds (or re-roles) a member, creating the user on first sight of the email. */
export async function upsertMember(db: D1Database, workspaceId: string, email: string, role: Role): Promise<UserRecord> {
  const now = nowIso();
  const user = await db
    .prepare(
      `INSERT INTO users (id, email, created_at) VALUES (?, ?, ?)
       ON CONFLICT (email) DO UPDATE SET email = email RETURNING id, email`,
    )
    .bind(newId("usr"), email.toLowerCase(), now)
    .first<UserRecord>();
  if (!user) throw new Error("user upsert returned no row");
  await db
    .prepare(
      `INSERT INTO memberships (workspace_id, user_id, role, created_at) VALUES (?, ?, ?, ?)
       ON CONFLICT (workspace_id, user_id) DO UPDATE SET role = excluded.role`,
    )
    .bind(workspaceId, user.id, role, now)
    .run();
  return user;
}

/** One member of a workspace, or null when the user is none. */
export async function findMember(
  db: D1Database,
  workspaceId: string,
  userId: string,
): Promise<{ id: string; email: string; role: Role } | null> {
  return db
    .prepare(`SELECT u.id, u.email, m.role FROM memberships m JOIN users u ON u.id = m.user_id WHERE m.workspace_id = ? AND m.user_id = ?`)
    .bind(workspaceId, userId)
    .first<{ id: string; email: string; role: Role }>();
}

/** Ends a user's membership (nothing when they were none). */
export async function deleteMembership(db: D1Database, workspaceId: string, userId: string): Promise<void> {
  await db.prepare("DELETE FROM memberships WHERE workspace_id = ? AND user_id = ?").bind(workspaceId, userId).run();
}

export async function listMembers(db: D1Database, workspaceId: string) {
  const { results } = await db
    .prepare(
      `SELECT u.id, u.email, m.role, m.created_at AS createdAt FROM memberships m JOIN users u ON u.id = m.user_id
       WHERE m.workspace_id = ? ORDER BY u.email`,
    )
    .bind(workspaceId)
    .all<{ id: string; email: string; role: Role; createdAt: string }>();
  return results;
}

/** The workspaces a user is a member of, with the role in each. */
export async function workspacesOfUser(db: D1Database, userId: string) {
  const { results } = await db
    .prepare(
      `SELECT w.id, w.name, m.role FROM memberships m JOIN workspaces w ON w.id = m.workspace_id
       WHERE m.user_id = ? ORDER BY w.name, w.id`,
    )
    .bind(userId)
    .all<{ id: string; name: string; role: Role }>();
  return results;
}
