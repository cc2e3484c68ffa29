import type { Channel } from "../../auth/principal.ts";
import type { DeploymentSlot, HookActor } from "./lifecycle.types.ts";

export type DeploymentAction = "deploy" | "promote" | "rollback" | "remove";

/** One attributed change of a deployment pointer. */
export interface DeploymentEvent {
  eventId: string;
  toolUid: string;
  slot: DeploymentSlot;
  action: DeploymentAction;
  revisionId: string | null;
  previousRevisionId: string | null;
  actorId: string;
  channel: Channel;
  createdAt: string;
}

/** What a reset removed, and who did it. It outlives everything it removed. */
export interface ResetEvent {
  resetId: string;
  toolUid: string;
  actorId: string;
  actorKind: "key" | "user";
  channel: Channel;
  versionsRemoved: number;
  revisionsRemoved: number;
  bundlesRemoved: number;
  createdAt: string;
}

export async function insertDeploymentEvent(db: D1Database, workspaceId: string, event: DeploymentEvent): Promise<void> {
  await db
    .prepare(
      `INSERT INTO hook_deployment_events (id, workspace_id, tool_uid, slot, action, revision_id, previous_revision_id, actor_id, channel, created_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    )
    .bind(
      event.eventId,
      workspaceId,
      event.toolUid,
      event.slot,
      event.action,
      event.revisionId,
      event.previousRevisionId,
      event.actorId,
      event.channel,
      event.createdAt,
    )
    .run();
}

export async function listDeploymentEvents(
  db: D1Database,
  workspaceId: string,
  toolUid: string,
  limit: number,
): Promise<DeploymentEvent[]> {
  const { results } = await db
    .prepare(
      `SELECT id AS eventId, tool_uid AS toolUid, slot, action, revision_id AS revisionId, previous_revision_id AS previousRevisionId,
         actor_id AS actorId, channel, created_at AS createdAt
       FROM hook_deployment_events WHERE workspace_id = ? AND tool_uid = ? ORDER BY seq DESC LIMIT ?`,
    )
    .bind(workspaceId, toolUid, limit)
    .all<DeploymentEvent>();
  return results;
}

/**
 * The tool's latest `limit` reset events, newest first. Bounded: resets are not rate limited and each keeps its
 * event for good, so a key resetting a tool in a loop would otherwise make this one unbounded response.
 */
export async function listResetEvents(db: D1Database, workspaceId: string, toolUid: string, limit: number): Promise<ResetEvent[]> {
  const { results } = await db
    .prepare(
      `SELECT id AS resetId, tool_uid AS toolUid, actor_id AS actorId, actor_kind AS actorKind, channel,
         versions_removed AS versionsRemoved, revisions_removed AS revisionsRemoved, bundles_removed AS bundlesRemoved, created_at AS createdAt
       FROM hook_reset_events WHERE workspace_id = ? AND tool_uid = ? ORDER BY created_at DESC, id LIMIT ?`,
    )
    .bind(workspaceId, toolUid, limit)
    .all<ResetEvent>();
  return results;
}

/** How much hook history a tool has in D1 (a reset counts it before removing it). */
export async function historyCounts(
  db: D1Database,
  workspaceId: string,
  toolUid: string,
): Promise<{ versions: number; revisions: number }> {
  const row = await db
    .prepare(
      `SELECT (SELECT COUNT(*) FROM hook_versions WHERE workspace_id = ?1 AND tool_uid = ?2) AS versions,
              (SELECT COUNT(*) FROM hook_revisions WHERE workspace_id = ?1 AND tool_uid = ?2) AS revisions`,
    )
    .bind(workspaceId, toolUid)
    .first<{ versions: number; revisions: number }>();
  return row ?? { versions: 0, revisions: 0 };
}

/**
 * Removes every D1 trace of a tool's hook and records the reset, in one batch
 * (a D1 batch is a transaction): either all of it happens or none does.
 */
export async function resetToolHistory(db: D1Database, workspaceId: string, event: ResetEvent & { actor: HookActor }): Promise<void> {
  const where = "WHERE workspace_id = ? AND tool_uid = ?";
  await db.batch([
    ...["hook_versions", "hook_test_runs", "hook_revisions", "hook_deployment_events"].map((table) =>
      db.prepare(`DELETE FROM ${table} ${where}`).bind(workspaceId, event.toolUid),
    ),
    db
      .prepare(
        `INSERT INTO hook_reset_events (id, workspace_id, tool_uid, actor_id, actor_kind, channel, versions_removed, revisions_removed,
           bundles_removed, created_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      )
      .bind(
        event.resetId,
        workspaceId,
        event.toolUid,
        event.actor.id,
        event.actor.kind,
        event.actor.channel,
        event.versionsRemoved,
        event.revisionsRemoved,
        event.bundlesRemoved,
        event.createdAt,
      ),
  ]);
}

/** Tools of a service that have hook versions or revisions (what blocks deleting the service). */
export async function toolsWithHookHistory(
  db: D1Database,
  workspaceId: string,
  serviceId: string,
): Promise<{ toolUid: string; name: string; versions: number; revisions: number; lastChangeAt: string | null }[]> {
  const { results } = await db
    .prepare(
      `SELECT t.uid AS toolUid, t.name AS name,
         (SELECT COUNT(*) FROM hook_versions v WHERE v.workspace_id = t.workspace_id AND v.tool_uid = t.uid) AS versions,
         (SELECT COUNT(*) FROM hook_revisions r WHERE r.workspace_id = t.workspace_id AND r.tool_uid = t.uid) AS revisions,
         (SELECT MAX(created_at) FROM hook_versions v WHERE v.workspace_id = t.workspace_id AND v.tool_uid = t.uid) AS lastChangeAt
       FROM tools t WHERE t.workspace_id = ? AND t.service_id = ?
       ORDER BY t.name`,
    )
    .bind(workspaceId, serviceId)
    .all<{ toolUid: string; name: string; versions: number; revisions: number; lastChangeAt: string | null }>();
  return results.filter((tool) => tool.versions > 0 || tool.revisions > 0);
}
