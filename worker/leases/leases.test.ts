/**
 * Read leases with more than one isolate: each `isolate()` is a lease holder
 * with its own catalogs and keys, as a separate Worker isolate has, against
 * the workspace's real Durable Object and D1. The API's requests run in this
 * test's isolate (the Worker's own holder). The lease clock is a ManualClock
 * for everyone (object, holders, the change routes' waits): expiry is moved
 * to, never slept for.
 */
import { env, evictDurableObject, runInDurableObject } from "cloudflare:test";
import { afterEach, beforeEach, describe, it } from "vitest";
import { api, createKey, newTag, upstreamOrigin, upstreamReceived } from "../../test/helpers.ts";
import { ManualClock } from "../../test/lease-clock.ts";
import { KeyCache } from "../auth/keys.store.ts";
import { listToolBundles } from "../hooks/lifecycle/bundles.r2.ts";
import { BEFORE_TEST, gatewayFor, prefixHook } from "../calls/call-path.fixtures.ts";
import { CatalogCache, type Catalog } from "../calls/catalog.ts";
import { runToolCall } from "../calls/pipeline.ts";
import type { JsonObject } from "../../schema/hooks/contract.ts";
import { WorkspaceDO } from "../workspaces/workspace.do.ts";
import { workspaceClient } from "../workspaces/workspace.client.ts";
import { EFFECTIVE_AT_HEADER } from "./change-window.ts";
import { useLeaseClock } from "./clock.ts";
import { LeaseHolder, LeaseUnavailable } from "./holder.ts";
import { DISPATCH_MARGIN_MS, LEASE_MS, SKEW_MARGIN_MS, type LeaseGrant } from "./lease.types.ts";

let clock: ManualClock;
let restoreClock: () => void;
beforeEach(() => {
  clock = new ManualClock();
  restoreClock = useLeaseClock(clock);
});
afterEach(() => restoreClock());

/** Another isolate: its own leases, catalogs and keys. */
function isolate() {
  const leases = new LeaseHolder();
  return { leases, catalogs: new CatalogCache(leases), keys: new KeyCache(leases) };
}
type Isolate = ReturnType<typeof isolate>;

/** A before+after hook that marks the upstream query and every result title with `label`: a mix would show. */
const labelled = (label: string) => `export default defineToolAdapter({
  apiVersion: "rayrun.hooks/v1",
  before({ arguments: args }) {
    return { action: "continue", arguments: { query: "${label} " + args.query } };
  },
  after({ result }) {
    return { action: "return", result: { items: result.items.map((item) => ({ ...item, title: "${label} " + item.title })) } };
  },
});
`;
const LABELLED_TESTS = [...BEFORE_TEST, { stage: "after", arguments: { query: "sso" }, result: { items: [] } }];

/** A `before` that spends far more than CLOCK_TRUSTED_POLLS interrupt polls before letting the call through. */
const BUSY_HOOK = `export default defineToolAdapter({
  apiVersion: "rayrun.hooks/v1",
  before({ arguments: args }) {
    let n = 0;
    for (let i = 0; i < 300000; i++) n += i % 7;
    return { action: "continue", arguments: { query: args.query + (n > 0 ? "" : "!") } };
  },
});
`;

async function leaseGateway() {
  const tag = newTag();
  const gateway = await gatewayFor("demo", `${upstreamOrigin()}/t/${tag}/mcp`);
  const uid = gateway.uidOf("search_release_notes");
  /** One tools/call through `from`'s catalog (or the given one), in `env` (or another, e.g. with the object unreachable). */
  const call = async (
    from: Isolate,
    options: {
      env?: Env;
      catalog?: Catalog;
      tool?: string;
      arguments?: JsonObject;
      confirmLease?: boolean;
      profileId?: string;
      stillAuthorized?: () => Promise<boolean>;
    } = {},
  ) =>
    runToolCall({
      env: options.env ?? env,
      catalog: options.catalog ?? (await from.catalogs.load(options.env ?? env, gateway.ws)),
      publicName: `demo__${options.tool ?? "search_release_notes"}`,
      workspaceId: gateway.ws,
      keyId: "key_lease_test",
      profileId: options.profileId ?? gateway.defaultProfileId,
      arguments: options.arguments ?? { query: "sso" },
      requestId: `req_${newTag()}`,
      approvalLinks: { pages: "https://rayrun.test/#/w/ws/approvals", api: "https://rayrun.test/approvals" },
      grantSubject: "key:key_lease_test",
      confirmLeaseBeforeDispatch: options.confirmLease,
      stillAuthorized: options.stillAuthorized ?? (async () => true),
    });
  const sent = async () => (await upstreamReceived(tag)).calls.map((received) => (received.arguments as { query?: string }).query);
  const deployRequest = (revisionId: string) =>
    api(`${gateway.hook(uid)}/deployments/active`, { method: "PUT", body: { revisionId }, headers: gateway.writer.headers });
  return { ...gateway, tag, uid, call, sent, deployRequest };
}

/** The titles of a call's result, which a labelled `after` marked. */
const titles = (run: Awaited<ReturnType<typeof runToolCall>>) =>
  run.outcome.kind === "result" ? (run.outcome.result.structuredContent as { items: { title: string }[] }).items.map((i) => i.title) : [];

/** Whether `promise` has settled, after letting pending I/O run. */
async function isSettled(promise: Promise<unknown>): Promise<boolean> {
  let settled = false;
  void promise.then(
    () => (settled = true),
    () => (settled = true),
  );
  await new Promise((resolve) => setTimeout(resolve, 20));
  return settled;
}

/** `env` whose workspace Durable Objects answer grantLease through `around`. */
function withGrants(around: (grant: () => Promise<LeaseGrant>) => Promise<LeaseGrant>): Env {
  const namespace = env.WORKSPACE;
  const wrapped = {
    getByName(name: string) {
      const stub = namespace.getByName(name);
      return new Proxy(stub, {
        get(target, property) {
          if (property === "grantLease") {
            return (holder: string, token: string | null) => around(() => target.grantLease(holder, token));
          }
          return Reflect.get(target, property);
        },
      });
    },
  };
  return { ...env, WORKSPACE: wrapped as unknown as Env["WORKSPACE"] };
}

/** The workspace's Durable Object cannot be reached: every grant request fails as a dropped RPC does. */
const unreachable = withGrants(() => Promise.reject(new Error("Network connection lost.")));

describe("a deployment against leases other isolates hold", () => {
  it("is not used by an isolate whose lease is valid until that lease expires, and the deploy answers only after that", async ({
    expect,
  }) => {
    const g = await leaseGateway();
    const a = await g.revision(g.uid, prefixHook("A"), BEFORE_TEST);
    const b = await g.revision(g.uid, prefixHook("B"), BEFORE_TEST);
    await g.deploy(g.uid, "active", a.revisionId);
    const other = isolate();
    await other.catalogs.load(env, g.ws);
    const otherExpiry = clock.now() + LEASE_MS;

    const deploying = g.deployRequest(b.revisionId);
    // Written, and waiting out the other isolate's lease (its own isolate's it gave up).
    expect(await clock.untilSleeping()).toBe(otherExpiry + SKEW_MARGIN_MS);
    const requests = other.leases.grantRequests;
    expect((await g.call(other)).outcome.kind).toBe("result");
    // The lease is the recheck: no round trip, and still revision A.
    expect(other.leases.grantRequests).toBe(requests);
    expect(await g.sent()).toEqual(["A sso"]);

    clock.advance(LEASE_MS - DISPATCH_MARGIN_MS);
    expect(await isSettled(deploying)).toBe(false);
    // Past the margin the lease no longer holds: the next call renews it, one round trip, and runs B.
    expect((await g.call(other)).outcome.kind).toBe("result");
    expect(other.leases.grantRequests).toBe(requests + 1);
    expect(await g.sent()).toEqual(["A sso", "B sso"]);

    clock.advance(DISPATCH_MARGIN_MS + SKEW_MARGIN_MS - 1);
    expect(await isSettled(deploying)).toBe(false);
    clock.advance(1);
    const deployed = await deploying;
    expect(deployed.status).toBe(200);
    expect(Date.parse(deployed.body.effectiveAt)).toBe(otherExpiry + SKEW_MARGIN_MS);
    expect(deployed.headers.get(EFFECTIVE_AT_HEADER)).toBe(deployed.body.effectiveAt);
  });

  it("answers at once when no other isolate holds a lease: the isolate that made the change gives its own up", async ({ expect }) => {
    const g = await leaseGateway();
    const a = await g.revision(g.uid, prefixHook("A"), BEFORE_TEST);
    const b = await g.revision(g.uid, prefixHook("B"), BEFORE_TEST);
    await g.deploy(g.uid, "active", a.revisionId);
    // The API's own isolate holds a lease from authenticating the requests above.
    const deployed = await g.deployRequest(b.revisionId);
    expect(deployed.status).toBe(200);
    expect(Date.parse(deployed.body.effectiveAt)).toBe(clock.now());
    expect((await g.call(isolate())).outcome.kind).toBe("result");
    expect(await g.sent()).toEqual(["B sso"]);
  });
});

describe("a reset against leases other isolates hold", () => {
  it("keeps the hook's bundles until the reset is in force, so a call another isolate's lease still allows can load one", async ({
    expect,
  }) => {
    const g = await leaseGateway();
    const a = await g.revision(g.uid, prefixHook("A"), BEFORE_TEST);
    await g.deploy(g.uid, "active", a.revisionId);
    const other = isolate();
    await other.catalogs.load(env, g.ws);
    const bundles = await listToolBundles(env.BUNDLES, g.ws, g.uid);
    expect(bundles).toHaveLength(1);

    const resetting = api(g.hook(g.uid), { method: "DELETE", headers: g.writer.headers });
    expect(await clock.untilSleeping()).toBe(clock.now() + LEASE_MS + SKEW_MARGIN_MS);
    // The pointer is gone for new leases, but this isolate's lease still names revision A: its bundle is still there.
    expect(await env.BUNDLES.head(bundles[0]!)).not.toBeNull();
    expect((await g.call(other)).outcome.kind).toBe("result");
    expect(await g.sent()).toEqual(["A sso"]);

    clock.advance(LEASE_MS + SKEW_MARGIN_MS);
    const reset = await resetting;
    expect([reset.status, reset.body.reset.bundlesRemoved]).toEqual([200, 1]);
    expect(await listToolBundles(env.BUNDLES, g.ws, g.uid)).toEqual([]);
  });
});

describe("once a change's API has answered", () => {
  it("a first deployment, a block and a key revocation hold in every isolate", async ({ expect }) => {
    const g = await leaseGateway();
    const first = await g.revision(g.uid, prefixHook("FIRST"), BEFORE_TEST);
    const key = await createKey(g, ["tools:call"], g.defaultProfileId);
    const isolates = [isolate(), isolate()];
    for (const other of isolates) {
      expect((await g.call(other)).outcome.kind).toBe("result");
      expect(await other.keys.findActive(env, key)).toMatchObject({ workspaceId: g.ws, revokedAt: null });
    }
    expect(await g.sent()).toEqual(["sso", "sso"]);

    const deployed = await clock.settle(g.deployRequest(first.revisionId));
    expect(deployed.status).toBe(200);
    for (const other of isolates) expect((await g.call(other)).outcome.kind).toBe("result");
    expect(await g.sent()).toEqual(["sso", "sso", "FIRST sso", "FIRST sso"]);

    const blocked = await clock.settle(
      api(`/v1/workspaces/${g.ws}/tools/${g.uid}/policy`, {
        method: "PUT",
        key: g.adminKey,
        body: { profileId: g.defaultProfileId, mode: "block" },
      }),
    );
    expect(blocked.status).toBe(200);
    expect(Date.parse(blocked.headers.get(EFFECTIVE_AT_HEADER)!)).toBeLessThanOrEqual(clock.now());
    for (const other of isolates) expect((await g.call(other)).outcome).toEqual({ kind: "hidden" });
    expect(await g.sent()).toHaveLength(4);

    const keyId = (await api(`/v1/workspaces/${g.ws}/keys`, { key: g.adminKey })).body.keys.find((listed: { prefix: string }) =>
      key.startsWith(listed.prefix),
    ).id;
    const revoked = await clock.settle(api(`/v1/workspaces/${g.ws}/keys/${keyId}`, { method: "DELETE", key: g.adminKey }));
    expect(revoked.status).toBe(200);
    for (const other of isolates) expect(await other.keys.findActive(env, key)).toBeNull();
  });

  it("removing an override and deleting a profile hold in every isolate before they answer", async ({ expect }) => {
    const g = await leaseGateway();
    const policy = `/v1/workspaces/${g.ws}/tools/${g.uid}/policy`;
    const temporary = await api(`/v1/workspaces/${g.ws}/profiles`, { key: g.adminKey, body: { name: "temporary", defaultMode: "allow" } });
    expect(temporary.status).toBe(201);
    expect(temporary.headers.get(EFFECTIVE_AT_HEADER)).not.toBeNull();
    const profileId = temporary.body.id as string;
    await clock.settle(api(policy, { method: "PUT", key: g.adminKey, body: { profileId: g.defaultProfileId, mode: "block" } }));
    const isolates = [isolate(), isolate()];
    for (const other of isolates) {
      expect((await g.call(other)).outcome).toEqual({ kind: "hidden" });
      expect((await g.call(other, { profileId })).outcome.kind).toBe("result");
    }

    // The override goes: the default profile's allow applies again everywhere once the DELETE answers.
    const removed = await clock.settle(api(`${policy}/${g.defaultProfileId}`, { method: "DELETE", key: g.adminKey }));
    expect(removed.status).toBe(204);
    expect(Date.parse(removed.headers.get(EFFECTIVE_AT_HEADER)!)).toBeLessThanOrEqual(clock.now());
    for (const other of isolates) expect((await g.call(other)).outcome.kind).toBe("result");

    // The profile goes: no isolate lets a call through under it once the DELETE answers.
    const deleted = await clock.settle(api(`/v1/workspaces/${g.ws}/profiles/${profileId}`, { method: "DELETE", key: g.adminKey }));
    expect(deleted.status).toBe(204);
    expect(Date.parse(deleted.headers.get(EFFECTIVE_AT_HEADER)!)).toBeLessThanOrEqual(clock.now());
    for (const other of isolates) expect((await g.call(other, { profileId })).outcome).toEqual({ kind: "hidden" });
    expect(await g.sent()).toEqual(["sso", "sso", "sso", "sso"]);
  });
});

describe("a call racing its key's revocation", () => {
  it("is refused, never sent, when its lease lapses before dispatch and the key was revoked meanwhile", async ({ expect }) => {
    const g = await leaseGateway();
    const key = await createKey(g, ["tools:call"], g.defaultProfileId);
    const keyId = (await api(`/v1/workspaces/${g.ws}/keys`, { key: g.adminKey })).body.keys.find((listed: { prefix: string }) =>
      key.startsWith(listed.prefix),
    ).id;
    const other = isolate();
    // The request authenticated, and read its catalog, under the lease before the revocation.
    expect(await other.keys.findActive(env, key)).not.toBeNull();
    const authenticated = await other.catalogs.load(env, g.ws);
    const stillAuthorized = async () => (await other.keys.findActive(env, key)) !== null;
    const revoking = api(`/v1/workspaces/${g.ws}/keys/${keyId}`, { method: "DELETE", key: g.adminKey });
    await clock.untilSleeping();
    // Its upstream session took long enough for the lease to lapse before dispatch (a slow upstream `initialize`).
    clock.advance(LEASE_MS - DISPATCH_MARGIN_MS);
    const run = await g.call(other, { catalog: authenticated, stillAuthorized });
    expect(run.outcome).toMatchObject({ kind: "refused", source: "gateway", code: "unauthorized" });
    expect(run.logs.map((row) => [row.stage, row.outcome, row.code])).toEqual([["pre_dispatch", "refused", "unauthorized"]]);
    expect((await clock.settle(revoking)).status).toBe(200);
    expect(await g.sent()).toEqual([]);
  });

  it("is sent when the version moved for another change and the key still holds", async ({ expect }) => {
    const g = await leaseGateway();
    const other = isolate();
    const loaded = await other.catalogs.load(env, g.ws);
    let asked = 0;
    const stillAuthorized = async () => ((asked += 1), true);
    const renaming = api(`/v1/workspaces/${g.ws}`, { method: "PATCH", key: g.adminKey, body: { name: "renamed" } });
    await clock.untilSleeping();
    clock.advance(LEASE_MS - DISPATCH_MARGIN_MS);
    expect((await g.call(other, { catalog: loaded, stillAuthorized })).outcome.kind).toBe("result");
    expect(asked).toBe(1);
    expect((await clock.settle(renaming)).status).toBe(200);
    // A call that renews onto the same version asks nothing.
    expect((await g.call(other, { stillAuthorized })).outcome.kind).toBe("result");
    expect(asked).toBe(1);
    expect(await g.sent()).toEqual(["sso", "sso"]);
  });
});

describe("a call racing a rollback", () => {
  async function rolledBackGateway() {
    const g = await leaseGateway();
    const old = await g.revision(g.uid, labelled("OLD"), LABELLED_TESTS);
    const latest = await g.revision(g.uid, labelled("NEW"), LABELLED_TESTS);
    await g.deploy(g.uid, "active", old.revisionId);
    await g.deploy(g.uid, "active", latest.revisionId);
    return { ...g, old, latest };
  }

  it("runs the new revision whole while its lease holds, and is done before the rollback answers", async ({ expect }) => {
    const g = await rolledBackGateway();
    const other = isolate();
    await other.catalogs.load(env, g.ws);
    const rollingBack = g.deployRequest(g.old.revisionId);
    await clock.untilSleeping();
    const run = await g.call(other);
    expect(await isSettled(rollingBack)).toBe(false);
    expect(await g.sent()).toEqual(["NEW sso"]);
    expect(titles(run).length).toBeGreaterThan(0);
    expect(titles(run).every((title) => title.startsWith("NEW "))).toBe(true);
    expect(run.logs.map((row) => [row.stage, row.revisionId])).toEqual([
      ["before", g.latest.revisionId],
      ["after", g.latest.revisionId],
    ]);
    expect((await clock.settle(rollingBack)).status).toBe(200);
  });

  it("runs the rolled-back revision whole when its lease lapses between before and dispatch", async ({ expect }) => {
    const g = await rolledBackGateway();
    const other = isolate();
    const underNew = await other.catalogs.load(env, g.ws);
    const rollingBack = g.deployRequest(g.old.revisionId);
    await clock.untilSleeping();
    // The call's before runs under the lease it started with, which lapses before dispatch.
    clock.advance(LEASE_MS - DISPATCH_MARGIN_MS);
    const run = await g.call(other, { catalog: underNew });
    expect(await g.sent()).toEqual(["OLD sso"]);
    expect(titles(run).every((title) => title.startsWith("OLD "))).toBe(true);
    expect(run.logs.map((row) => [row.stage, row.revisionId])).toEqual([
      ["before", g.latest.revisionId],
      ["before", g.old.revisionId],
      ["after", g.old.revisionId],
    ]);
    const answered = await clock.settle(rollingBack);
    // Every isolate runs the old revision from here on; none can still run the new one.
    for (const holder of [other, isolate()]) expect(titles(await g.call(holder))[0]).toMatch(/^OLD /);
    expect(Date.parse(answered.body.effectiveAt)).toBeLessThanOrEqual(clock.now());
  });

  it("fails closed with revision_changed when the active revision moves again during the rerun", async ({ expect }) => {
    const g = await rolledBackGateway();
    const third = await g.revision(g.uid, labelled("THIRD"), LABELLED_TESTS);
    const other = isolate();
    const underNew = await other.catalogs.load(env, g.ws);
    await clock.settle(g.deployRequest(g.old.revisionId));
    let grants = 0;
    // Right after the call's renewal, another admin deploys a third revision, and the fresh lease lapses too.
    const moving = withGrants(async (grant) => {
      const granted = await grant();
      if (++grants === 1) expect((await clock.settle(g.deployRequest(third.revisionId))).status).toBe(200);
      return granted;
    });
    const run = await g.call(other, { env: moving, catalog: underNew });
    expect(run.outcome).toMatchObject({ kind: "refused", source: "gateway", code: "revision_changed" });
    expect(grants).toBe(2);
    expect(await g.sent()).toEqual([]);
    expect(run.logs.map((row) => [row.stage, row.code, row.revisionId])).toEqual([
      ["before", null, g.latest.revisionId],
      ["before", null, g.old.revisionId],
      ["pre_dispatch", "revision_changed", g.old.revisionId],
    ]);
  });
});

describe("an unreachable Durable Object", () => {
  it("costs nothing while the lease is valid, and fails every call closed once it has expired", async ({ expect }) => {
    const g = await leaseGateway();
    const hooked = await g.revision(g.uid, prefixHook("A"), BEFORE_TEST);
    await g.deploy(g.uid, "active", hooked.revisionId);
    const key = await createKey(g, ["tools:call"], g.defaultProfileId);
    const other = isolate();
    const catalog = await other.catalogs.load(env, g.ws);
    expect(await other.keys.findActive(env, key)).not.toBeNull();

    expect((await g.call(other, { env: unreachable, catalog })).outcome.kind).toBe("result");
    expect(await other.keys.findActive(unreachable, key)).not.toBeNull();

    clock.advance(LEASE_MS - DISPATCH_MARGIN_MS);
    const hookedRun = await g.call(other, { env: unreachable, catalog });
    expect(hookedRun.outcome).toMatchObject({ kind: "refused", source: "gateway", code: "hook_unavailable" });
    expect(hookedRun.logs.map((row) => [row.stage, row.code])).toEqual([
      ["before", null],
      ["pre_dispatch", "hook_unavailable"],
    ]);
    // A tool without a hook fails closed too: a block or a first deployment may be pending.
    const plain = await g.call(other, { env: unreachable, catalog, tool: "lookup_customer", arguments: { email: "ada@example.com" } });
    expect(plain.outcome).toMatchObject({ kind: "refused", source: "gateway", code: "workspace_unavailable" });
    await expect(other.catalogs.load(unreachable, g.ws)).rejects.toBeInstanceOf(LeaseUnavailable);
    await expect(other.keys.findActive(unreachable, key)).rejects.toBeInstanceOf(LeaseUnavailable);
    expect(await g.sent()).toEqual(["A sso"]);
    expect((await upstreamReceived(g.tag)).calls.map((received) => received.tool)).toEqual(["search_release_notes"]);
  });
});

describe("the Durable Object's record of its grants", () => {
  it("is durable: a restarted object still waits out the leases it granted", async ({ expect }) => {
    const name = `ws_restart_${newTag()}`;
    const holder = new LeaseHolder();
    const lease = await holder.lease(env, name);
    const grantedUntil = clock.now() + LEASE_MS;
    clock.advance(500);
    const stub = env.WORKSPACE.getByName(name);
    const before = await runInDurableObject(stub, (running: WorkspaceDO) => running);
    // The runtime drops the instance and everything it held in memory, as after an eviction; the next request
    // starts a new one over the same storage.
    await evictDurableObject(stub);
    await runInDurableObject(stub, (restarted: WorkspaceDO) => {
      expect(restarted).not.toBe(before);
      expect(restarted.leaseStatus()).toMatchObject({ version: lease.version, grantedUntil, grants: 1 });
      const inForce = restarted.endChange(restarted.beginChange(), null);
      expect(inForce).toEqual({ version: lease.version + 1, effectiveAt: grantedUntil + SKEW_MARGIN_MS, waitMs: 1_750 });
    });
    expect(holder.holds(lease)).toBe(true);
  });

  it("reuses a catalog across renewals on one version, but never one read while a change was being written", async ({ expect }) => {
    const g = await leaseGateway();
    const other = isolate();
    const first = await other.catalogs.load(env, g.ws);
    clock.advance(LEASE_MS);
    expect(await other.catalogs.load(env, g.ws)).toBe(first);

    const objects = workspaceClient(env, g.ws);
    const change = await objects.beginChange();
    clock.advance(LEASE_MS);
    const during = await other.catalogs.load(env, g.ws);
    expect(during).not.toBe(first);
    clock.advance(LEASE_MS);
    const later = await other.catalogs.load(env, g.ws);
    expect(later).not.toBe(during);
    expect(later.lease.version).toBe(first.lease.version);
    expect((await objects.endChange(change, null)).version).toBe(first.lease.version + 1);
  });
});

describe("Durable Object requests on the call path", () => {
  it("are a few renewals after responses under steady load, none on a request, and one when the clock cannot be trusted", async ({
    expect,
  }) => {
    const g = await leaseGateway();
    const light = await g.revision(g.uid, prefixHook("L"), BEFORE_TEST);
    await g.deploy(g.uid, "active", light.revisionId);
    const other = isolate();
    const afterResponses: Promise<unknown>[] = [];
    const waitUntil = (promise: Promise<unknown>) => afterResponses.push(promise);
    await other.catalogs.load(env, g.ws, waitUntil);
    const start = other.leases.grantRequests;
    let onRequestPath = 0;
    // 200 calls over 10 s of steady traffic.
    for (let i = 0; i < 200; i++) {
      clock.advance(50);
      const before = other.leases.grantRequests;
      const catalog = await other.catalogs.load(env, g.ws, waitUntil);
      // A renewal ahead starts only after the response (AFTER_RESPONSE_DELAY_MS): one counted here was waited for.
      if (other.leases.grantRequests > before) onRequestPath++;
      expect((await g.call(other, { catalog })).outcome.kind).toBe("result");
      await Promise.all(afterResponses.splice(0));
    }
    expect(onRequestPath).toBe(0);
    const renewals = other.leases.grantRequests - start;
    expect(renewals).toBeGreaterThanOrEqual(9);
    expect(renewals).toBeLessThanOrEqual(11);

    // A long before stage or a Code Mode program leaves the clock behind: the call confirms its lease first.
    const busy = await g.revision(g.uid, BUSY_HOOK, BEFORE_TEST);
    await clock.settle(g.deploy(g.uid, "active", busy.revisionId));
    await other.catalogs.load(env, g.ws);
    const requests = other.leases.grantRequests;
    expect((await g.call(other)).outcome.kind).toBe("result");
    expect(other.leases.grantRequests).toBe(requests + 1);
    await clock.settle(g.deploy(g.uid, "active", light.revisionId));
    await other.catalogs.load(env, g.ws);
    const confirmed = other.leases.grantRequests;
    expect((await g.call(other, { confirmLease: true })).outcome.kind).toBe("result");
    expect((await g.call(other)).outcome.kind).toBe("result");
    expect(other.leases.grantRequests).toBe(confirmed + 1);
  });
});
