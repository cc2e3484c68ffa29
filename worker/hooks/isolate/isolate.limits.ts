/**
 * Bounds of one isolate run. Every live and test run uses the defaults; a
 * per-run override (used by the isolate's tests) may lower them, never raise
 * one (see `resolveLimits`). docs/isolate.md holds the same table for readers.
 */
export interface IsolateLimits {
  /**
   * Primary CPU bound: interrupt-handler polls (QuickJS polls about every 10,000
   * interpreter ticks, regex engine included) plus work charged up front by the
   * built-ins that loop natively. Counting polls works on deployed Workers,
   * where the clock does not advance while code runs.
   */
  workBudgetPolls: number;
  /** Second CPU bound, wall clock from the start of the run (effective where the clock advances). */
  deadlineMs: number;
  /** QuickJS heap limit (`setMemoryLimit`). */
  memoryBytes: number;
  /** QuickJS stack limit (`setMaxStackSize`). */
  stackBytes: number;
  /**
   * Wasm linear memory the run may reach, checked at every poll. Some large
   * allocations (typed arrays, big strings) bypass `memoryBytes`; this catches them.
   */
  wasmMemoryBytes: number;
  /** UTF-8 bytes of the JSON of the stage's return value (or of publicContract). */
  outputBytes: number;
  /** Log entries per run. */
  logCount: number;
  /** UTF-16 code units per log message. */
  logMessageChars: number;
  /** UTF-8 bytes of the JSON of one log entry's data. */
  logDataBytes: number;
}

const MiB = 1024 * 1024;

export const DEFAULT_LIMITS: Readonly<IsolateLimits> = Object.freeze({
  workBudgetPolls: 1000,
  deadlineMs: 1000,
  memoryBytes: 16 * MiB,
  stackBytes: 256 * 1024,
  wasmMemoryBytes: 32 * MiB,
  outputBytes: 1 * MiB,
  logCount: 100,
  logMessageChars: 2000,
  logDataBytes: 8 * 1024,
});

/**
 * Wasm memory a module instance may keep between runs: its initial memory. A
 * run that grew it is followed by discarding the instance, because wasm memory
 * never shrinks, so every run starts with the same room. The hard maximum of
 * an instance's memory is its share of the isolate's wasm budget
 * (lib/wasm-budget.ts), so no run can ever grow it further.
 */
export const WASM_RETAIN_BYTES = 16 * MiB;

/**
 * Lowest values an override may set. Below them a stage could not even
 * start (the wasm instance begins at 16 MiB), so lower requests are raised to these.
 */
const MINIMUM_LIMITS: Readonly<IsolateLimits> = Object.freeze({
  workBudgetPolls: 1,
  deadlineMs: 1,
  memoryBytes: 1 * MiB,
  stackBytes: 64 * 1024,
  wasmMemoryBytes: 32 * MiB,
  outputBytes: 1,
  logCount: 0,
  logMessageChars: 1,
  logDataBytes: 1,
});

export type LimitOverrides = Partial<Record<keyof IsolateLimits, unknown>>;

/**
 * Applies per-run overrides to the defaults. An override only ever lowers a
 * limit: values above the default are clamped to it, values below the minimum
 * are raised to the minimum, and anything that is not a finite number is
 * ignored (the default stays), so a malformed setting can never raise a bound.
 */
export function resolveLimits(overrides?: LimitOverrides | null): IsolateLimits {
  const limits: IsolateLimits = { ...DEFAULT_LIMITS };
  if (!overrides) return limits;
  for (const key of Object.keys(DEFAULT_LIMITS) as (keyof IsolateLimits)[]) {
    const value = overrides[key];
    if (typeof value === "number" && Number.isFinite(value)) {
      limits[key] = Math.min(DEFAULT_LIMITS[key], Math.max(MINIMUM_LIMITS[key], Math.floor(value)));
    }
  }
  return limits;
}
