import wasmModule from "@jitl/quickjs-wasmfile-release-sync/wasm";
import releaseVariant from "@jitl/quickjs-wasmfile-release-sync";
import { newQuickJSWASMModuleFromVariant, newVariant } from "quickjs-emscripten-core";
import { isolateWasmBudget, WASM_BUDGET } from "../../lib/wasm-budget.ts";
import { IsolateInstance } from "./isolate.instance.ts";
import { WASM_RETAIN_BYTES } from "./isolate.limits.ts";

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
 * A new instance whose memory's *maximum* is its share of the isolate's wasm budget (lib/wasm-budget.ts), reserved
 * first: an allocation QuickJS does not account (issue 271: big strings, typed arrays) fails inside the sandbox as
 * "out of memory" instead of growing the Worker, and no instance exists without its share. Throws
 * WasmBudgetExceeded when the share is not there.
 */
async function newInstance(maxBytes: number, what: string): Promise<IsolateInstance> {
  const reservation = isolateWasmBudget.reserve(maxBytes, what);
  try {
    const memory = new WebAssembly.Memory({ initial: INITIAL_WASM_BYTES / WASM_PAGE_BYTES, maximum: maxBytes / WASM_PAGE_BYTES });
    reservation.track(memory);
    const module = await newQuickJSWASMModuleFromVariant(newVariant(releaseVariant, { wasmModule, wasmMemory: memory }));
    return IsolateInstance.create(module, reservation);
  } catch (error) {
    reservation.release();
    throw error;
  }
}

async function instantiate(): Promise<IsolateInstance> {
  const instance = await newInstance(WASM_BUDGET.sharedInstanceBytes, "the shared QuickJS instance");
  current = instance;
  return instance;
}

/**
 * An instance of its own, outside the shared one, for a run that awaits the
 * host between steps (a Code Mode program): the shared instance serves only
 * synchronous runs, and hook stages run while the program waits. Its memory
 * never grows (its share is its initial size); the caller drops it with
 * `IsolateInstance.drop()`, which gives its share back.
 */
export function newPrivateInstance(): Promise<IsolateInstance> {
  return newInstance(WASM_BUDGET.sandboxBytes, "a Code Mode sandbox");
}

export function acquireInstance(): Promise<IsolateInstance> {
  memo ??= instantiate().catch((error: unknown) => {
    memo = undefined;
    throw error;
  });
  return memo;
}

/** Drops the instance so the next run starts a fresh one; its share of the budget is given back. */
export function discardInstance(instance: IsolateInstance): void {
  instance.drop();
  if (current !== instance) return;
  current = undefined;
  memo = undefined;
}

/** Called after every run: an instance whose memory grew is not reused (wasm memory never shrinks). */
export function retainOrDiscard(instance: IsolateInstance): void {
  if (instance.wasmBytes() > WASM_RETAIN_BYTES) discardInstance(instance);
}
