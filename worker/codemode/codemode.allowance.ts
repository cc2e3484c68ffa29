/** How many workspaces' allowances are kept before full ones (which need no memory) are dropped. */
const TRACKED_WORKSPACES = 1024;

interface Bucket {
  balanceMs: number;
  at: number;
}

/**
 * Each workspace's allowance of Code Mode compute in this Worker isolate, a
 * token bucket in milliseconds: it holds at most `burstMs`, earns back
 * `refillMsPerSecond`, and every compile and step of a run is charged to it
 * afterwards (so a balance may go below zero). While it is at or below zero
 * the workspace's runs are refused with `code_mode_busy` and the seconds until
 * it is positive again.
 */
export class ComputeAllowance {
  private readonly buckets = new Map<string, Bucket>();

  constructor(
    readonly burstMs: number,
    readonly refillMsPerSecond: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** 0 when the workspace may compute now, else whole seconds (at least 1) until it may. */
  retryAfterSeconds(workspaceId: string): number {
    const balance = this.balance(workspaceId);
    return balance > 0 ? 0 : Math.max(1, Math.ceil(-balance / this.refillMsPerSecond));
  }

  charge(workspaceId: string, ms: number): void {
    if (!(ms > 0)) return;
    this.buckets.set(workspaceId, { balanceMs: this.balance(workspaceId) - ms, at: this.now() });
    if (this.buckets.size > TRACKED_WORKSPACES) this.forgetFull();
  }

  private balance(workspaceId: string): number {
    const bucket = this.buckets.get(workspaceId);
    if (!bucket) return this.burstMs;
    const earned = ((this.now() - bucket.at) / 1000) * this.refillMsPerSecond;
    return Math.min(this.burstMs, bucket.balanceMs + earned);
  }

  private forgetFull(): void {
    for (const workspaceId of this.buckets.keys()) if (this.balance(workspaceId) >= this.burstMs) this.buckets.delete(workspaceId);
  }
}
