/** Bounds of one `run_code` run (docs/limits.md and docs/code-mode.md). Tests may lower them, never raise them. */
export interface CodeModeLimits {
  /** Inner tool calls per run; the next one ends the run with `too_many_tool_calls`. */
  toolCalls: number;
  /** Inner calls running at once; later ones wait in order, they do not fail. */
  callsInFlight: number;
  /** Wall time of the whole run, waiting on tools included (`wall_time_exceeded`). */
  wallTimeMs: number;
  /** UTF-8 bytes of the program's result as JSON (`output_too_large`). */
  resultBytes: number;
  /** console.log lines per run (`log_limit`). */
  logLines: number;
  /** UTF-8 bytes of one inner call's arguments as JSON (`invalid_arguments`). */
  argumentsBytes: number;
}

const MiB = 1024 * 1024;

export const CODE_MODE_LIMITS: Readonly<CodeModeLimits> = Object.freeze({
  toolCalls: 50,
  callsInFlight: 8,
  wallTimeMs: 60_000,
  resultBytes: 1 * MiB,
  logLines: 100,
  argumentsBytes: 1 * MiB,
});

/**
 * How one Worker isolate's Code Mode compute is shared between workspaces (docs/code-mode.md, "Sharing the
 * isolate"). All of it is per isolate, like the thread it protects, and none of it is a setting.
 */
export const CODE_MODE_SHARE = Object.freeze({
  /** Compute (compiling and running programs, CODE_MODE_COST) a workspace may spend at once, in ms. */
  burstMs: 1500,
  /** Compute a workspace earns back per second, in ms: a tenth of the isolate's thread, sustained. */
  refillMsPerSecond: 100,
  /** Runs of one workspace in progress at once (compiling, running or waiting); the next is refused. */
  runsPerWorkspace: 4,
  /** Runs waiting on tools in a sandbox of their own (16 MiB each: lib/wasm-budget.ts), per isolate and per workspace. */
  parkedRuns: 2,
  parkedRunsPerWorkspace: 1,
  /** Compiled programs kept, by workspace and source digest, and their total size (UTF-16 units). */
  cachedPrograms: 128,
  cachedProgramChars: 4 * MiB,
});

/**
 * What a compile or a step is charged, counted from its work rather than timed: on deployed Workers `Date.now()`
 * does not advance while code runs, and on a loaded machine a timed charge would bill a tenant for other
 * processes. A poll's real cost varies a hundredfold (about 26 µs in a plain loop on a quiet machine, several ms
 * in an allocation-heavy one: docs/isolate.md), so it is charged near the heavy end: a full work budget of 1,000
 * polls is 1 s, what the 1 s deadline allows locally. Compiles and bundle evaluation are calibrated on local
 * workerd (docs/benchmarks.md) with the same margin.
 */
export const CODE_MODE_COST = Object.freeze({
  /** Per interrupt poll (about 10,000 interpreter ticks) of the program's work, native work charged included. */
  msPerPoll: 1,
  /** esbuild, per KiB of source, on top of a fixed part; nothing for a program taken from the cache. */
  compileMsPerKiB: 3,
  compileMs: 10,
  /** QuickJS parsing and evaluating the compiled bundle (no polls show it), per KiB: 100–180 ms for 98 KiB locally. */
  evaluateMsPerKiB: 1.5,
  /** QuickJS parsing an inner call's answer (native, no polls), per KiB of its JSON. */
  answerMsPerKiB: 0.02,
});
