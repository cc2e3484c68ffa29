const MiB = 1024 * 1024;

/**
 * The wasm memory one Worker isolate may hold, and what each holder reserves of it (docs/limits.md, docs/isolate.md).
 * A deployed isolate has 128 MB for everything, its JavaScript heap included, and every QuickJS instance and
 * esbuild's Go runtime is a linear memory of its own that never shrinks. Each holder reserves the most its memory
 * can ever reach before the memory exists (a QuickJS memory's hard maximum is its reservation; esbuild's, which the
 * Go runtime grows by itself, is checked after every call), so the memories together never pass `totalBytes`.
 * The designed holders fill the budget exactly: the shared hook instance, CODE_MODE_SHARE.parkedRuns sandboxes
 * (an idle one is one of them) and the compiler.
 */
export const WASM_BUDGET = Object.freeze({
  totalBytes: 80 * MiB,
  /** The one shared QuickJS instance: hook stages, adapter evaluation, Code Mode's first steps. */
  sharedInstanceBytes: 32 * MiB,
  /** A Code Mode program waiting on tools, in a QuickJS instance of its own: its initial memory, never grown. */
  sandboxBytes: 16 * MiB,
  /** esbuild-wasm (hook and program compiles). */
  compilerBytes: 16 * MiB,
});

/** A share of the budget, held until the memory it is for is dropped. */
export interface WasmReservation {
  readonly bytes: number;
  /** Names the memory the share is for, so the budget can report what is really in use. */
  track(memory: WebAssembly.Memory): void;
  /** Gives the share back (once; later calls do nothing). The dropped memory is freed at V8's next collection. */
  release(): void;
}

/** A memory could not get its share: the caller refuses the work with its stable code and nothing is created. */
export class WasmBudgetExceeded extends Error {
  override name = "WasmBudgetExceeded";
}

export class WasmBudget {
  readonly #held = new Set<{ bytes: number; memory?: WebAssembly.Memory }>();
  #reserved = 0;
  #highWater = 0;
  #limit: number;

  constructor(readonly totalBytes: number) {
    this.#limit = totalBytes;
  }

  /** The bytes reserved now: what the held memories may reach. */
  get reservedBytes(): number {
    return this.#reserved;
  }

  /** The most ever reserved at once. */
  get highWaterBytes(): number {
    return this.#highWater;
  }

  /** The bytes the held memories have now (never more than they reserved, for a QuickJS memory by construction). */
  get usedBytes(): number {
    let used = 0;
    for (const entry of this.#held) used += entry.memory?.buffer.byteLength ?? entry.bytes;
    return used;
  }

  get limitBytes(): number {
    return this.#limit;
  }

  /** `bytes` of the budget, or WasmBudgetExceeded when they would take the reservations past it. */
  reserve(bytes: number, what: string): WasmReservation {
    if (this.#reserved + bytes > this.#limit) {
      throw new WasmBudgetExceeded(
        `${what} needs ${bytes / MiB} MiB of wasm memory and this isolate has ${(this.#limit - this.#reserved) / MiB} MiB of its ${this.#limit / MiB} MiB left`,
      );
    }
    const entry: { bytes: number; memory?: WebAssembly.Memory } = { bytes };
    this.#held.add(entry);
    this.#reserved += bytes;
    this.#highWater = Math.max(this.#highWater, this.#reserved);
    return {
      bytes,
      track: (memory) => {
        entry.memory = memory;
      },
      release: () => {
        if (this.#held.delete(entry)) this.#reserved -= bytes;
      },
    };
  }

  /**
   * Lowers the budget until the returned function is called (tests only: a lowered bound is reached with fewer
   * holders). It can only lower: a value above the total is the total. Reservations already held stay.
   */
  lowerTo(bytes: number): () => void {
    this.#limit = Math.min(this.totalBytes, bytes);
    this.#highWater = this.#reserved;
    return () => {
      this.#limit = this.totalBytes;
    };
  }
}

/** This Worker isolate's budget. */
export const isolateWasmBudget = new WasmBudget(WASM_BUDGET.totalBytes);
