import type { ToolPointers } from "../hooks/lifecycle/deployments.do.ts";

/** How long a lease lasts. A change is in force everywhere at most this long (plus SKEW_MARGIN_MS) after it is written. */
export const LEASE_MS = 2_000;

/**
 * A call dispatches under a lease only while more than this is left of it on
 * the isolate's clock. With SKEW_MARGIN_MS it absorbs how far an isolate's
 * frozen clock can lag real time at the check (docs/leases.md).
 */
export const DISPATCH_MARGIN_MS = 250;

/**
 * A `before` stage that spent more interrupt polls than this before dispatch
 * (ordinary stages use one or none) may have run long enough for the frozen
 * clock to fall behind by more than the margins: its call confirms the lease
 * with a round trip, whose answer moves the clock on.
 */
export const CLOCK_TRUSTED_POLLS = 10;

/** A change takes effect this long after the last lease granted before it expires, for clock skew and lag. */
export const SKEW_MARGIN_MS = 250;

/**
 * A change window still open after this long belongs to a request that died
 * mid-way (its isolate was evicted); the next grant closes it, which bumps
 * the version as its end would have. Longer than any write request runs.
 */
export const STALE_CHANGE_MS = 300_000;

/** One read lease on a workspace's call-affecting state, as the workspace's Durable Object grants it. */
export interface LeaseGrant {
  /**
   * Names the state the lease covers: two grants with one token cover the same
   * state, so what an isolate read under one is still current under the other.
   * A grant made while a change is being written has a token of its own, so
   * nothing read under it is reused.
   */
  token: string;
  version: number;
  /** No change was being written when the lease was granted. */
  settled: boolean;
  /** How long the lease lasts; the holder counts it on its own clock from before it asked. */
  durationMs: number;
  /** When it ends on the object's clock (what the object waits out; holders use `durationMs`). */
  expiresAt: number;
  /** Every tool's deployment pointers; null when the holder already has this token's. */
  pointers: ToolPointers[] | null;
}

/** A change made visible: from `effectiveAt` on, no lease on the state before it is valid anywhere. */
export interface ChangeInForce {
  version: number;
  /** On the object's clock: the latest expiry granted before the change, plus SKEW_MARGIN_MS (or now, if that has passed). */
  effectiveAt: number;
  /** How long after the object's answer that is. */
  waitMs: number;
}

/** What the object knows about its leases (GET …/lease). */
export interface LeaseStatus {
  version: number;
  /** When the current version took effect, on the object's clock. */
  effectiveAt: number;
  /** The latest expiry granted on the current version. */
  grantedUntil: number;
  /** Leases granted on the current version (first grants and renewals). */
  grants: number;
  /** Changes being written right now. */
  openChanges: number;
}

/** A write request's change window on its workspace's Durable Object. */
export interface ChangeWindow {
  readonly workspaceId: string;
  readonly id: string;
  ended: Promise<ChangeInForce> | null;
}
