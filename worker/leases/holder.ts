import type { ToolPointers } from "../hooks/lifecycle/deployments.do.ts";
import { afterResponse, type WaitUntil } from "../lib/after-response.ts";
import { workspaceClient } from "../workspaces/workspace.client.ts";
import { leaseClock } from "./clock.ts";
import { DISPATCH_MARGIN_MS, LEASE_MS, type LeaseGrant } from "./lease.types.ts";

/** A lease as one isolate holds it. */
export interface HeldLease {
  readonly workspaceId: string;
  /** Equal tokens, equal state (LeaseGrant.token). */
  readonly token: string;
  readonly version: number;
  /**
   * On this isolate's clock: the grant's duration counted from just before the
   * request for it was sent, which is never later than the object's own count
   * began. Clock skew between the two machines therefore cancels out.
   */
  readonly validUntil: number;
  /** Past this, the next use renews the lease after its response. */
  readonly renewAfter: number;
  readonly pointers: readonly ToolPointers[];
  /** The holder's generation for the workspace when the lease was asked for; giving leases up moves it on. */
  readonly generation: number;
}

/** The workspace's Durable Object could not grant a lease, and no valid one is held: calls fail closed. */
export class LeaseUnavailable extends Error {
  constructor(workspaceId: string, cause: unknown) {
    super(`no lease on workspace ${workspaceId}: its Durable Object could not be reached`, { cause });
    this.name = "LeaseUnavailable";
  }
}

/**
 * One isolate's leases, one per workspace it serves (docs/leases.md). A lease
 * valid past DISPATCH_MARGIN_MS is used without a round trip; one past half
 * its life is renewed after the response of the request that used it, so
 * steady traffic never waits; an expired one is renewed on the request path,
 * and if the object cannot be reached the caller gets LeaseUnavailable.
 *
 * The Worker has one holder per isolate (`isolateLeases`); tests build more to
 * stand for other isolates against the same Durable Object.
 */
export class LeaseHolder {
  #id: string | undefined;
  readonly #held = new Map<string, HeldLease>();
  readonly #requests = new Map<string, Promise<HeldLease>>();
  readonly #renewingAhead = new Set<string>();
  /** Per workspace, how many times this holder gave its leases up (`relinquish`), and when it last did. */
  readonly #generations = new Map<string, { generation: number; at: number }>();
  /** Grant requests sent to Durable Objects (the bench counts them per 1,000 calls). */
  grantRequests = 0;

  constructor(readonly maxWorkspaces = 1_000) {}

  /** Names this holder to the object, which records the latest expiry it granted to each. Made on first use: no randomness at startup. */
  get id(): string {
    this.#id ??= crypto.randomUUID();
    return this.#id;
  }

  /** A lease on the workspace valid past the dispatch margin: the one held, or a new grant (one round trip). */
  async lease(env: Env, workspaceId: string, waitUntil?: WaitUntil): Promise<HeldLease> {
    const held = this.#held.get(workspaceId);
    const now = leaseClock.now();
    if (!held || now >= held.validUntil - DISPATCH_MARGIN_MS) return this.renew(env, workspaceId);
    if (waitUntil && now >= held.renewAfter && !this.#renewingAhead.has(workspaceId)) {
      afterResponse(waitUntil, "lease renewal", () => this.renew(env, workspaceId).finally(() => this.#renewingAhead.delete(workspaceId)));
      this.#renewingAhead.add(workspaceId); // once scheduled: a waitUntil that threw leaves nothing pending
    }
    return held;
  }

  /**
   * Whether what was read under `lease` may still be acted on: the lease, or a
   * renewal of it on the same token, is valid past the dispatch margin. This is
   * the pre-dispatch recheck; it costs no I/O.
   */
  holds(lease: HeldLease): boolean {
    if (lease.generation !== this.#generation(lease.workspaceId)) return false;
    const current = this.#held.get(lease.workspaceId);
    const until = current?.token === lease.token ? Math.max(current.validUntil, lease.validUntil) : lease.validUntil;
    return leaseClock.now() < until - DISPATCH_MARGIN_MS;
  }

  /** A new grant now (one round trip), shared by every caller that asks while it is in flight. */
  renew(env: Env, workspaceId: string): Promise<HeldLease> {
    const pending = this.#requests.get(workspaceId);
    if (pending) return pending;
    const request = this.#request(env, workspaceId).finally(() => {
      if (this.#requests.get(workspaceId) === request) this.#requests.delete(workspaceId);
    });
    this.#requests.set(workspaceId, request);
    return request;
  }

  /**
   * Gives up every lease on the workspace, before this isolate's own change
   * closes its window: the change then need not wait for them. From here on
   * nothing read under them holds, and a grant asked for earlier but answered
   * later is not kept, so no call here acts on the state before the change.
   */
  relinquish(workspaceId: string): void {
    const now = leaseClock.now();
    if (!this.#generations.has(workspaceId) && this.#generations.size >= this.maxWorkspaces) {
      // Forgetting a workspace's count is safe once every lease asked for before it was moved has expired.
      for (const [id, entry] of this.#generations) if (entry.at < now - LEASE_MS) this.#generations.delete(id);
    }
    this.#generations.set(workspaceId, { generation: this.#generation(workspaceId) + 1, at: now });
    this.#held.delete(workspaceId);
    this.#requests.delete(workspaceId);
  }

  #generation(workspaceId: string): number {
    return this.#generations.get(workspaceId)?.generation ?? 0;
  }

  async #request(env: Env, workspaceId: string): Promise<HeldLease> {
    const previous = this.#held.get(workspaceId);
    const generation = this.#generation(workspaceId);
    // Read before sending: a frozen or lagging clock reads early, which only shortens the lease.
    const sentAt = leaseClock.now();
    this.grantRequests += 1;
    let grant: LeaseGrant;
    try {
      grant = await workspaceClient(env, workspaceId).grantLease(this.id, previous?.token ?? null);
    } catch (error) {
      throw new LeaseUnavailable(workspaceId, error);
    }
    const pointers = grant.pointers ?? (previous?.token === grant.token ? previous.pointers : null);
    if (!pointers) throw new LeaseUnavailable(workspaceId, new Error("the grant omitted pointers this isolate does not have"));
    const lease: HeldLease = {
      workspaceId,
      token: grant.token,
      version: grant.version,
      validUntil: sentAt + grant.durationMs,
      renewAfter: sentAt + grant.durationMs / 2,
      pointers,
      generation,
    };
    if (generation !== this.#generation(workspaceId)) return lease; // given up meanwhile: never holds, never kept
    const current = this.#held.get(workspaceId);
    // Requests never overlap per workspace, but a later one must never be replaced by an earlier one.
    if (!current || current.validUntil <= lease.validUntil) {
      if (!current && this.#held.size >= this.maxWorkspaces) this.#held.delete(this.#held.keys().next().value!);
      this.#held.set(workspaceId, lease);
    }
    return lease;
  }
}

/** This isolate's leases. */
export const isolateLeases = new LeaseHolder();
