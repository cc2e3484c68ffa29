import * as esbuild from "esbuild-wasm";
import wasmModule from "esbuild-wasm/esbuild.wasm";

/**
 * One esbuild-wasm service per Worker isolate. Initialising it at module top
 * level would count against the Worker's startup limit, so it starts on the
 * first compile and the promise is memoised. A failed start, or a crash of the
 * Go runtime inside the wasm (e.g. a stack overflow on pathological input),
 * leaves esbuild unusable: `resetEsbuild` drops it so the next call starts afresh.
 */
let ready: Promise<typeof esbuild> | undefined;

export function getEsbuild(): Promise<typeof esbuild> {
  ready ??= esbuild.initialize({ wasmModule, worker: false }).then(
    () => esbuild,
    (error: unknown) => {
      ready = undefined;
      throw error;
    },
  );
  return ready;
}

export async function resetEsbuild(): Promise<void> {
  ready = undefined;
  await esbuild.stop();
}

/** esbuild rejects with a BuildFailure (carrying `errors`) for ordinary bad input. */
export function isBuildFailure(error: unknown): error is esbuild.BuildFailure {
  return typeof error === "object" && error !== null && Array.isArray((error as { errors?: unknown }).errors);
}

export type { esbuild };
