import * as esbuild from "esbuild-wasm";
import wasmModule from "esbuild-wasm/esbuild.wasm";
import { isolateWasmBudget, WASM_BUDGET, WasmBudgetExceeded, type WasmReservation } from "../../lib/wasm-budget.ts";
import { ESBUILD_CALL_TIMEOUT_MS, ESBUILD_RETAIN_BYTES } from "./compiler.limits.ts";

/**
 * One esbuild-wasm service per Worker isolate, started on the first compile
 * (initialising it at module top level would count against the Worker's
 * startup limit). Its Go runtime runs on this thread and can die: a stack
 * overflow on pathological input leaves it rejecting every later call, and a
 * call it never answers would hang the request. Every call therefore goes
 * through `withEsbuild`, which bounds its time and, when the service fails,
 * retires exactly that service so the next call starts a fresh one.
 *
 * Its Go runtime grows its wasm memory by itself and never gives it back, so
 * the service holds the compiler's share of the isolate's wasm budget
 * (lib/wasm-budget.ts) from before it starts until it is retired, calls run
 * one at a time (each one's growth adds to what is left, 8 concurrent ones of
 * 100 KiB grow a fresh service from 8.5 to 20.5 MiB), and a service whose
 * memory is past ESBUILD_RETAIN_BYTES after a call is retired: the next call
 * starts a fresh one (about 0.1–0.4 s) with room for its own growth.
 */
interface Service {
  generation: number;
  reservation: WasmReservation;
  memory: WebAssembly.Memory;
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
    const reservation = isolateWasmBudget.reserve(WASM_BUDGET.compilerBytes, "the compiler");
    try {
      const memory = await goMemoryOf(() => esbuild.initialize({ wasmModule, worker: false }));
      reservation.track(memory);
      live = { generation: ++generations, reservation, memory };
      return live;
    } catch (error) {
      reservation.release();
      throw error;
    }
  })().catch((error: unknown) => {
    starting = undefined;
    const reason = error instanceof WasmBudgetExceeded ? "esbuild has no wasm memory free" : "esbuild did not start";
    throw new CompilerUnavailableError(reason, { cause: error });
  });
  return starting;
}

/**
 * The memory of the Go instance `start` makes of esbuild's module. esbuild keeps the instance to itself, so its
 * `WebAssembly.instantiate` is watched while the service starts (every other caller passes through unchanged).
 * A start whose memory could not be seen fails: a compiler whose memory cannot be measured is not run.
 */
async function goMemoryOf(start: () => Promise<void>): Promise<WebAssembly.Memory> {
  const original = WebAssembly.instantiate;
  let memory: WebAssembly.Memory | undefined;
  const watching = async (source: BufferSource | WebAssembly.Module, imports?: WebAssembly.Imports) => {
    const made = await original(source as WebAssembly.Module, imports);
    const exported = source === wasmModule ? made.exports.mem : undefined;
    if (exported instanceof WebAssembly.Memory) memory = exported;
    return made;
  };
  WebAssembly.instantiate = watching as typeof WebAssembly.instantiate;
  try {
    await start();
  } finally {
    if (WebAssembly.instantiate === (watching as typeof WebAssembly.instantiate)) WebAssembly.instantiate = original;
  }
  if (!memory) throw new Error("esbuild's wasm memory was not found");
  return memory;
}

/** Stops `failed` unless a newer service already replaced it (a late failure must not stop a fresh service). */
function retire(failed: Service): void {
  if (live !== failed) return;
  live = undefined;
  starting = undefined;
  failed.reservation.release();
  void esbuild.stop();
}

/** The compiler's wasm memory now, in bytes: 0 when no service is running. */
export function compilerWasmBytes(): number {
  return live?.memory.buffer.byteLength ?? 0;
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
    const bytes = current.memory.buffer.byteLength;
    if (bytes > current.reservation.bytes) console.error(`esbuild's memory grew to ${bytes} bytes, past its share: retired`);
    if (bytes > ESBUILD_RETAIN_BYTES) retire(current);
  }
}

/**
 * Runs one esbuild call, after the one running (if any). A call that fails on
 * a service that may have been broken before it (a dead service rejects every
 * call it gets) is retried once on a fresh service. What fails again is the
 * input's own doing: a stack overflow becomes `EsbuildStackOverflowError` (the
 * compiler's `nesting_too_deep`), anything else `CompilerUnavailableError`. A
 * hung call is not retried: it already used its time.
 */
export async function withEsbuild<T>(call: (api: typeof esbuild) => Promise<T>): Promise<T> {
  while (running && Date.now() - running.since < CALL_STALE_MS) await scheduler.wait(CALL_POLL_MS);
  const mine = { since: Date.now() };
  running = mine;
  try {
    return await withRetry(call);
  } finally {
    if (running === mine) running = undefined;
  }
}

/**
 * The call running, and when it started. Waiters poll from their own request instead of awaiting a promise the
 * running call resolves: in workerd a promise resolved from another request's handler never wakes the request
 * awaiting it.
 */
let running: { since: number } | undefined;
const CALL_POLL_MS = 2;
/** Longer than any call takes (two attempts, each bounded): a call whose request died without clearing the mark. */
const CALL_STALE_MS = 2 * ESBUILD_CALL_TIMEOUT_MS + 5_000;

async function withRetry<T>(call: (api: typeof esbuild) => Promise<T>): Promise<T> {
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
