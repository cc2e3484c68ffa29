import type { LeaseClock } from "../worker/leases/clock.ts";

/**
 * A lease clock that moves only when a test moves it, so lease expiry is
 * tested without waiting for it. Installed with `useLeaseClock`, it is the
 * clock of the Durable Object, of every lease holder and of the change routes'
 * waits alike.
 */
export class ManualClock implements LeaseClock {
  #now: number;
  /** When each pending sleep ends. */
  readonly #sleepers = new Set<{ until: number }>();

  constructor(start = Date.now()) {
    this.#now = start;
  }

  now(): number {
    return this.#now;
  }

  /**
   * Polls on real 1 ms timers until the clock has passed the time. A sleeper
   * is a route inside another request (another Durable Object context, for the
   * test runner), which must resume on its own timer: workerd refuses a
   * promise resolved from a different context.
   */
  async sleep(ms: number): Promise<void> {
    if (ms <= 0) return;
    const sleeper = { until: this.#now + ms };
    this.#sleepers.add(sleeper);
    try {
      while (this.#now < sleeper.until) await scheduler.wait(1);
    } finally {
      this.#sleepers.delete(sleeper);
    }
  }

  /** Moves the clock on by `ms`; sleepers whose time has come wake on their next poll. */
  advance(ms: number): void {
    this.#now += ms;
  }

  /** When the earliest pending sleep ends, if one is pending. */
  nextWake(): number | undefined {
    let earliest: number | undefined;
    for (const { until } of this.#sleepers) if (earliest === undefined || until < earliest) earliest = until;
    return earliest;
  }

  /**
   * Settles `work`, moving the clock on to each wake time it sleeps until (a
   * change route waiting out leases): only as far as it must, never further.
   */
  async settle<T>(work: Promise<T>): Promise<T> {
    let settled = false;
    const done = work.finally(() => {
      settled = true;
    });
    while (!settled) {
      await scheduler.wait(1);
      const wake = this.nextWake();
      if (!settled && wake !== undefined && wake > this.#now) this.advance(wake - this.#now);
    }
    return done;
  }

  /** Waits (on real timers) until something sleeps on this clock: a change route has reached its wait. */
  async untilSleeping(): Promise<number> {
    for (let turn = 0; turn < 5_000; turn++) {
      const wake = this.nextWake();
      if (wake !== undefined) return wake;
      await scheduler.wait(1);
    }
    throw new Error("nothing came to sleep on the lease clock");
  }
}
