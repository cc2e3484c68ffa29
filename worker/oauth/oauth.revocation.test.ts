/**
 * Revoking an OAuth grant against leases other isolates hold. Deployed Workers KV may serve a deleted token or
 * grant record from a location's cache for 60 s or more, so KV alone cannot say a grant is gone; the workspace's
 * lease-covered list of revoked grants does. Each `isolate()` is a lease holder with its own answers, as another
 * Worker isolate has, against the workspace's real Durable Object, D1 and KV; the lease clock is a ManualClock.
 */
import { createExecutionContext, env, waitOnExecutionContext } from "cloudflare:test";
import { afterEach, beforeEach, describe, it } from "vitest";
import { api, demoGateway } from "../../test/helpers.ts";
import { ManualClock } from "../../test/lease-clock.ts";
import { authenticateOAuthToken } from "../auth/mcp-caller.ts";
import { EFFECTIVE_AT_HEADER } from "../leases/change-window.ts";
import { useLeaseClock } from "../leases/clock.ts";
import { LeaseHolder } from "../leases/holder.ts";
import { LEASE_MS, SKEW_MARGIN_MS } from "../leases/lease.types.ts";
import { exchange, signInAdmin } from "./oauth.fixtures.ts";
import { authorizationServer, mcpResource, publicUrl, TOKEN_PATH } from "./oauth.config.ts";
import { forgetRevokedGrants, grantIdOfToken, recordRevokedGrant, revokedGrantForgetAt, RevokedGrantCache } from "./revoked-grants.ts";

let clock: ManualClock;
let restoreClock: () => void;
beforeEach(() => {
  clock = new ManualClock();
  restoreClock = useLeaseClock(clock);
});
afterEach(() => restoreClock());

/** Another isolate: its own leases and revoked-grant answers. */
function isolate() {
  const leases = new LeaseHolder();
  return { leases, revoked: new RevokedGrantCache(leases) };
}

/**
 * Workers KV as one location's edge cache serves it: a record read once is served as read, even after it was
 * deleted or rewritten centrally (what deployed KV does for 60 s or more). Writes and listings reach the real store.
 */
function kvCachedAtOneLocation(kv: KVNamespace): KVNamespace {
  const served = new Map<string, unknown>();
  const cachedGet = async (key: string, options?: unknown) => {
    const cacheKey = `${key}\n${JSON.stringify(options ?? null)}`;
    if (!served.has(cacheKey)) served.set(cacheKey, await kv.get(key, options as KVNamespaceGetOptions<"json">));
    return served.get(cacheKey);
  };
  return new Proxy(kv, {
    get(target, property) {
      if (property === "get") return cachedGet;
      const value: unknown = Reflect.get(target, property);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}

async function grantedToken() {
  const gateway = await demoGateway();
  const devCookie = await signInAdmin(gateway, `admin-${gateway.tag}@example.com`);
  const { token, refreshToken, clientId } = await exchange(devCookie, `${gateway.ws} ${gateway.defaultProfileId}`);
  const grantId = grantIdOfToken(token)!;
  const revoke = () => api(`/v1/workspaces/${gateway.ws}/oauth/grants/${grantId}`, { method: "DELETE", key: gateway.adminKey });
  return { ...gateway, token, refreshToken, clientId, grantId, revoke };
}

/** The library's own check of the token against KV as `staleEnv` serves it: what a location with a stale cache sees. */
async function kvStillServes(staleEnv: Env, token: string): Promise<boolean> {
  const server = authorizationServer(staleEnv)!;
  return (await server.validateToken(mcpResource(publicUrl(staleEnv)!), token, staleEnv)) !== null;
}

describe("an OAuth grant's revocation", () => {
  it("holds in every isolate once its API has answered, though KV still serves the grant's token", async ({ expect }) => {
    const g = await grantedToken();
    const stale = { ...env, OAUTH_KV: kvCachedAtOneLocation(env.OAUTH_KV) };
    const isolates = [isolate(), isolate()];
    for (const other of isolates) {
      expect(await authenticateOAuthToken(stale, g.token, undefined, other.revoked)).toMatchObject({ kind: "caller", workspaceId: g.ws });
    }
    const otherExpiry = clock.now() + LEASE_MS;

    const revoking = g.revoke();
    // Written, and waiting out the other isolates' leases on the state before it.
    expect(await clock.untilSleeping()).toBe(otherExpiry + SKEW_MARGIN_MS);
    // Until they run out, those isolates still act on what their leases cover, as the change's answer accounts for.
    for (const other of isolates) expect((await authenticateOAuthToken(stale, g.token, undefined, other.revoked)).kind).toBe("caller");

    const revoked = await clock.settle(revoking);
    expect(revoked.status).toBe(200);
    expect(revoked.body).toMatchObject({ id: g.grantId, clientId: g.clientId });
    expect(Date.parse(revoked.body.effectiveAt)).toBe(otherExpiry + SKEW_MARGIN_MS);
    expect(revoked.headers.get(EFFECTIVE_AT_HEADER)).toBe(revoked.body.effectiveAt);

    // KV as a stale location serves it still validates the token; every isolate refuses it all the same.
    expect(await kvStillServes(stale, g.token)).toBe(true);
    for (const other of [...isolates, isolate()]) {
      expect(await authenticateOAuthToken(stale, g.token, undefined, other.revoked)).toMatchObject({ kind: "refused", status: 401 });
    }
  });

  it("also refuses an access token minted after the revocation from a grant record KV still served", async ({ expect }) => {
    const g = await grantedToken();
    const stale = { ...env, OAUTH_KV: kvCachedAtOneLocation(env.OAUTH_KV) };
    // This location has read the grant record (a refresh reads it) before the revocation.
    expect(await stale.OAUTH_KV.get(`grant:${g.ws}:${g.grantId}`, { type: "json" })).not.toBeNull();
    expect((await clock.settle(g.revoke())).status).toBe(200);

    const ctx = createExecutionContext();
    const refreshed = await authorizationServer(stale)!.fetch(
      new Request(`${publicUrl(stale)}${TOKEN_PATH}`, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({ grant_type: "refresh_token", refresh_token: g.refreshToken, client_id: g.clientId }),
      }),
      stale,
      ctx,
    );
    await waitOnExecutionContext(ctx);
    expect(refreshed.status).toBe(200);
    const { access_token: minted } = (await refreshed.json()) as { access_token: string };
    expect(grantIdOfToken(minted)).toBe(g.grantId);
    expect(await kvStillServes(stale, minted)).toBe(true);
    expect(await authenticateOAuthToken(stale, minted, undefined, isolate().revoked)).toMatchObject({ kind: "refused", status: 401 });
  });

  it("is remembered until no token of the grant can be valid, then forgotten", async ({ expect }) => {
    const workspaceId = `ws_forget_${crypto.randomUUID().slice(0, 8)}`;
    const revokedAt = Date.now();
    const grantExpiresAt = revokedAt + 3 * 86_400_000;
    const forgetAt = revokedGrantForgetAt(revokedAt, grantExpiresAt);
    // The grant's last access token, minted just before the grant expires, lives an hour past it.
    expect(forgetAt).toBe(grantExpiresAt + 3_600_000);
    // A grant that expires at once still outlasts the time KV may serve its records, and its tokens that hour.
    expect(revokedGrantForgetAt(revokedAt, revokedAt)).toBe(revokedAt + 600_000 + 3_600_000);

    await recordRevokedGrant(env.DB, workspaceId, { id: "grant-a", expiresAt: grantExpiresAt }, revokedAt);
    const count = () =>
      env.DB.prepare("SELECT COUNT(*) AS n FROM revoked_oauth_grants WHERE workspace_id = ?")
        .bind(workspaceId)
        .first<{ n: number }>()
        .then((row) => row?.n);
    await forgetRevokedGrants(env.DB, forgetAt - 1);
    expect(await count()).toBe(1);
    // A later revocation in the workspace also drops the ones past their time.
    await recordRevokedGrant(env.DB, workspaceId, { id: "grant-b", expiresAt: null }, forgetAt + 1);
    expect(await count()).toBe(1);
    const secondForgetAt = revokedGrantForgetAt(forgetAt + 1, null);
    await forgetRevokedGrants(env.DB, secondForgetAt);
    expect(await count()).toBe(1);
    await forgetRevokedGrants(env.DB, secondForgetAt + 1);
    expect(await count()).toBe(0);
  });
});
