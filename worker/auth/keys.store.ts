import { base64UrlEncode, sha256Hex } from "../lib/crypto.ts";
import { newId, nowIso } from "../lib/ids.ts";
import type { WaitUntil } from "../lib/after-response.ts";
import { isolateLeases, type HeldLease, type LeaseHolder } from "../leases/holder.ts";
import type { Scope } from "./principal.ts";

export interface ApiKeyRecord {
  id: string;
  workspaceId: string;
  name: string;
  prefix: string;
  scopes: Scope[];
  profileId: string | null;
  createdBy: string;
  createdAt: string;
  revokedAt: string | null;
}

interface ApiKeyRow {
  id: string;
  workspace_id: string;
  name: string;
  prefix: string;
  scopes: string;
  profile_id: string | null;
  created_by: string;
  created_at: string;
  revoked_at: string | null;
}

const toRecord = (row: ApiKeyRow): ApiKeyRecord => ({
  id: row.id,
  workspaceId: row.workspace_id,
  name: row.name,
  prefix: row.prefix,
  scopes: JSON.parse(row.scopes) as Scope[],
  profileId: row.profile_id,
  createdBy: row.created_by,
  createdAt: row.created_at,
  revokedAt: row.revoked_at,
});

/** `rr_` and 32 random bytes: the secret is shown once and only its hash is stored. */
function generateKeySecret(): string {
  return `rr_${base64UrlEncode(crypto.getRandomValues(new Uint8Array(32)))}`;
}

export interface NewApiKey {
  workspaceId: string;
  name: string;
  scopes: Scope[];
  profileId: string | null;
  createdBy: string;
}

/**
 * The condition a new key's maker must still meet when the key is written, in the same statement: a key that makes a
 * key is not revoked, a member is not being removed (a key made by `bootstrap` has no maker to check). Revoking a key
 * revokes the keys made with it in one statement too, so a key made while its maker is revoked is either revoked
 * with it or never written.
 */
function makerStillActive(workspaceId: string, createdBy: string): { sql: string; binds: string[] } {
  if (createdBy.startsWith("key_")) {
    return {
      sql: "EXISTS (SELECT 1 FROM api_keys WHERE workspace_id = ? AND id = ? AND revoked_at IS NULL)",
      binds: [workspaceId, createdBy],
    };
  }
  if (createdBy.startsWith("usr_")) {
    return {
      sql: "EXISTS (SELECT 1 FROM memberships WHERE workspace_id = ? AND user_id = ? AND removal_started_at IS NULL)",
      binds: [workspaceId, createdBy],
    };
  }
  return { sql: "1", binds: [] };
}

/**
 * Unrevoked keys one workspace holds. Every isolate may keep each of them in its key cache, and the keys list returns
 * them all, so their number is bounded like a workspace's services and profiles.
 */
export const MAX_ACTIVE_KEYS = 1_000;

/**
 * Creates a key: `maker_revoked` when its maker lost its standing meanwhile (a revoked key, a member being removed),
 * `full` when the workspace holds MAX_ACTIVE_KEYS. Both are checked in the insert itself, so concurrent creates
 * cannot pass the bound together.
 */
export async function createApiKey(
  db: D1Database,
  input: NewApiKey,
): Promise<{ key: ApiKeyRecord; secret: string } | "maker_revoked" | "full"> {
  const secret = generateKeySecret();
  const row: ApiKeyRow = {
    id: newId("key"),
    workspace_id: input.workspaceId,
    name: input.name,
    prefix: secret.slice(0, 10),
    scopes: JSON.stringify([...new Set(input.scopes)].sort()),
    profile_id: input.profileId,
    created_by: input.createdBy,
    created_at: nowIso(),
    revoked_at: null,
  };
  const maker = makerStillActive(input.workspaceId, input.createdBy);
  const written = await db
    .prepare(
      `INSERT INTO api_keys (id, workspace_id, name, key_hash, prefix, scopes, profile_id, created_by, created_at)
       SELECT ?, ?, ?, ?, ?, ?, ?, ?, ? WHERE ${maker.sql}
         AND (SELECT COUNT(*) FROM api_keys WHERE workspace_id = ? AND revoked_at IS NULL) < ${MAX_ACTIVE_KEYS}`,
    )
    .bind(
      row.id,
      row.workspace_id,
      row.name,
      await sha256Hex(secret),
      row.prefix,
      row.scopes,
      row.profile_id,
      row.created_by,
      row.created_at,
      ...maker.binds,
      row.workspace_id,
    )
    .run();
  if (written.meta.changes === 1) return { key: toRecord(row), secret };
  return (await activeKeyCount(db, input.workspaceId)) >= MAX_ACTIVE_KEYS ? "full" : "maker_revoked";
}

/**
 * A new secret for an unrevoked key: the same key (id, name, scopes, profile, maker), so the keys made with it, its
 * upstream grants and its approvals stay as they are, while the old secret matches nothing. Answers `revoked` for a
 * revoked key, null when the workspace has no such key. The caller puts the change in force (the key caches of every
 * isolate are read under leases whose version it moves).
 */
export async function rotateApiKey(
  db: D1Database,
  workspaceId: string,
  keyId: string,
): Promise<{ key: ApiKeyRecord; secret: string } | "revoked" | null> {
  const secret = generateKeySecret();
  const row = await db
    .prepare("UPDATE api_keys SET key_hash = ?, prefix = ? WHERE workspace_id = ? AND id = ? AND revoked_at IS NULL RETURNING *")
    .bind(await sha256Hex(secret), secret.slice(0, 10), workspaceId, keyId)
    .first<ApiKeyRow>();
  if (row) return { key: toRecord(row), secret };
  const exists = await db.prepare("SELECT 1 FROM api_keys WHERE workspace_id = ? AND id = ?").bind(workspaceId, keyId).first();
  return exists ? "revoked" : null;
}

async function activeKeyCount(db: D1Database, workspaceId: string): Promise<number> {
  return (
    (await db
      .prepare("SELECT COUNT(*) AS active FROM api_keys WHERE workspace_id = ? AND revoked_at IS NULL")
      .bind(workspaceId)
      .first<number>("active")) ?? 0
  );
}

/** `made`: the keys made by ?2 in workspace ?1, and the keys made with those, however deep (revoked ones too). */
const MADE_BY = `WITH RECURSIVE made(id) AS (
  SELECT id FROM api_keys WHERE workspace_id = ?1 AND created_by = ?2
  UNION SELECT k.id FROM api_keys k JOIN made ON k.created_by = made.id WHERE k.workspace_id = ?1
)`;

/**
 * Revoked keys a key list names, the most recently revoked first. Every unrevoked key (at most MAX_ACTIVE_KEYS) is
 * listed; revoked keys are kept for the records that name them and grow with every rotation, while the lists are
 * read whole, so the older ones are left out.
 */
export const MAX_LISTED_REVOKED_KEYS = 1_000;

/** A workspace's keys, oldest first: every unrevoked key and the newest MAX_LISTED_REVOKED_KEYS revoked ones. */
export async function listApiKeys(
  db: D1Database,
  workspaceId: string,
): Promise<{ keys: ApiKeyRecord[]; olderRevokedKeysOmitted: boolean }> {
  const [live, revoked] = await db.batch<ApiKeyRow>([
    db.prepare("SELECT * FROM api_keys WHERE workspace_id = ? AND revoked_at IS NULL").bind(workspaceId),
    db
      .prepare("SELECT * FROM api_keys WHERE workspace_id = ? AND revoked_at IS NOT NULL ORDER BY revoked_at DESC, id LIMIT ?")
      .bind(workspaceId, MAX_LISTED_REVOKED_KEYS + 1),
  ]);
  const rows = [...live!.results, ...revoked!.results.slice(0, MAX_LISTED_REVOKED_KEYS)];
  rows.sort((a, b) => (a.created_at === b.created_at ? (a.id < b.id ? -1 : 1) : a.created_at < b.created_at ? -1 : 1));
  return { keys: rows.map(toRecord), olderRevokedKeysOmitted: revoked!.results.length > MAX_LISTED_REVOKED_KEYS };
}

/**
 * Revokes a key and every key made with it, however deep, in one batch (see revokeKeysCreatedBy), unless that would
 * leave the workspace with no way to administer it: no admin member (one not being removed) and no unrevoked key
 * with `admin`. A workspace made without an admin email has only keys; revoking its last admin key would lock
 * everyone out for good, so it is refused (`last_admin`) and nothing is revoked. The guard is the batch's last
 * statement (bound_guards, migration 0023), so two admin keys revoking each other at once cannot both succeed.
 * Null when the workspace has no such key.
 */
export async function revokeKeyTree(
  db: D1Database,
  workspaceId: string,
  keyId: string,
): Promise<{ key: ApiKeyRecord; revoked: string[]; made: string[] } | null | "last_admin"> {
  const now = nowIso();
  try {
    const [key, revoked, made] = await db.batch<ApiKeyRow>([
      db
        .prepare("UPDATE api_keys SET revoked_at = COALESCE(revoked_at, ?3) WHERE workspace_id = ?1 AND id = ?2 RETURNING *")
        .bind(workspaceId, keyId, now),
      ...madeRevocation(db, workspaceId, keyId, now),
      // Only a batch that revoked an admin key just now can be the one that left the workspace without an admin.
      db
        .prepare(
          `${MADE_BY} INSERT INTO bound_guards (bound) SELECT 'workspace_admin'
           WHERE NOT EXISTS (SELECT 1 FROM memberships WHERE workspace_id = ?1 AND role = 'admin' AND removal_started_at IS NULL)
             AND NOT EXISTS (SELECT 1 FROM api_keys AS k, json_each(k.scopes) AS scope
                             WHERE k.workspace_id = ?1 AND k.revoked_at IS NULL AND scope.value = 'admin')
             AND EXISTS (SELECT 1 FROM api_keys AS k, json_each(k.scopes) AS scope
                         WHERE k.workspace_id = ?1 AND k.revoked_at = ?3 AND scope.value = 'admin'
                           AND (k.id = ?2 OR k.id IN (SELECT made.id FROM made)))`,
        )
        .bind(workspaceId, keyId, now),
    ]);
    const row = key!.results[0];
    if (!row) return null;
    return {
      key: toRecord(row),
      revoked: revoked!.results.map((made) => made.id).sort(),
      made: made!.results.map((made) => made.id).sort(),
    };
  } catch (error) {
    if (String(error).includes("bound_broken")) return "last_admin";
    throw error;
  }
}

/**
 * Revokes every active key `maker` created in the workspace, and every key made with one of those, however deep.
 * `maker` is a user (an admin key makes keys whose `created_by` is the key, not the user: all of them act with the
 * user's standing) or a key (the keys made with it, when it is revoked). A revoked key's keys are followed too.
 * Finding the keys and revoking them is one statement, so no key made meanwhile with one of them escapes: it is in
 * the tree, or its maker was already revoked and it was never written (`createApiKey`). Answers the keys it revoked,
 * and every key of that tree (revoked before too), whose grants, links and approvals go with them.
 */
export async function revokeKeysCreatedBy(
  db: D1Database,
  workspaceId: string,
  maker: string,
): Promise<{ revoked: string[]; made: string[] }> {
  const [revoked, made] = await db.batch<{ id: string }>(madeRevocation(db, workspaceId, maker, nowIso()));
  return { revoked: revoked!.results.map((row) => row.id).sort(), made: made!.results.map((row) => row.id).sort() };
}

/** Revokes the keys `maker` made (MADE_BY) that are active, answering their ids; then lists every key of the tree. */
function madeRevocation(db: D1Database, workspaceId: string, maker: string, now: string): [D1PreparedStatement, D1PreparedStatement] {
  return [
    db
      .prepare(
        `${MADE_BY} UPDATE api_keys SET revoked_at = ?3 WHERE workspace_id = ?1 AND revoked_at IS NULL AND id IN (SELECT id FROM made) RETURNING id`,
      )
      .bind(workspaceId, maker, now),
    db.prepare(`${MADE_BY} SELECT id FROM made`).bind(workspaceId, maker),
  ];
}

/** How long an unknown secret is remembered as unknown: no lease covers it, and only a new key could change it. */
const UNKNOWN_KEY_TTL_MS = 2_000;

/**
 * Keys are looked up on every request, so each isolate keeps the ones it has
 * read, each tagged with the lease on its workspace it was read under. A key
 * is served from memory only while that lease's version lasts: a revocation
 * moves the version, and its API answer waits until every isolate's lease on
 * the older version has run out (docs/leases.md), so once it has answered the
 * key is refused everywhere. A key is read from D1 only after its lease was
 * granted, so the read includes every revocation the lease's version does.
 */
export class KeyCache {
  readonly #known = new Map<string, { record: ApiKeyRecord; token: string }>();
  /** Secrets that match no active key, with when they were read (bounded: any secret can be tried). */
  readonly #unknown = new Map<string, number>();

  constructor(
    readonly leases: LeaseHolder,
    readonly maxEntries = 10_000,
  ) {}

  async findActive(env: Env, secret: string, waitUntil?: WaitUntil): Promise<ApiKeyRecord | null> {
    const hash = await sha256Hex(secret);
    const known = this.#known.get(hash);
    if (known) {
      const lease = await this.leases.lease(env, known.record.workspaceId, waitUntil);
      return lease.token === known.token ? known.record : this.#readUnder(env, hash, lease);
    }
    const unknownSince = this.#unknown.get(hash);
    if (unknownSince !== undefined && Date.now() - unknownSince < UNKNOWN_KEY_TTL_MS) return null;
    const readAt = Date.now();
    const record = await readActiveKey(env.DB, hash);
    if (!record) {
      remember(this.#unknown, hash, readAt, this.maxEntries);
      return null;
    }
    // That read may predate a revocation the workspace's current lease already covers: read again under the lease.
    return this.#readUnder(env, hash, await this.leases.lease(env, record.workspaceId, waitUntil));
  }

  async #readUnder(env: Env, hash: string, lease: HeldLease): Promise<ApiKeyRecord | null> {
    const record = await readActiveKey(env.DB, hash);
    if (record) {
      remember(this.#known, hash, { record, token: lease.token }, this.maxEntries);
      return record;
    }
    this.#known.delete(hash);
    remember(this.#unknown, hash, Date.now(), this.maxEntries);
    return null;
  }
}

function remember<V>(map: Map<string, V>, key: string, value: V, maxEntries: number): void {
  if (!map.has(key) && map.size >= maxEntries) map.delete(map.keys().next().value!);
  map.set(key, value);
}

async function readActiveKey(db: D1Database, hash: string): Promise<ApiKeyRecord | null> {
  const row = await db.prepare("SELECT * FROM api_keys WHERE key_hash = ? AND revoked_at IS NULL").bind(hash).first<ApiKeyRow>();
  return row ? toRecord(row) : null;
}

/** This isolate's keys, on this isolate's leases. */
export const isolateKeys = new KeyCache(isolateLeases);
