/**
 * One-call approvals, stored in the workspace Durable Object (whose migrations
 * create the table) so that claiming an approval is atomic: each method below
 * runs synchronous SQL with no await, so no two calls can both consume the
 * same approval.
 */
export type ApprovalStatus = "pending" | "approved" | "denied" | "used" | "expired";
export type ApprovalSource = "policy" | "hook";

/** How long a request stays decidable, and an approval usable. Documented in docs/hooks.md. */
export const APPROVAL_TTL_MS = 60 * 60 * 1000;

/** Unexpired pending requests one workspace may hold; a new request past it is refused with `approval_limit`. */
export const MAX_PENDING_APPROVALS = 100;
/**
 * Unexpired pending requests one key (or OAuth client) may hold, below the workspace's cap: one agent asking for
 * many distinct calls must not fill the queue and lock every other agent out. Refused with `approval_key_limit`.
 */
export const MAX_PENDING_APPROVALS_PER_KEY = 20;
/**
 * How long an approval is kept after it expires (whatever became of it: used, denied, or never decided), for the
 * record; then it is deleted. Nothing deleted them before: a `tools:call` key, with no say over any decision, could
 * add up to 100 requests an hour of up to 64 KiB each to its workspace's Durable Object for ever (about 150 MiB a
 * day), and every status-filtered list reads through all of them. 30 days, as call rows (docs/logs.md).
 */
export const APPROVAL_RETENTION_MS = 30 * 24 * 60 * 60 * 1000;
/**
 * Approvals past retention one new request deletes. A request adds one row and deletes up to this many, so the
 * work per call stays bounded and the table never holds more than the window's requests for long.
 */
const APPROVAL_PRUNE_ROWS = 100;

/** The largest transformed arguments (UTF-8 JSON) held for an approver; the call path refuses larger ones with `approval_limit`. */
export const MAX_APPROVAL_ARGUMENTS_BYTES = 64 * 1024;

/** What the call path asks for: one exact call by one key, under one active revision. */
export interface ApprovalRequest {
  toolUid: string;
  publicName: string;
  keyId: string;
  revisionId: string | null;
  callHash: string;
  /** JSON text of the transformed arguments (text, so the RPC type stays flat). */
  argumentsJson: string;
  /** Stable snake_case code: `policy_approval`, or the hook's own. */
  reason: string;
  /** The hook's readable explanation for the approver (1–1,000 characters); null for policy approvals. */
  message: string | null;
  source: ApprovalSource;
}

export interface Approval extends ApprovalRequest {
  id: string;
  status: ApprovalStatus;
  createdAt: string;
  expiresAt: string;
  decidedBy: string | null;
  decidedAt: string | null;
  /** The approver's note on the decision, if they wrote one. */
  decisionNote: string | null;
  usedAt: string | null;
}

/** The longest note an approver may give with a decision. */
export const MAX_DECISION_NOTE_LENGTH = 1000;

export type ClaimResult =
  | { claimed: true; approval: Approval }
  | { claimed: false; approval: Approval }
  /**
   * No approval for this call yet, and no room for a new request: the key already holds
   * MAX_PENDING_APPROVALS_PER_KEY pending requests (`key`), or the workspace MAX_PENDING_APPROVALS (`workspace`).
   */
  | { claimed: false; pendingFull: "key" | "workspace" };

interface ApprovalRow {
  id: string;
  tool_uid: string;
  public_name: string;
  key_id: string;
  revision_id: string | null;
  call_hash: string;
  arguments: string;
  reason: string;
  message: string | null;
  source: ApprovalSource;
  status: ApprovalStatus;
  created_at: number;
  expires_at: number;
  decided_by: string | null;
  decided_at: number | null;
  decision_note: string | null;
  used_at: number | null;
  [key: string]: SqlStorageValue;
}

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

function toApproval(row: ApprovalRow, now: number): Approval {
  const lapsed = (row.status === "pending" || row.status === "approved") && row.expires_at <= now;
  return {
    id: row.id,
    toolUid: row.tool_uid,
    publicName: row.public_name,
    keyId: row.key_id,
    revisionId: row.revision_id,
    callHash: row.call_hash,
    argumentsJson: row.arguments,
    reason: row.reason,
    message: row.message,
    source: row.source,
    status: lapsed ? "expired" : row.status,
    createdAt: iso(row.created_at)!,
    expiresAt: iso(row.expires_at)!,
    decidedBy: row.decided_by,
    decidedAt: iso(row.decided_at),
    decisionNote: row.decision_note,
    usedAt: iso(row.used_at),
  };
}

export class ApprovalStore {
  readonly #sql: SqlStorage;

  constructor(sql: SqlStorage) {
    this.#sql = sql;
  }

  /**
   * For one exact call (key, tool, active revision, transformed-call hash):
   * consume an approved, unused, unexpired approval if there is one; otherwise
   * return the pending request for it, creating one if needed and the key
   * holds fewer than MAX_PENDING_APPROVALS_PER_KEY pending requests and the
   * workspace fewer than MAX_PENDING_APPROVALS.
   */
  claimOrRequest(request: ApprovalRequest, newId: string, now = Date.now()): ClaimResult {
    const match = (status: ApprovalStatus) =>
      this.#sql
        .exec<ApprovalRow>(
          `SELECT * FROM approvals WHERE key_id = ? AND tool_uid = ? AND call_hash = ? AND status = ?
             AND revision_id IS ? AND expires_at > ? ORDER BY created_at LIMIT 1`,
          request.keyId,
          request.toolUid,
          request.callHash,
          status,
          request.revisionId,
          now,
        )
        .toArray()[0];

    const approved = match("approved");
    if (approved) {
      this.#sql.exec("UPDATE approvals SET status = 'used', used_at = ? WHERE id = ?", now, approved.id);
      return { claimed: true, approval: toApproval({ ...approved, status: "used", used_at: now }, now) };
    }
    const pending = match("pending");
    if (pending) return { claimed: false, approval: toApproval(pending, now) };

    const waiting = this.#sql
      .exec<{ n: number; own: number }>(
        "SELECT COUNT(*) AS n, COUNT(CASE WHEN key_id = ? THEN 1 END) AS own FROM approvals WHERE status = 'pending' AND expires_at > ?",
        request.keyId,
        now,
      )
      .one();
    if (waiting.own >= MAX_PENDING_APPROVALS_PER_KEY) return { claimed: false, pendingFull: "key" };
    if (waiting.n >= MAX_PENDING_APPROVALS) return { claimed: false, pendingFull: "workspace" };

    this.#sql.exec(
      `INSERT INTO approvals (id, tool_uid, public_name, key_id, revision_id, call_hash, arguments, reason, message, source, status,
         created_at, expires_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'pending', ?, ?)`,
      newId,
      request.toolUid,
      request.publicName,
      request.keyId,
      request.revisionId,
      request.callHash,
      request.argumentsJson,
      request.reason,
      request.message,
      request.source,
      now,
      now + APPROVAL_TTL_MS,
    );
    // After the insert: the newest row is never the one deleted, so rowids (list cursors) are never handed out again.
    this.#sql.exec(
      "DELETE FROM approvals WHERE rowid IN (SELECT rowid FROM approvals WHERE expires_at < ? ORDER BY expires_at LIMIT ?)",
      now - APPROVAL_RETENTION_MS,
      APPROVAL_PRUNE_ROWS,
    );
    return { claimed: false, approval: this.get(newId, now)! };
  }

  get(id: string, now = Date.now()): Approval | null {
    const row = this.#sql.exec<ApprovalRow>("SELECT * FROM approvals WHERE id = ?", id).toArray()[0];
    return row ? toApproval(row, now) : null;
  }

  /**
   * Newest first. Pages by insertion order (the table's rowid), not by
   * createdAt: several requests can be created in the same millisecond, and a
   * time cursor would skip the rest of them.
   */
  list(
    filter: { status?: ApprovalStatus; limit: number; before?: number },
    now = Date.now(),
  ): { approvals: Approval[]; nextBefore: number | null } {
    const byStatus: Record<ApprovalStatus, string> = {
      pending: "status = 'pending' AND expires_at > ?",
      approved: "status = 'approved' AND expires_at > ?",
      expired: "status IN ('pending', 'approved') AND expires_at <= ?",
      denied: "status = 'denied' AND ? IS NOT NULL",
      used: "status = 'used' AND ? IS NOT NULL",
    };
    const condition = filter.status ? byStatus[filter.status] : "? IS NOT NULL";
    const rows = this.#sql
      .exec<ApprovalRow & { position: number }>(
        `SELECT rowid AS position, * FROM approvals WHERE ${condition} AND rowid < ? ORDER BY rowid DESC LIMIT ?`,
        now,
        filter.before ?? Number.MAX_SAFE_INTEGER,
        filter.limit + 1,
      )
      .toArray();
    const page = rows.slice(0, filter.limit);
    return {
      approvals: page.map((row) => toApproval(row, now)),
      nextBefore: rows.length > filter.limit ? page.at(-1)!.position : null,
    };
  }

  /**
   * Ends the approvals of callers that lost their standing (`keyIds`: key ids, and `oauth:<client id>` for an OAuth
   * client whose grant was revoked): a pending request is denied (by `actorId`, with `note`), so no one approves a
   * call for a credential that is gone; an approved one not yet used expires now. Answers their ids.
   */
  cancelFor(keyIds: readonly string[], actorId: string, note: string, now = Date.now()): string[] {
    const callers = JSON.stringify(keyIds);
    const denied = this.#sql
      .exec<{ id: string }>(
        `UPDATE approvals SET status = 'denied', decided_by = ?, decided_at = ?, decision_note = ?
         WHERE status = 'pending' AND expires_at > ? AND key_id IN (SELECT value FROM json_each(?)) RETURNING id`,
        actorId,
        now,
        note,
        now,
        callers,
      )
      .toArray();
    const expired = this.#sql
      .exec<{ id: string }>(
        `UPDATE approvals SET expires_at = ? WHERE status = 'approved' AND expires_at > ? AND key_id IN (SELECT value FROM json_each(?))
         RETURNING id`,
        now,
        now,
        callers,
      )
      .toArray();
    return [...denied, ...expired].map((row) => row.id).sort();
  }

  /** Approve or deny a pending, unexpired request, with the approver's note. Returns the approval, or why it cannot be decided. */
  decide(
    id: string,
    decision: "approved" | "denied",
    actorId: string,
    note: string | null,
    now = Date.now(),
  ): { ok: true; approval: Approval } | { ok: false; reason: "not_found" | "not_pending"; approval?: Approval } {
    const current = this.get(id, now);
    if (!current) return { ok: false, reason: "not_found" };
    if (current.status !== "pending") return { ok: false, reason: "not_pending", approval: current };
    this.#sql.exec(
      "UPDATE approvals SET status = ?, decided_by = ?, decided_at = ?, decision_note = ? WHERE id = ?",
      decision,
      actorId,
      now,
      note,
      id,
    );
    return { ok: true, approval: this.get(id, now)! };
  }
}
