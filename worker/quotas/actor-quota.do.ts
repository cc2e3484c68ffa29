import { DurableObject } from "cloudflare:workers";
import type { Outcome } from "../hooks/lifecycle/lifecycle.types.ts";
import { QUOTAS, rateLimited, RateQuotaTable } from "../hooks/lifecycle/quotas.do.ts";
import { applyMigrations, type Migration } from "../lib/sqlite-migrations.ts";

export const ACTOR_QUOTA_MIGRATIONS: readonly Migration[] = [
  // 1: uses of the actor's rolling-hour quotas (the same table as the workspace object's).
  [
    `CREATE TABLE quota_events (
      id      INTEGER PRIMARY KEY AUTOINCREMENT,
      quota   TEXT NOT NULL,
      subject TEXT NOT NULL,   -- the actor id
      at      INTEGER NOT NULL -- epoch ms
    )`,
    "CREATE INDEX quota_events_window ON quota_events (quota, subject, at)",
  ],
];

/**
 * Quotas that belong to whoever acts rather than to a workspace: one instance
 * per browser user (`user:<userId>`) or API key (`key:<keyId>`), reached
 * through actor-quota.client.ts. A class of its own because a browser user
 * may be a member of many workspaces and the compile allowance is per user:
 * counted in each workspace's object, a member of N workspaces would get N
 * allowances. A key belongs to one workspace, so its count would be the same
 * either way; it lives here too, so every compile is charged in one place.
 * Charging is one synchronous SQL step, so concurrent compiles of one actor
 * cannot overrun the limit.
 */
export class ActorQuotaDO extends DurableObject<Env> {
  readonly #quotas: RateQuotaTable;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    void ctx.blockConcurrencyWhile(async () => {
      applyMigrations(ctx.storage, ACTOR_QUOTA_MIGRATIONS);
    });
    this.#quotas = new RateQuotaTable(ctx.storage.sql);
  }

  /** Counts one compile attempt; compile, test and revision creation each call it first. */
  chargeCompile(actorId: string): Outcome<{ used: number; limit: number }> {
    const charge = this.#quotas.charge("compile_attempts", actorId, QUOTAS.compilesPerHour, Date.now());
    if (!charge.ok) return rateLimited("compile_attempts", charge, "Too many compile attempts by this user or key");
    return { ok: true, used: charge.used, limit: charge.limit };
  }

  compileUsage(actorId: string): { used: number; limit: number } {
    return { used: this.#quotas.used("compile_attempts", actorId, Date.now()), limit: QUOTAS.compilesPerHour };
  }
}
