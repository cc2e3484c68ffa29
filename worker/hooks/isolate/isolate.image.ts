/**
 * A byte image of a QuickJS wasm instance's memory, taken right after its
 * runtime, context and prelude were set up (or, for a bundle image, right after
 * a hook bundle was evaluated from that state), and written back before a run.
 * A run therefore starts from exactly the state of a newly created runtime and
 * context, whatever the previous run did to it (the approach of Wizer and Javy,
 * which pre-initialise QuickJS the same way).
 *
 * Only the parts of linear memory that hold state are copied. The layout of the
 * pinned `@jitl/quickjs-wasmfile-release-sync` 0.32.0 build is:
 *
 *   [0, 90,208)           static data and bss
 *   [90,208, 5,333,088)   the C shadow stack (5 MiB, grows down)
 *   [5,333,088, break)    the malloc heap (QuickJS runtime, context, objects)
 *   [break, end)          not yet handed out by sbrk
 *
 * Between runs no C frame is live, so stack bytes carry no state; restoring
 * some of them (the margin below `STATIC_END`) is harmless. Memory above the
 * heap's high-water mark at capture was all zero and belongs to malloc's free
 * top chunk, which never relies on its contents. `isolate.image.test.ts`
 * checks these constants against the wasm file, so a dependency bump that moves
 * them fails the tests instead of leaking state between runs.
 */

/** End of static data + bss, with a 64 KiB margin into the (stateless) stack. */
export const STATIC_END = 160 * 1024;
/** Initial `__stack_pointer`: the top of the stack and the base of the heap. */
export const HEAP_BASE = 5_333_088;

export interface MemoryImage {
  readonly statics: Uint8Array;
  readonly heap: Uint8Array;
}

/** Copies the state-holding parts of `memory`. Call only between runs (no live C frame). */
export function captureImage(memory: WebAssembly.Memory): MemoryImage {
  const bytes = new Uint8Array(memory.buffer);
  return {
    statics: bytes.slice(0, STATIC_END),
    heap: bytes.slice(HEAP_BASE, heapHighWater(memory)),
  };
}

/** Bytes an image holds. */
export function imageBytes(image: MemoryImage): number {
  return image.statics.byteLength + image.heap.byteLength;
}

/** Zeroes `memory` above the heap `image` holds, as it was before the image's setup ran. */
export function clearAbove(memory: WebAssembly.Memory, image: MemoryImage): void {
  new Uint8Array(memory.buffer, HEAP_BASE + image.heap.byteLength).fill(0);
}

/** Writes the image back; the memory keeps its (never shrinking) size. */
export function restoreImage(memory: WebAssembly.Memory, image: MemoryImage): void {
  const bytes = new Uint8Array(memory.buffer);
  bytes.set(image.statics, 0);
  bytes.set(image.heap, HEAP_BASE);
}

/**
 * One past the last non-zero byte of the heap, rounded up to 16. Fresh wasm
 * memory is zero, so on an instance that only ran setup this is where sbrk's
 * allocations end (malloc's top chunk header is always the last written word).
 */
function heapHighWater(memory: WebAssembly.Memory): number {
  const words = new Int32Array(memory.buffer, HEAP_BASE, (memory.buffer.byteLength - HEAP_BASE) >> 2);
  let last = words.length - 1;
  while (last >= 0 && words[last] === 0) last--;
  const end = HEAP_BASE + (last + 1) * 4;
  return Math.min(memory.buffer.byteLength, Math.ceil(end / 16) * 16);
}
