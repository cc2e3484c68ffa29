import { base64UrlEncode, sha256Hex } from "../lib/crypto.ts";
import { newId, nowIso } from "../lib/ids.ts";
import type { WaitUntil } from "../lib/after-response.ts";
import { RefreshAheadCache } from "../lib/refresh-ahead.ts";
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

export async function createApiKey(db: D1Database, input: NewApiKey): Promise<{ key: ApiKeyRecord; secret: string }> {
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
  await db
    .prepare(
      `INSERT INTO api_keys (id, workspace_id, name, key_hash, prefix, scopes, profile_id, created_by, created_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
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
    )
    .run();
  return { key: toRecord(row), secret };
}

export async function listApiKeys(db: D1Database, workspaceId: string): Promise<ApiKeyRecord[]> {
  const { results } = await db
    .prepare("SELECT * FROM api_keys WHERE workspace_id = ? ORDER BY created_at, id")
    .bind(workspaceId)
    .all<ApiKeyRow>();
  return results.map(toRecord);
}

export async function revokeApiKey(db: D1Database, workspaceId: string, keyId: string): Promise<ApiKeyRecord | null> {
  const row = await db
    .prepare(`UPDATE api_keys SET revoked_at = COALESCE(revoked_at, ?) WHERE workspace_id = ? AND id = ? RETURNING *`)
    .bind(nowIso(), workspaceId, keyId)
    .first<ApiKeyRow>();
  if (row) forgetCachedKeys();
  return row ? toRecord(row) : null;
}

/**
 * Keys are looked up on every call, so each Worker isolate caches them briefly.
 * A revocation is immediate in the isolate that served it and takes effect
 * everywhere within KEY_CACHE_TTL_MS (documented in docs/services.md).
 */
const KEY_CACHE_TTL_MS = 2_000;
const keyCache = new RefreshAheadCache<string, ApiKeyRecord | null>("API key lookup", KEY_CACHE_TTL_MS, 10_000);

function forgetCachedKeys(): void {
  keyCache.invalidate();
}

export async function findActiveKey(db: D1Database, secret: string, waitUntil: WaitUntil): Promise<ApiKeyRecord | null> {
  const hash = await sha256Hex(secret);
  return keyCache.get(
    hash,
    async () => {
      const row = await db.prepare("SELECT * FROM api_keys WHERE key_hash = ? AND revoked_at IS NULL").bind(hash).first<ApiKeyRow>();
      return row ? toRecord(row) : null;
    },
    waitUntil,
  );
}
