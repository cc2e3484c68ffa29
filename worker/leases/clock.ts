/**
 * The clock leases are measured on, on both sides: the workspace Durable
 * Object stamps grants and change times with it, isolates time their leases
 * with it, and a change's route waits on it until the change is in force.
 * It is `Date.now()` and a timer everywhere except in the lease tests, which
 * install a clock they move by hand (`useLeaseClock`), so expiry is tested
 * without sleeping. Durable Objects and the test runner share one isolate
 * under the Workers test pool, so the installed clock is seen by both.
 */
export interface LeaseClock {
  now(): number;
  /** Resolves once `ms` have passed on this clock (at once for 0 or less). */
  sleep(ms: number): Promise<void>;
}

const systemClock: LeaseClock = {
  now: () => Date.now(),
  sleep: (ms) => (ms > 0 ? scheduler.wait(ms) : Promise.resolve()),
};

let installed: LeaseClock = systemClock;

/** The clock in force: what every lease computation reads. */
export const leaseClock: LeaseClock = {
  now: () => installed.now(),
  sleep: (ms) => installed.sleep(ms),
};

/** Installs `clock` for lease timing until the returned function is called (tests only). */
export function useLeaseClock(clock: LeaseClock): () => void {
  installed = clock;
  return () => {
    installed = systemClock;
  };
}
