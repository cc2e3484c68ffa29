import type { ToolPointers } from "../hooks/lifecycle/deployments.do.ts";
import { leaseClock } from "./clock.ts";
import { LEASE_MS, SKEW_MARGIN_MS, STALE_CHANGE_MS, type ChangeInForce, type LeaseGrant, type LeaseStatus } from "./lease.types.ts";

interface VersionRow {
  version: number;
  effective_at: number;
  granted_until: number;
  grants: number;
  [key: string]: SqlStorageValue;
}

/**
 * The workspace Durable Object's side of the read leases (docs/leases.md).
 * Everything is in SQLite and written before the object answers, so a
 * restarted object knows every lease it granted and still waits them out.
 *
 * - `lease_versions`: one row per version of the call-affecting state, with
 *   the latest expiry granted on it; rows whose leases have all run out (plus
 *   the margin) are dropped, except the current one.
 * - `lease_grants`: the latest expiry granted to each holder (one per
 *   isolate), so a change can leave out the holder that made it, which gives
 *   its lease up instead of waiting it out (Gray and Cheriton's relinquished
 *   lease). Rows past their expiry and the margin are dropped.
 * - `lease_changes`: the changes being written now. While one is open, grants
 *   are unsettled: what a holder reads under them may already include part of
 *   the change, so it is never reused under a later grant.
 */
export class LeaseGrants {
  readonly #sql: SqlStorage;

  constructor(sql: SqlStorage) {
    this.#sql = sql;
  }

  /** A lease on the current state for `holder`. `pointers` is read only when the holder lacks this token's. */
  grant(holder: string, heldToken: string | null, pointers: () => ToolPointers[]): LeaseGrant {
    const now = leaseClock.now();
    this.#closeStaleChanges(now);
    const current = this.#current(now);
    const expiresAt = now + LEASE_MS;
    this.#sql.exec(
      "UPDATE lease_versions SET granted_until = MAX(granted_until, ?), grants = grants + 1 WHERE version = ?",
      expiresAt,
      current.version,
    );
    this.#sql.exec(
      `INSERT INTO lease_grants (holder, expires_at) VALUES (?, ?)
       ON CONFLICT (holder) DO UPDATE SET expires_at = MAX(expires_at, excluded.expires_at)`,
      holder,
      expiresAt,
    );
    const settled = this.#openChanges() === 0;
    const base = `${this.#epoch()}.${current.version}`;
    const token = settled ? base : `${base}.${current.grants + 1}`;
    return {
      token,
      version: current.version,
      settled,
      durationMs: LEASE_MS,
      expiresAt,
      pointers: heldToken === token ? null : pointers(),
    };
  }

  /** Opens a change window before its writes; grants stay unsettled until it ends. */
  beginChange(id: string): void {
    const now = leaseClock.now();
    this.#closeStaleChanges(now);
    this.#current(now);
    this.#sql.exec("INSERT INTO lease_changes (id, opened_at) VALUES (?, ?)", id, now);
  }

  /**
   * Closes the window after the writes: a new version, in force once every
   * older lease has run out. `relinquishedBy` is the holder whose request made
   * the change: it has already dropped its leases, so they are not waited for.
   */
  endChange(id: string, relinquishedBy: string | null): ChangeInForce {
    this.#sql.exec("DELETE FROM lease_changes WHERE id = ?", id);
    return this.advance(relinquishedBy);
  }

  /**
   * A new version of the state, for a change this object made itself (a
   * deployment pointer) or one whose window just closed. Its effective time is
   * the latest expiry granted to any holder (but the one that gave its leases
   * up), plus the margin; since grants only ever extend, that covers every
   * lease on every older version.
   */
  advance(relinquishedBy: string | null = null): ChangeInForce {
    const now = leaseClock.now();
    const current = this.#current(now);
    const latest = this.#sql
      .exec<{ until: number }>("SELECT COALESCE(MAX(expires_at), 0) AS until FROM lease_grants WHERE holder IS NOT ?", relinquishedBy)
      .one().until;
    const effectiveAt = Math.max(now, latest + SKEW_MARGIN_MS);
    const version = current.version + 1;
    this.#sql.exec("INSERT INTO lease_versions (version, effective_at, granted_until, grants) VALUES (?, ?, 0, 0)", version, effectiveAt);
    this.#sql.exec("DELETE FROM lease_versions WHERE version < ? AND granted_until + ? < ?", version, SKEW_MARGIN_MS, now);
    this.#sql.exec("DELETE FROM lease_grants WHERE expires_at + ? < ?", SKEW_MARGIN_MS, now);
    return { version, effectiveAt, waitMs: effectiveAt - now };
  }

  status(): LeaseStatus {
    const current = this.#current(leaseClock.now());
    return {
      version: current.version,
      effectiveAt: current.effective_at,
      grantedUntil: current.granted_until,
      grants: current.grants,
      openChanges: this.#openChanges(),
    };
  }

  #current(now: number): VersionRow {
    const row = this.#sql.exec<VersionRow>("SELECT * FROM lease_versions ORDER BY version DESC LIMIT 1").toArray()[0];
    if (row) return row;
    const first: VersionRow = { version: 1, effective_at: now, granted_until: 0, grants: 0 };
    this.#sql.exec("INSERT INTO lease_versions (version, effective_at, granted_until, grants) VALUES (1, ?, 0, 0)", now);
    return first;
  }

  /**
   * A random name for this object's version sequence, made with its first
   * version, so a token never matches one from storage that was since wiped.
   */
  #epoch(): string {
    const row = this.#sql.exec<{ epoch: string }>("SELECT epoch FROM lease_epoch").toArray()[0];
    if (row) return row.epoch;
    const epoch = crypto.randomUUID();
    this.#sql.exec("INSERT INTO lease_epoch (epoch) VALUES (?)", epoch);
    return epoch;
  }

  #openChanges(): number {
    return this.#sql.exec<{ n: number }>("SELECT COUNT(*) AS n FROM lease_changes").one().n;
  }

  #closeStaleChanges(now: number): void {
    const closed = this.#sql.exec("DELETE FROM lease_changes WHERE opened_at < ?", now - STALE_CHANGE_MS).rowsWritten;
    if (closed > 0) this.advance();
  }
}
