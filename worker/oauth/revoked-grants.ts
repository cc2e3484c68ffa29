import type { WaitUntil } from "../lib/after-response.ts";
import { isolateLeases, type LeaseHolder } from "../leases/holder.ts";
import { ACCESS_TOKEN_TTL_SECONDS } from "./oauth.config.ts";

/**
 * How long KV may still serve a deleted grant or token record somewhere: it documents 60 s "or more" for a change
 * to reach every location.
 */
const KV_PROPAGATION_ALLOWANCE_MS = 10 * 60_000;
/** The library's default refresh token lifetime (the gateway does not change it): a grant lasts this long. */
const GRANT_LIFETIME_MS = 30 * 24 * 60 * 60_000;

/**
 * When no token of a grant revoked at `revokedAt` can still be valid. A client that refreshes while some location
 * still serves the deleted grant record gets a new access token, and the rotation writes the grant back: such a
 * grant can mint tokens until it expires, and the last of them lives ACCESS_TOKEN_TTL_SECONDS more.
 */
export function revokedGrantForgetAt(revokedAt: number, grantExpiresAt: number | null): number {
  const accessTokenMs = ACCESS_TOKEN_TTL_SECONDS * 1000;
  const grantEnds = grantExpiresAt ?? revokedAt + GRANT_LIFETIME_MS;
  return Math.max(revokedAt + KV_PROPAGATION_ALLOWANCE_MS, grantEnds) + accessTokenMs;
}

/**
 * The grant an access token was issued under. The OAuth library issues tokens as `{userId}:{grantId}:{secret}`
 * and stores each under a key naming that grant id, so a token it validated carries its grant's true id. Null for
 * any other shape, which the caller refuses.
 */
export function grantIdOfToken(token: string): string | null {
  const parts = token.split(":");
  return parts.length === 3 && parts[1] ? parts[1] : null;
}

/**
 * Writes the revocation of `grant` (before its tokens are deleted from KV, within the route's change window),
 * and forgets revocations whose tokens can no longer be valid.
 */
export async function recordRevokedGrant(
  db: D1Database,
  workspaceId: string,
  grant: { id: string; expiresAt: number | null },
  now = Date.now(),
): Promise<void> {
  const forgetAt = revokedGrantForgetAt(now, grant.expiresAt);
  await db.batch([
    db
      .prepare("INSERT OR IGNORE INTO revoked_oauth_grants (workspace_id, grant_id, revoked_at, forget_at) VALUES (?, ?, ?, ?)")
      .bind(workspaceId, grant.id, new Date(now).toISOString(), new Date(forgetAt).toISOString()),
    db.prepare("DELETE FROM revoked_oauth_grants WHERE workspace_id = ? AND forget_at < ?").bind(workspaceId, new Date(now).toISOString()),
  ]);
}

/** The hourly job: every workspace's revocations whose tokens can no longer be valid. */
export async function forgetRevokedGrants(db: D1Database, now = Date.now()): Promise<number> {
  const result = await db.prepare("DELETE FROM revoked_oauth_grants WHERE forget_at < ?").bind(new Date(now).toISOString()).run();
  return result.meta.changes;
}

/**
 * Whether a grant is revoked, as each isolate answers it on every /mcp request made with an OAuth token. An answer
 * is kept with the lease on the workspace it was read under, and used only while that lease's token lasts: a
 * revocation moves the version and its API answers only once every isolate's lease on the older version has run
 * out (docs/leases.md), so from then on the grant is refused everywhere, whatever KV still serves. The row is read
 * from D1 only after the lease was granted, so it includes every revocation the lease's version does.
 */
export class RevokedGrantCache {
  /** By workspace and grant: the answer and the lease token it holds under (bounded: any token can be presented). */
  readonly #answers = new Map<string, { revoked: boolean; token: string }>();

  constructor(
    readonly leases: LeaseHolder,
    readonly maxEntries = 10_000,
  ) {}

  async isRevoked(env: Env, workspaceId: string, grantId: string, waitUntil?: WaitUntil): Promise<boolean> {
    const key = `${workspaceId}\n${grantId}`;
    const lease = await this.leases.lease(env, workspaceId, waitUntil);
    const known = this.#answers.get(key);
    if (known?.token === lease.token) return known.revoked;
    const row = await env.DB.prepare("SELECT 1 AS revoked FROM revoked_oauth_grants WHERE workspace_id = ? AND grant_id = ?")
      .bind(workspaceId, grantId)
      .first<{ revoked: number }>();
    const revoked = row !== null;
    this.#answers.delete(key);
    if (this.#answers.size >= this.maxEntries) this.#answers.delete(this.#answers.keys().next().value!);
    this.#answers.set(key, { revoked, token: lease.token });
    return revoked;
  }
}

/** This isolate's answers, on this isolate's leases. */
export const isolateRevokedGrants = new RevokedGrantCache(isolateLeases);
