import { DurableObject } from "cloudflare:workers";
import { applyMigrations, type Migration } from "../lib/sqlite-migrations.ts";

/** How many clients dynamic registration may hold, and how fast one source may add them. */
export const REGISTRATION_LIMITS = {
  /** Registrations from one source (an IPv4 address, an IPv6 /64) per rolling hour. */
  perSourcePerHour: 20,
  /** Registered clients at once, used or not; a registration past it waits for an unused one to expire. */
  maxClients: 10_000,
  /** A client no admin consented to within this time is deleted. */
  unusedLifetimeMs: 24 * 60 * 60 * 1000,
} as const;

const HOUR_MS = 60 * 60 * 1000;
/** A reservation whose registration never reported back (the request died) frees its slot after this. */
const RESERVATION_TIMEOUT_MS = 5 * 60 * 1000;
/** Clients deleted per alarm run; the alarm comes back at once while more are due. */
const SWEEP_BATCH = 200;

export type Reservation = { ok: true; id: string } | { ok: false; reason: "rate_limited" | "full"; retryAfterSeconds: number };

export const OAUTH_REGISTRY_MIGRATIONS: readonly Migration[] = [
  // 1: one row per registration: reserved before the library stores the client, confirmed with its id after.
  [
    `CREATE TABLE registrations (
      id            TEXT PRIMARY KEY,  -- reservation id
      client_id     TEXT UNIQUE,       -- null until the library registered the client
      source        TEXT NOT NULL,     -- IPv4 address or IPv6 /64 the registration came from
      registered_at INTEGER NOT NULL,  -- epoch ms
      used_at       INTEGER            -- first admin consent; null: never used
    )`,
    "CREATE INDEX registrations_by_source ON registrations (source, registered_at)",
    "CREATE INDEX registrations_unused ON registrations (used_at, registered_at)",
  ],
];

/**
 * The bookkeeping dynamic client registration needs and the OAuth library
 * does not keep: which source registered each client, whether an admin ever
 * consented to it, and how many there are. One instance for the deployment
 * (`getByName("registrations")`): registrations are rare, and one writer makes
 * each check-and-reserve one synchronous SQL step, so parallel registrations
 * cannot overrun a limit. An alarm deletes clients (their `client:<id>` record
 * in OAUTH_KV, the library's documented layout) that no admin consented to
 * within REGISTRATION_LIMITS.unusedLifetimeMs; such a client has no grant.
 * Clients registered before this object existed are unknown to it and are
 * left alone.
 */
export class OAuthRegistryDO extends DurableObject<Env> {
  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    void ctx.blockConcurrencyWhile(async () => {
      applyMigrations(ctx.storage, OAUTH_REGISTRY_MIGRATIONS);
    });
  }

  /** Takes a slot for one registration from `source`, or says which limit refuses it and for how long. */
  reserve(source: string, now = Date.now()): Reservation {
    const sql = this.ctx.storage.sql;
    sql.exec("DELETE FROM registrations WHERE client_id IS NULL AND registered_at <= ?", now - RESERVATION_TIMEOUT_MS);
    const recent = sql
      .exec<{ registered_at: number }>(
        "SELECT registered_at FROM registrations WHERE source = ? AND registered_at > ? ORDER BY registered_at",
        source,
        now - HOUR_MS,
      )
      .toArray();
    if (recent.length >= REGISTRATION_LIMITS.perSourcePerHour) {
      const freedAt = recent[recent.length - REGISTRATION_LIMITS.perSourcePerHour]!.registered_at + HOUR_MS;
      return { ok: false, reason: "rate_limited", retryAfterSeconds: secondsUntil(freedAt, now) };
    }
    const held = sql.exec<{ n: number }>("SELECT COUNT(*) AS n FROM registrations").one().n;
    if (held >= REGISTRATION_LIMITS.maxClients) {
      const oldestUnused = sql
        .exec<{ at: number | null }>("SELECT MIN(registered_at) AS at FROM registrations WHERE used_at IS NULL")
        .one().at;
      // Only an unused client's expiry frees a slot; with none, an hour is as good a guess as any.
      const freedAt = oldestUnused === null ? now + HOUR_MS : oldestUnused + REGISTRATION_LIMITS.unusedLifetimeMs;
      return { ok: false, reason: "full", retryAfterSeconds: secondsUntil(freedAt, now) };
    }
    const id = crypto.randomUUID();
    sql.exec("INSERT INTO registrations (id, source, registered_at) VALUES (?, ?, ?)", id, source, now);
    return { ok: true, id };
  }

  /** The library stored the client: the reservation becomes its record, and its expiry is scheduled. */
  async confirm(reservationId: string, clientId: string): Promise<void> {
    this.ctx.storage.sql.exec("UPDATE registrations SET client_id = ? WHERE id = ?", clientId, reservationId);
    if ((await this.ctx.storage.getAlarm()) === null) await this.#scheduleSweep();
  }

  /** The registration failed: nothing was stored, so the slot is given back. */
  release(reservationId: string): void {
    this.ctx.storage.sql.exec("DELETE FROM registrations WHERE id = ? AND client_id IS NULL", reservationId);
  }

  /** Whether the client may still be consented to: not a registration past its unused lifetime. */
  isLive(clientId: string, now = Date.now()): boolean {
    const row = this.ctx.storage.sql
      .exec<{ registered_at: number; used_at: number | null }>(
        "SELECT registered_at, used_at FROM registrations WHERE client_id = ?",
        clientId,
      )
      .toArray()[0];
    return !row || row.used_at !== null || row.registered_at > now - REGISTRATION_LIMITS.unusedLifetimeMs;
  }

  /** An admin consented to the client: it is kept from now on. */
  markUsed(clientId: string, now = Date.now()): void {
    this.ctx.storage.sql.exec("UPDATE registrations SET used_at = ? WHERE client_id = ? AND used_at IS NULL", now, clientId);
  }

  override async alarm(): Promise<void> {
    await this.sweep(Date.now());
  }

  /** Deletes the clients whose unused lifetime is over at `now`, then schedules the next sweep. Returns their ids. */
  async sweep(now: number): Promise<string[]> {
    const sql = this.ctx.storage.sql;
    sql.exec("DELETE FROM registrations WHERE client_id IS NULL AND registered_at <= ?", now - RESERVATION_TIMEOUT_MS);
    const due = sql
      .exec<{ client_id: string }>(
        "SELECT client_id FROM registrations WHERE used_at IS NULL AND client_id IS NOT NULL AND registered_at <= ? ORDER BY registered_at LIMIT ?",
        now - REGISTRATION_LIMITS.unusedLifetimeMs,
        SWEEP_BATCH,
      )
      .toArray()
      .map((row) => row.client_id);
    await Promise.all(due.map((clientId) => this.env.OAUTH_KV.delete(`client:${clientId}`)));
    for (const clientId of due) sql.exec("DELETE FROM registrations WHERE client_id = ? AND used_at IS NULL", clientId);
    await this.#scheduleSweep(due.length === SWEEP_BATCH ? now : undefined);
    return due;
  }

  /** The next sweep: at `at`, or when the oldest unused client's lifetime ends; none while nothing is unused. */
  async #scheduleSweep(at?: number): Promise<void> {
    const oldest = this.ctx.storage.sql
      .exec<{ at: number | null }>("SELECT MIN(registered_at) AS at FROM registrations WHERE used_at IS NULL AND client_id IS NOT NULL")
      .one().at;
    if (at !== undefined) await this.ctx.storage.setAlarm(at);
    else if (oldest !== null) await this.ctx.storage.setAlarm(oldest + REGISTRATION_LIMITS.unusedLifetimeMs);
  }
}

const secondsUntil = (at: number, now: number) => Math.max(1, Math.ceil((at - now) / 1000));
