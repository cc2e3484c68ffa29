import * as esbuild from "esbuild-wasm";
import wasmModule from "esbuild-wasm/esbuild.wasm";
import { ESBUILD_CALL_TIMEOUT_MS } from "./compiler.limits.ts";

/**
 * One esbuild-wasm service per Worker isolate, started on the first compile
 * (initialising it at module top level would count against the Worker's
 * startup limit). Its Go runtime runs on this thread and can die: a stack
 * overflow on pathological input leaves it rejecting every later call, and a
 * call it never answers would hang the request. Every call therefore goes
 * through `withEsbuild`, which bounds its time and, when the service fails,
 * retires exactly that service so the next call starts a fresh one.
 */
interface Service {
  generation: number;
}

let starting: Promise<Service> | undefined;
let live: Service | undefined;
let generations = 0;

/** esbuild could not serve this call (dead, hung, or failing to start); a fresh service starts on the next one. */
export class CompilerUnavailableError extends Error {
  override name = "CompilerUnavailableError";
}

/** esbuild ran out of stack on this input twice, the second time on a fresh service of its own. */
export class EsbuildStackOverflowError extends Error {
  override name = "EsbuildStackOverflowError";
}

/** The service failed under a call for a reason that is not the input's syntax. */
class ServiceFailure extends Error {}

function service(): Promise<Service> {
  starting ??= (async () => {
    // Drops whatever the module still holds (a retired service), so `initialize` never runs twice.
    await esbuild.stop();
    await esbuild.initialize({ wasmModule, worker: false });
    live = { generation: ++generations };
    return live;
  })().catch((error: unknown) => {
    starting = undefined;
    throw new CompilerUnavailableError("esbuild did not start", { cause: error });
  });
  return starting;
}

/** Stops `failed` unless a newer service already replaced it (a late failure must not stop a fresh service). */
function retire(failed: Service): void {
  if (live !== failed) return;
  live = undefined;
  starting = undefined;
  void esbuild.stop();
}

/** Stops the current service so the next call starts a fresh one (what a cold-start measurement needs). */
export async function resetEsbuild(): Promise<void> {
  await starting?.catch(() => undefined);
  if (live) retire(live);
}

async function attempt<T>(call: (api: typeof esbuild) => Promise<T>): Promise<T> {
  const current = await service();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const hung = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new CompilerUnavailableError(`esbuild did not answer within ${ESBUILD_CALL_TIMEOUT_MS} ms`)),
      ESBUILD_CALL_TIMEOUT_MS,
    );
  });
  try {
    return await Promise.race([call(esbuild), hung]);
  } catch (error) {
    if (isBuildFailure(error)) throw error;
    retire(current);
    if (error instanceof CompilerUnavailableError) throw error;
    throw new ServiceFailure("esbuild failed", { cause: error });
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Runs one esbuild call. A service that dies rejects every call it holds at
 * once, so a call that only shared the service with the input that killed it
 * is retried once on a fresh service. What fails again is the input's own
 * doing: a stack overflow becomes `EsbuildStackOverflowError` (the compiler's
 * `nesting_too_deep`), anything else `CompilerUnavailableError`. A hung call is
 * not retried: it already used its time.
 */
export async function withEsbuild<T>(call: (api: typeof esbuild) => Promise<T>): Promise<T> {
  try {
    return await attempt(call);
  } catch (error) {
    if (!(error instanceof ServiceFailure)) throw error;
  }
  try {
    return await attempt(call);
  } catch (error) {
    if (!(error instanceof ServiceFailure)) throw error;
    if (error.cause instanceof RangeError || /call stack/i.test(String(error.cause))) {
      throw new EsbuildStackOverflowError("esbuild ran out of stack", { cause: error.cause });
    }
    throw new CompilerUnavailableError("esbuild failed twice", { cause: error.cause });
  }
}

/** esbuild rejects with a BuildFailure (carrying `errors`) for ordinary bad input. */
export function isBuildFailure(error: unknown): error is esbuild.BuildFailure {
  return typeof error === "object" && error !== null && Array.isArray((error as { errors?: unknown }).errors);
}

export type { esbuild };
