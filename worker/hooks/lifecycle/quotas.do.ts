import { failure } from "./lifecycle.types.ts";

/**
 * Rate quotas and the history allowance, in the workspace Durable Object
 * (compile attempts: in each actor's ActorQuotaDO); the objects' migrations
 * create the tables. Every check-and-charge below is one synchronous run of
 * SQL with no await in between, so concurrent requests can never overrun a limit.
 */

export const HOUR_MS = 60 * 60 * 1000;
const MiB = 1024 * 1024;

/** The lifecycle's quotas and allowances (docs/lifecycle.md has the same table). */
export const QUOTAS = {
  /** Draft saves (and restores) per workspace per rolling hour. */
  draftSavesPerHour: 120,
  /** Compile attempts per browser user (across workspaces) or API key per rolling hour; tests and revision creation each compile once. */
  compilesPerHour: 120,
  /** Bytes of all draft versions kept per workspace. */
  historyBytes: 64 * MiB,
  /** Bytes of compiled bundles under the active and shadow pointers of all tools of a workspace. */
  deployedBytes: 16 * MiB,
} as const;

export type RateQuota = "draft_saves" | "compile_attempts";

export type Charge =
  { ok: true; used: number; limit: number; eventId: number } | { ok: false; used: number; limit: number; retryAfterSeconds: number };

/** The 429 a rolling-hour quota answers with once it is used up. */
export const rateLimited = (quota: RateQuota, charge: { used: number; limit: number; retryAfterSeconds: number }, what: string) =>
  failure(
    "rate_limited",
    `${what}: ${charge.limit} per hour; try again in ${charge.retryAfterSeconds} s`,
    { quota, used: charge.used, limit: charge.limit, retryAfterSeconds: charge.retryAfterSeconds },
    { "retry-after": String(charge.retryAfterSeconds) },
  );

/** Uses of rolling-hour quotas (`quota_events`), in the workspace's and each actor's Durable Object. */
export class RateQuotaTable {
  readonly #sql: SqlStorage;

  constructor(sql: SqlStorage) {
    this.#sql = sql;
  }

  /** Counts one use of a rolling-hour quota, or refuses with the seconds until the oldest use expires. */
  charge(quota: RateQuota, subject: string, limit: number, now: number): Charge {
    const refusal = this.refusal(quota, subject, limit, now);
    if (refusal) return refusal;
    const used = this.used(quota, subject, now);
    const eventId = this.#sql
      .exec<{ id: number }>("INSERT INTO quota_events (quota, subject, at) VALUES (?, ?, ?) RETURNING id", quota, subject, now)
      .one().id;
    return { ok: true, used: used + 1, limit, eventId };
  }

  /** The refusal `charge` would answer now, without counting a use; null when a use is left. */
  refusal(quota: RateQuota, subject: string, limit: number, now: number): Extract<Charge, { ok: false }> | null {
    const windowStart = now - HOUR_MS;
    this.#sql.exec("DELETE FROM quota_events WHERE quota = ? AND subject = ? AND at <= ?", quota, subject, windowStart);
    const used = this.used(quota, subject, now);
    if (used >= limit) {
      const oldest = this.#sql
        .exec<{ at: number }>(
          "SELECT at FROM quota_events WHERE quota = ? AND subject = ? AND at > ? ORDER BY at LIMIT 1 OFFSET ?",
          quota,
          subject,
          windowStart,
          used - limit,
        )
        .one().at;
      return { ok: false, used, limit, retryAfterSeconds: Math.max(1, Math.ceil((oldest + HOUR_MS - now) / 1000)) };
    }
    return null;
  }

  /** Gives back a use whose operation did not happen (e.g. its D1 write failed). */
  refund(eventId: number): void {
    this.#sql.exec("DELETE FROM quota_events WHERE id = ?", eventId);
  }

  used(quota: RateQuota, subject: string, now: number): number {
    return this.#sql
      .exec<{ n: number }>(
        "SELECT COUNT(*) AS n FROM quota_events WHERE quota = ? AND subject = ? AND at > ?",
        quota,
        subject,
        now - HOUR_MS,
      )
      .one().n;
  }
}

/** Bytes of each tool's draft versions (`hook_history_usage`), for the workspace's history allowance. */
export class HistoryAllowanceTable {
  readonly #sql: SqlStorage;

  constructor(sql: SqlStorage) {
    this.#sql = sql;
  }

  historyBytes(): number {
    return this.#sql.exec<{ n: number }>("SELECT COALESCE(SUM(bytes), 0) AS n FROM hook_history_usage").one().n;
  }

  /** Adds `bytes` to a tool's history, unless the workspace total would exceed `limit`. */
  reserveHistory(toolUid: string, bytes: number, limit: number): { ok: boolean; used: number; limit: number } {
    const used = this.historyBytes();
    if (used + bytes > limit) return { ok: false, used, limit };
    this.#sql.exec(
      "INSERT INTO hook_history_usage (tool_uid, bytes) VALUES (?, ?) ON CONFLICT (tool_uid) DO UPDATE SET bytes = bytes + excluded.bytes",
      toolUid,
      bytes,
    );
    return { ok: true, used: used + bytes, limit };
  }

  releaseHistory(toolUid: string, bytes: number): void {
    this.#sql.exec("UPDATE hook_history_usage SET bytes = MAX(0, bytes - ?) WHERE tool_uid = ?", bytes, toolUid);
  }

  /** A reset reclaims everything the tool's history used. */
  clearHistory(toolUid: string): void {
    this.#sql.exec("DELETE FROM hook_history_usage WHERE tool_uid = ?", toolUid);
  }
}
