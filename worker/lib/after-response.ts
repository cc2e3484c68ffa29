/**
 * How long work that belongs after a live call (log writes, shadow runs) waits
 * before starting. The handler returns its Response before the runtime has
 * written it out; synchronous work started at once (QuickJS, a local D1 write
 * in the same process) would hold the thread and delay those bytes.
 */
export const AFTER_RESPONSE_DELAY_MS = 20;

/** `ExecutionContext.waitUntil`, passed on its own so code below the router needs no context. */
export type WaitUntil = (promise: Promise<unknown>) => void;

/**
 * Runs `work` shortly after the live response, kept alive by `waitUntil` so it
 * is never dropped when the request ends. A failure is reported, never thrown
 * into the runtime: the live call has already been answered.
 */
export function afterResponse(waitUntil: WaitUntil, what: string, work: () => Promise<unknown>): void {
  waitUntil(
    new Promise((resolve) => setTimeout(resolve, AFTER_RESPONSE_DELAY_MS))
      .then(work)
      .catch((error: unknown) => console.error(`${what} failed after the response`, error)),
  );
}
