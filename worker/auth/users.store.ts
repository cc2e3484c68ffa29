import { newId, nowIso } from "../lib/ids.ts";
import type { Role } from "./principal.ts";

export interface UserRecord {
  id: string;
  email: string;
}

export async function findUserByEmail(db: D1Database, email: string): Promise<UserRecord | null> {
  return db.prepare("SELECT id, email FROM users WHERE email = ?").bind(email).first<UserRecord>();
}

/**
 * The role a member acts with: none once their removal has started. The removal revokes their credentials step by
 * step and ends the membership last; meanwhile they could otherwise still deploy, approve or connect apps from the
 * console. A removal that failed part-way keeps it so until it is retried or the member is added again.
 */
export async function roleInForce(db: D1Database, workspaceId: string, userId: string): Promise<Role | null> {
  const row = await db
    .prepare("SELECT role FROM memberships WHERE workspace_id = ? AND user_id = ? AND removal_started_at IS NULL")
    .bind(workspaceId, userId)
    .first<{ role: Role }>();
  return row?.role ?? null;
}

/** The member's role, or null when the user is no member (a member being removed still is one). */
export async function membershipRole(db: D1Database, workspaceId: string, userId: string): Promise<Role | null> {
  const row = await db
    .prepare("SELECT role FROM memberships WHERE workspace_id = ? AND user_id = ?")
    .bind(workspaceId, userId)
    .first<{ role: Role }>();
  return row?.role ?? null;
}

/**
 * SQL true when the member `m` is not the workspace's last admin: they are no admin, an admin already being removed
 * (who no longer counts), or another admin who is not being removed remains. Checked inside the write it guards, so
 * two concurrent changes cannot both find the other admin and both go ahead.
 */
const NOT_LAST_ADMIN = (m: string) =>
  `(${m}.role != 'admin' OR ${m}.removal_started_at IS NOT NULL OR EXISTS (
     SELECT 1 FROM memberships peer WHERE peer.workspace_id = ${m}.workspace_id AND peer.user_id != ${m}.user_id
       AND peer.role = 'admin' AND peer.removal_started_at IS NULL))`;

/**
 * Adds (or re-roles) a member, creating the user on first sight of the email. `lastAdmin` when the change would demote
 * the workspace's last admin: refused in the same statement (the upsert's `WHERE`), the membership unchanged. Adding a member
 * whose removal failed part-way keeps them (their removal is no longer in progress).
 */
export async function upsertMember(
  db: D1Database,
  workspaceId: string,
  email: string,
  role: Role,
): Promise<{ user: UserRecord; refused: "last_admin" | null } | "full"> {
  const now = nowIso();
  // A full workspace takes no new member, and no user row is made for one it would refuse.
  if (await membersFull(db, workspaceId, email)) return "full";
  const user = await db
    .prepare(
      `INSERT INTO users (id, email, created_at) VALUES (?, ?, ?)
       ON CONFLICT (email) DO UPDATE SET email = email RETURNING id, email`,
    )
    .bind(newId("usr"), email.toLowerCase(), now)
    .first<UserRecord>();
  if (!user) throw new Error("user upsert returned no row");
  const written = await db
    .prepare(
      `INSERT INTO memberships (workspace_id, user_id, role, created_at)
       SELECT ?1, ?2, ?3, ?4 WHERE (SELECT COUNT(*) FROM memberships WHERE workspace_id = ?1) < ${MAX_MEMBERS}
         OR EXISTS (SELECT 1 FROM memberships WHERE workspace_id = ?1 AND user_id = ?2)
       ON CONFLICT (workspace_id, user_id) DO UPDATE SET role = excluded.role, removal_started_at = NULL
         WHERE excluded.role = 'admin' OR ${NOT_LAST_ADMIN("memberships")}
       RETURNING role`,
    )
    .bind(workspaceId, user.id, role, now)
    .first<{ role: Role }>();
  if (written) return { user, refused: null };
  // Nothing written: an existing member the last-admin rule kept, or a new one a concurrent add left no room for.
  return (await membershipRole(db, workspaceId, user.id)) === null ? "full" : { user, refused: "last_admin" };
}

/**
 * Members one workspace holds. Its members list, and the actors list that names history by email, return them all;
 * every added email also makes a user row that outlives the membership.
 */
export const MAX_MEMBERS = 1_000;

/** Whether adding `email` would take the workspace past MAX_MEMBERS (an existing member is never refused). */
async function membersFull(db: D1Database, workspaceId: string, email: string): Promise<boolean> {
  const row = await db
    .prepare(
      `SELECT (SELECT COUNT(*) FROM memberships WHERE workspace_id = ?1) AS members,
         EXISTS (SELECT 1 FROM memberships m JOIN users u ON u.id = m.user_id WHERE m.workspace_id = ?1 AND u.email = ?2) AS member`,
    )
    .bind(workspaceId, email.toLowerCase())
    .first<{ members: number; member: number }>();
  return !!row && row.members >= MAX_MEMBERS && row.member === 0;
}

/**
 * Starts a member's removal: marks the membership as being removed, unless they are the workspace's last admin
 * (checked in the same statement). A removal already started (one that failed part-way) may go on. Answers whether
 * it may; false also when the user is no member.
 */
export async function startMemberRemoval(db: D1Database, workspaceId: string, userId: string): Promise<boolean> {
  const row = await db
    .prepare(
      `UPDATE memberships SET removal_started_at = COALESCE(removal_started_at, ?)
       WHERE workspace_id = ? AND user_id = ? AND ${NOT_LAST_ADMIN("memberships")} RETURNING user_id`,
    )
    .bind(nowIso(), workspaceId, userId)
    .first<{ user_id: string }>();
  return row !== null;
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

/**
 * Ends a membership whose removal started (nothing when they are none, or were added again meanwhile: that member
 * stays, with none of the credentials the removal revoked).
 */
export async function deleteMembership(db: D1Database, workspaceId: string, userId: string): Promise<void> {
  await db
    .prepare("DELETE FROM memberships WHERE workspace_id = ? AND user_id = ? AND removal_started_at IS NOT NULL")
    .bind(workspaceId, userId)
    .run();
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

/** The workspaces a user is a member of, with the role in each (not those they are being removed from: roleInForce). */
export async function workspacesOfUser(db: D1Database, userId: string) {
  const { results } = await db
    .prepare(
      `SELECT w.id, w.name, m.role FROM memberships m JOIN workspaces w ON w.id = m.workspace_id
       WHERE m.user_id = ? AND m.removal_started_at IS NULL ORDER BY w.name, w.id`,
    )
    .bind(userId)
    .all<{ id: string; name: string; role: Role }>();
  return results;
}
