import wasmModule from "@jitl/quickjs-wasmfile-release-sync/wasm";
import releaseVariant from "@jitl/quickjs-wasmfile-release-sync";
import { newQuickJSWASMModuleFromVariant, newVariant, type QuickJSWASMModule } from "quickjs-emscripten-core";
import { DEFAULT_LIMITS, WASM_RETAIN_BYTES } from "./isolate.limits.ts";

const WASM_PAGE_BYTES = 64 * 1024;
/** The emscripten build's own initial memory (16 MiB); the wasm file requires at least this. */
const INITIAL_WASM_BYTES = 16 * 1024 * 1024;

/**
 * One QuickJS wasm instance is shared by all runs of this Worker isolate (each
 * run gets its own QuickJS runtime inside it). Instantiation is lazy because
 * Workers forbid heavy work at module top level; the promise is memoised so
 * concurrent first calls share it, and reset on failure so a later call retries.
 */
let memo: Promise<QuickJSWASMModule> | undefined;
let current: QuickJSWASMModule | undefined;

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

async function instantiate(): Promise<QuickJSWASMModule> {
  const module = await newQuickJSWASMModuleFromVariant(
    newVariant(releaseVariant, { wasmModule, wasmMemory: newBoundedMemory() }),
  );
  current = module;
  return module;
}

export function acquireQuickJS(): Promise<QuickJSWASMModule> {
  memo ??= instantiate().catch((error: unknown) => {
    memo = undefined;
    throw error;
  });
  return memo;
}

/** Drops the instance so the next run starts a fresh one; the old memory is left to GC. */
export function discardQuickJS(module: QuickJSWASMModule): void {
  if (current !== module) return;
  current = undefined;
  memo = undefined;
}

export function wasmMemoryBytes(module: QuickJSWASMModule): number {
  return module.getWasmMemory().buffer.byteLength;
}

/** Called after every run: an instance whose memory grew past the retain cap is not reused. */
export function retainOrDiscard(module: QuickJSWASMModule): void {
  if (wasmMemoryBytes(module) > WASM_RETAIN_BYTES) discardQuickJS(module);
}
