/** A place taken from `FairSlots`; giving it back twice is harmless. */
export type Release = () => void;

interface Ticket {
  workspaceId: string;
}

/** How many workspaces' last turn is remembered; a forgotten one ranks as never served. */
const SERVED_MEMORY = 1024;

/**
 * A bounded number of places (Code Mode's compute lane, its sandboxes for runs
 * waiting on tools) shared between workspaces. A workspace holds at most
 * `perWorkspace` of them, and a place that frees up goes to the waiting
 * workspace whose last turn is the oldest (one never served first), its
 * earliest waiter first: a workspace that keeps asking cannot crowd out one
 * that asks once.
 *
 * A waiter polls from its own request instead of awaiting a promise that the
 * releasing run resolves: in workerd a promise resolved from another request's
 * handler never wakes the request that awaits it (the waiter would hang until
 * its client gave up).
 */
export class FairSlots {
  private held = 0;
  private readonly heldBy = new Map<string, number>();
  /** In arrival order. */
  private readonly waiting = new Set<Ticket>();
  /** Each workspace's last turn, oldest first (a served workspace moves to the end). */
  private readonly servedAt = new Map<string, number>();
  private turns = 0;
  /** `next()` is asked by every waiter at every poll; it changes only when a place or a waiter does. */
  private nextCache: { version: number; ticket: Ticket | undefined } | undefined;
  private version = 0;

  constructor(
    readonly capacity: number,
    readonly perWorkspace: number,
    private readonly pollMs: number,
  ) {}

  /** A place now, if one is free and no waiting workspace comes first; else undefined. */
  tryTake(workspaceId: string): Release | undefined {
    const ticket = this.enqueue(workspaceId);
    const granted = this.next() === ticket;
    this.dequeue(ticket);
    return granted ? this.grant(workspaceId) : undefined;
  }

  /** A place once it is this workspace's turn; undefined if `signal` aborts first. */
  async take(workspaceId: string, signal: AbortSignal): Promise<Release | undefined> {
    const ticket = this.enqueue(workspaceId);
    try {
      while (this.next() !== ticket) {
        if (signal.aborted) return undefined;
        await new Promise((resolve) => setTimeout(resolve, this.pollMs));
      }
      return signal.aborted ? undefined : this.grant(workspaceId);
    } finally {
      this.dequeue(ticket);
    }
  }

  private enqueue(workspaceId: string): Ticket {
    const ticket = { workspaceId };
    this.waiting.add(ticket);
    this.version++;
    return ticket;
  }

  private dequeue(ticket: Ticket): void {
    this.waiting.delete(ticket);
    this.version++;
  }

  private eligible(workspaceId: string): boolean {
    return this.held < this.capacity && (this.heldBy.get(workspaceId) ?? 0) < this.perWorkspace;
  }

  private next(): Ticket | undefined {
    if (this.nextCache?.version === this.version) return this.nextCache.ticket;
    let best: Ticket | undefined;
    let bestTurn = Infinity;
    for (const ticket of this.waiting) {
      if (!this.eligible(ticket.workspaceId)) continue;
      const turn = this.servedAt.get(ticket.workspaceId) ?? -1;
      if (turn < bestTurn) [best, bestTurn] = [ticket, turn];
    }
    this.nextCache = { version: this.version, ticket: best };
    return best;
  }

  private grant(workspaceId: string): Release {
    this.held++;
    this.heldBy.set(workspaceId, (this.heldBy.get(workspaceId) ?? 0) + 1);
    this.servedAt.delete(workspaceId);
    this.servedAt.set(workspaceId, ++this.turns);
    if (this.servedAt.size > SERVED_MEMORY) {
      for (const oldest of this.servedAt.keys()) {
        if (this.servedAt.size <= SERVED_MEMORY) break;
        if (!this.heldBy.has(oldest)) this.servedAt.delete(oldest);
      }
    }
    this.version++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.held--;
      const left = (this.heldBy.get(workspaceId) ?? 1) - 1;
      if (left > 0) this.heldBy.set(workspaceId, left);
      else this.heldBy.delete(workspaceId);
      this.version++;
    };
  }
}
