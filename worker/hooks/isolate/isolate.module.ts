import wasmModule from "@jitl/quickjs-wasmfile-release-sync/wasm";
import releaseVariant from "@jitl/quickjs-wasmfile-release-sync";
import { newQuickJSWASMModuleFromVariant, newVariant } from "quickjs-emscripten-core";
import { IsolateInstance } from "./isolate.instance.ts";
import { DEFAULT_LIMITS, WASM_RETAIN_BYTES } from "./isolate.limits.ts";

const WASM_PAGE_BYTES = 64 * 1024;
/** The emscripten build's own initial memory (16 MiB); the wasm file requires at least this. */
const INITIAL_WASM_BYTES = 16 * 1024 * 1024;

/**
 * One QuickJS wasm instance is shared by all runs of this Worker isolate; each
 * run starts from the instance's pristine image (see isolate.instance.ts).
 * Instantiation is lazy because Workers forbid heavy work at module top level;
 * the promise is memoised so concurrent first calls share it, and reset on
 * failure so a later call retries.
 */
let memo: Promise<IsolateInstance> | undefined;
let current: IsolateInstance | undefined;

/**
 * The instance gets its own memory whose *maximum* is the platform wasm cap, so
 * an allocation QuickJS does not account (issue 271: big strings, typed arrays)
 * fails inside the sandbox as "out of memory" instead of growing the Worker.
 */
function newBoundedMemory(): WebAssembly.Memory {
  return new WebAssembly.Memory({
    initial: INITIAL_WASM_BYTES / WASM_PAGE_BYTES,
    maximum: Math.floor(DEFAULT_LIMITS.wasmMemoryBytes / WASM_PAGE_BYTES),
  });
}

async function instantiate(): Promise<IsolateInstance> {
  const module = await newQuickJSWASMModuleFromVariant(newVariant(releaseVariant, { wasmModule, wasmMemory: newBoundedMemory() }));
  const instance = IsolateInstance.create(module);
  current = instance;
  return instance;
}

/**
 * An instance of its own, outside the shared one, for a run that awaits the
 * host between steps (a Code Mode program): the shared instance serves only
 * synchronous runs, and hook stages run while the program waits. It is never
 * restored or reused; dropping it frees its memory.
 */
export async function newPrivateInstance(): Promise<IsolateInstance> {
  return IsolateInstance.create(
    await newQuickJSWASMModuleFromVariant(newVariant(releaseVariant, { wasmModule, wasmMemory: newBoundedMemory() })),
  );
}

export function acquireInstance(): Promise<IsolateInstance> {
  memo ??= instantiate().catch((error: unknown) => {
    memo = undefined;
    throw error;
  });
  return memo;
}

/** Drops the instance so the next run starts a fresh one; the old memory is left to GC. */
export function discardInstance(instance: IsolateInstance): void {
  if (current !== instance) return;
  current = undefined;
  memo = undefined;
}

/** Called after every run: an instance whose memory grew past the retain cap is not reused. */
export function retainOrDiscard(instance: IsolateInstance): void {
  if (instance.wasmBytes() > WASM_RETAIN_BYTES) discardInstance(instance);
}
