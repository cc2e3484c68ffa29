import { nowIso } from "../lib/ids.ts";
import type { OAuthServer } from "./oauth.server.ts";

/**
 * The services table's OAuth columns (migration 0011): whether the service is
 * authorized, why not, and what the flow needs. Tokens are not here: they are
 * sealed in the workspace Durable Object (grants.do.ts).
 */
export interface OAuthColumns {
  authorization_kind: "none" | "oauth";
  oauth_mode: "shared" | "per_user" | null;
  oauth_status: "pending" | "authorized" | null;
  oauth_pending_reason: string | null;
  oauth_server: string | null;
  oauth_client_secret: string | null;
  oauth_index_subject: string | null;
  oauth_authorized_by: string | null;
  oauth_authorized_at: string | null;
}

/** Why a service waits for authorization, as admins see it. */
export interface PendingReason {
  /** `connected` (never authorized yet), `disconnected`, `invalid_grant`, the authorization server's `error`, or a gateway code. */
  code: string;
  message: string;
  at: string;
}

/** A service's OAuth settings as the catalog and the flow use them; null for a service without OAuth. */
export interface ServiceOAuth {
  mode: "shared" | "per_user";
  status: "pending" | "authorized";
  pendingReason: PendingReason | null;
  server: OAuthServer;
  sealedClientSecret: string | null;
  /** The subject whose grant indexes the service: `workspace` when shared, the authorizing admin's when per user. */
  indexSubject: string | null;
  authorizedBy: string | null;
  authorizedAt: string | null;
}

export function serviceOAuth(row: OAuthColumns): ServiceOAuth | null {
  if (row.authorization_kind !== "oauth" || !row.oauth_server || !row.oauth_mode) return null;
  return {
    mode: row.oauth_mode,
    status: row.oauth_status ?? "pending",
    pendingReason: row.oauth_pending_reason ? (JSON.parse(row.oauth_pending_reason) as PendingReason) : null,
    server: JSON.parse(row.oauth_server) as OAuthServer,
    sealedClientSecret: row.oauth_client_secret,
    indexSubject: row.oauth_index_subject,
    authorizedBy: row.oauth_authorized_by,
    authorizedAt: row.oauth_authorized_at,
  };
}

/** Back to pending (invalid_grant, a failed callback, a disconnect), saying why. Tools stay indexed, and refused. */
export async function markPending(
  db: D1Database,
  workspaceId: string,
  serviceId: string,
  reason: Omit<PendingReason, "at">,
): Promise<void> {
  await db
    .prepare(
      `UPDATE services SET oauth_status = 'pending', oauth_pending_reason = ?
       WHERE workspace_id = ? AND id = ? AND authorization_kind = 'oauth'`,
    )
    .bind(JSON.stringify({ ...reason, at: nowIso() }), workspaceId, serviceId)
    .run();
}

/** Only the reason changes (a per-user flow that failed leaves the service as it was): shown until the next success. */
export async function notePendingReason(db: D1Database, workspaceId: string, serviceId: string, reason: Omit<PendingReason, "at">) {
  await db
    .prepare("UPDATE services SET oauth_pending_reason = ? WHERE workspace_id = ? AND id = ? AND oauth_status = 'pending'")
    .bind(JSON.stringify({ ...reason, at: nowIso() }), workspaceId, serviceId)
    .run();
}

export async function markAuthorized(
  db: D1Database,
  workspaceId: string,
  serviceId: string,
  input: { by: string; indexSubject: string },
): Promise<void> {
  await db
    .prepare(
      `UPDATE services SET oauth_status = 'authorized', oauth_pending_reason = NULL, oauth_index_subject = ?,
         oauth_authorized_by = ?, oauth_authorized_at = ?
       WHERE workspace_id = ? AND id = ? AND authorization_kind = 'oauth'`,
    )
    .bind(input.indexSubject, input.by, nowIso(), workspaceId, serviceId)
    .run();
}

/**
 * The service's OAuth set anew (a changed mode or client, or OAuth its upstream now asks for): pending, with no
 * grant indexing it, saying why. Its tools stay indexed, and are refused until an admin authorizes it again.
 */
export async function setServiceOAuth(
  db: D1Database,
  workspaceId: string,
  serviceId: string,
  oauth: { mode: "shared" | "per_user"; server: OAuthServer; sealedClientSecret: string | null; reason: Omit<PendingReason, "at"> },
): Promise<void> {
  await db
    .prepare(
      `UPDATE services SET authorization_kind = 'oauth', oauth_mode = ?, oauth_status = 'pending', oauth_pending_reason = ?,
         oauth_server = ?, oauth_client_secret = ?, oauth_index_subject = NULL, oauth_authorized_by = NULL, oauth_authorized_at = NULL
       WHERE workspace_id = ? AND id = ? AND deleted_at IS NULL`,
    )
    .bind(
      oauth.mode,
      JSON.stringify({ ...oauth.reason, at: nowIso() }),
      JSON.stringify(oauth.server),
      oauth.sealedClientSecret,
      workspaceId,
      serviceId,
    )
    .run();
}

/** Only the pre-registered client's secret changes (the same client, so its grants stand). */
export async function replaceClientSecret(
  db: D1Database,
  workspaceId: string,
  serviceId: string,
  server: OAuthServer,
  sealedClientSecret: string,
): Promise<void> {
  await db
    .prepare(
      "UPDATE services SET oauth_server = ?, oauth_client_secret = ? WHERE workspace_id = ? AND id = ? AND authorization_kind = 'oauth'",
    )
    .bind(JSON.stringify(server), sealedClientSecret, workspaceId, serviceId)
    .run();
}

/** The service no longer uses upstream OAuth: its upstream answers to its headers alone. */
export async function clearServiceOAuth(db: D1Database, workspaceId: string, serviceId: string): Promise<void> {
  await db
    .prepare(
      `UPDATE services SET authorization_kind = 'none', oauth_mode = NULL, oauth_status = NULL, oauth_pending_reason = NULL,
         oauth_server = NULL, oauth_client_secret = NULL, oauth_index_subject = NULL, oauth_authorized_by = NULL, oauth_authorized_at = NULL
       WHERE workspace_id = ? AND id = ?`,
    )
    .bind(workspaceId, serviceId)
    .run();
}
