import type { QuickJSContext, QuickJSHandle } from "quickjs-emscripten-core";
import type { HookLogLevel } from "../../../schema/hooks/contract.ts";
import type { BundleImage, DriverFunction, IsolateInstance, InstanceHost, ProgramFunctions } from "./isolate.instance.ts";
import { BIGINT_LITERAL } from "./isolate.prelude.ts";
import type { IsolateLimits } from "./isolate.limits.ts";
import { WasmBudgetExceeded } from "../../lib/wasm-budget.ts";
import { acquireInstance, discardInstance, retainOrDiscard } from "./isolate.module.ts";
import { replaceLoneSurrogates, utf8Length } from "./isolate.text.ts";
import type { HookLog, IsolateError, IsolateErrorCode, IsolateUsage } from "./isolate.types.ts";

/** Native element visits charged as one poll (a poll is ~10,000 interpreter ticks). */
const UNITS_PER_POLL = 1000;
const THROWN_TEXT_MAX = 500;

/**
 * The engine's resource errors, by `name: message`. A guest can throw a look-alike, but only of a failure it can
 * cause for real anyway. The engine's interrupt is not among them: it only ever follows a fault the host recorded
 * first (work budget, deadline, wasm cap), so a thrown "InternalError: interrupted" is an exception like any other.
 */
export function engineErrorCode(text: string): IsolateErrorCode | undefined {
  if (text === "InternalError: out of memory") return "memory_exceeded";
  if (text === "InternalError: stack overflow") return "stack_overflow";
  return undefined;
}

/** A thrown value as the prelude's `describeThrown` read it: with none of the guest's code running. */
export interface ThrownValue {
  /** "object", or the primitive's typeof ("null" for null). */
  kind: string;
  /** A data property `name` on the value or its prototypes; undefined if absent, an accessor or behind a Proxy. */
  name: string | undefined;
  /** The `message` data property (or a primitive's text), cut at the requested length; "" when unreadable. */
  message: string;
}

/**
 * One bounded run (a stage call or an adapter evaluation) in an instance reset
 * to its pristine runtime + context. Every failure is recorded as the session's
 * fault (the first one wins) instead of being thrown; callers check `fault`
 * after each step and stop at the first one.
 */
export class IsolateSession implements InstanceHost {
  readonly logs: HookLog[] = [];
  outputBytes = 0;
  private polls = 0;
  private chargedUnits = 0;
  private firstFault: IsolateError | undefined;
  /** This run's call (clock, seed, context), restored from a bundle image and not yet started: `invoke` starts it. */
  private pendingCall: string | undefined;
  /** Set when the wasm instance itself misbehaved (host exception, trap): it is discarded, not disposed into. */
  private instanceBroken = false;
  private readonly startedAt = Date.now();
  private readonly deadline: number;
  /** Time spent waiting on the host between guest steps (Code Mode's tool calls): the deadline bounds computation only. */
  private waitedMs = 0;
  private waitingSince: number | undefined;
  /** While the host reads the log back (readLogs): the prelude's constant step, never stopped by an earlier fault. */
  private readingLogs = false;
  private logsRead = false;
  /** The run's context; for a Code Mode run's host functions and handles (isolate.program-facing, see codemode.run.ts). */
  readonly vm: QuickJSContext;
  /** Where a Code Mode run's `tools` calls and console lines go; unset for a hook run (they then do nothing). */
  program: { call(name: QuickJSHandle, argsJson: QuickJSHandle): QuickJSHandle; line(line: QuickJSHandle): QuickJSHandle } | undefined;

  constructor(
    private readonly instance: IsolateInstance,
    readonly limits: IsolateLimits,
  ) {
    this.deadline = this.startedAt + limits.deadlineMs;
    this.vm = instance.vm;
  }

  /** The host functions a Code Mode runtime is given (see `program`). */
  get programFunctions(): ProgramFunctions {
    return this.instance.programFunctions;
  }

  /** Work spent so far, in polls (natively looping built-ins charged in poll equivalents). */
  get workSpentPolls(): number {
    return this.workSpent();
  }

  /** False once the wasm instance misbehaved (host exception, trap): it must not serve another run. */
  get instanceReusable(): boolean {
    return !this.instanceBroken;
  }

  get fault(): IsolateError | undefined {
    return this.firstFault;
  }

  fail(code: IsolateErrorCode, message: string): void {
    this.firstFault ??= { code, message };
  }

  /** Interrupt handler: true stops the guest with an uncatchable "interrupted". */
  onPoll(): boolean {
    this.polls++;
    if (this.readingLogs) return false;
    if (this.firstFault) return true;
    if (this.workSpent() > this.limits.workBudgetPolls) {
      this.fail("timeout", `work budget of ${this.limits.workBudgetPolls} polls exhausted`);
    } else if (Date.now() - this.waitedMs > this.deadline) {
      this.fail("timeout", `deadline of ${this.limits.deadlineMs} ms exceeded`);
    } else if (this.instance.wasmBytes() >= this.limits.wasmMemoryBytes) {
      this.fail("memory_exceeded", `wasm memory reached ${this.limits.wasmMemoryBytes} bytes`);
    }
    return this.firstFault !== undefined;
  }

  private workSpent(): number {
    return this.polls + this.chargedUnits / UNITS_PER_POLL;
  }

  /** Runs host code that executes guest code; a host exception means the wasm instance is unsafe to reuse. */
  private guarded<T>(step: () => T): T | undefined {
    try {
      return step();
    } catch (error) {
      this.instanceBroken = true;
      const hostStack = error instanceof RangeError && /call stack/i.test(error.message);
      this.fail(hostStack ? "stack_overflow" : "exception", `isolate fault: ${String(error)}`);
      return undefined;
    }
  }

  /** Records a value thrown inside the guest. Engine errors keep their code; anything else becomes `fallback`. */
  private failFromThrown(thrown: QuickJSHandle, fallback: IsolateErrorCode, prefix = ""): void {
    try {
      if (this.firstFault) return;
      const read = this.readThrown(thrown, THROWN_TEXT_MAX);
      // Not even the prelude's reader could run: the heap is exhausted.
      if (!read) return this.fail("memory_exceeded", `${prefix}the thrown value could not be read: out of memory`);
      const text = thrownText(read);
      const code =
        engineErrorCode(text) ??
        // An allocation failure so deep that not even the error object fit leaves a bare null.
        (read.kind === "null" && this.instance.wasmBytes() >= this.limits.wasmMemoryBytes * 0.9 ? "memory_exceeded" : fallback);
      this.fail(code, prefix + text);
    } finally {
      thrown.dispose();
    }
  }

  /**
   * A thrown value's kind, name and message, read inside the guest by the prelude's `describeThrown` from data
   * properties only, so no getter, Proxy trap or toJSON of the guest's runs. Undefined when even that failed (the
   * heap or budget is exhausted); it never records a fault of its own (a host exception propagates to the step
   * that called it, which discards the instance).
   */
  readThrown(thrown: QuickJSHandle, maxChars: number): ThrownValue | undefined {
    const limit = this.vm.newNumber(maxChars);
    try {
      const result = this.vm.callFunction(this.instance.driverFunctions.describeThrown, this.instance.driver, thrown, limit);
      if (result.error) {
        result.error.dispose();
        return undefined;
      }
      const text = (index: number) => {
        const part = this.vm.getProp(result.value, index);
        try {
          return this.vm.typeof(part) === "string" ? this.vm.getString(part) : undefined;
        } finally {
          part.dispose();
        }
      };
      try {
        return { kind: text(0) ?? "object", name: text(1), message: text(2) ?? "" };
      } finally {
        result.value.dispose();
      }
    } finally {
      limit.dispose();
    }
  }

  private shortString(handle: QuickJSHandle): string | undefined {
    if (this.vm.typeof(handle) !== "string" || this.stringLength(handle) > THROWN_TEXT_MAX) return undefined;
    return this.vm.getString(handle);
  }

  /** UTF-16 length of a guest string, read without copying it (Infinity if unreadable). */
  private stringLength(handle: QuickJSHandle): number {
    const length = this.vm.getProp(handle, "length");
    try {
      const value = this.vm.typeof(length) === "number" ? this.vm.getNumber(length) : NaN;
      return Number.isFinite(value) ? value : Infinity;
    } finally {
      length.dispose();
    }
  }

  // ---- host functions handed to the prelude and to a Code Mode runtime ----

  programCall(name: QuickJSHandle, argsJson: QuickJSHandle): QuickJSHandle {
    return this.program ? this.program.call(name, argsJson) : this.vm.undefined;
  }

  programLine(line: QuickJSHandle): QuickJSHandle {
    return this.program ? this.program.line(line) : this.vm.undefined;
  }

  charge(units: QuickJSHandle): QuickJSHandle {
    const amount = this.vm.typeof(units) === "number" ? this.vm.getNumber(units) : NaN;
    // An amount that is not a finite number (an infinite or unreadable length) is the whole budget, never nothing.
    this.chargedUnits += amount > 0 && Number.isFinite(amount) ? amount : amount <= 0 ? 0 : Infinity;
    if (this.workSpent() > this.limits.workBudgetPolls) {
      this.fail("timeout", `work budget of ${this.limits.workBudgetPolls} polls exhausted`);
    }
    return this.firstFault ? this.vm.true : this.vm.false;
  }

  /** The prelude refused a log entry over a cap; the run fails with `log_limit` (the guest throws). */
  logRefused(message: QuickJSHandle): QuickJSHandle {
    this.fail("log_limit", this.shortString(message) ?? "a log cap was exceeded");
    return this.vm.undefined;
  }

  /** UTF-8 bytes of a log entry's data JSON (at most logDataBytes UTF-16 units: the prelude measured it first). */
  utf8Bytes(text: QuickJSHandle): QuickJSHandle {
    if (this.vm.typeof(text) !== "string" || this.stringLength(text) > this.limits.logDataBytes) return this.vm.newNumber(Infinity);
    return this.vm.newNumber(utf8Length(this.vm.getString(text)));
  }

  /**
   * The run's log entries, read once at its end (the prelude keeps them until then), faulted or not: a failed run's
   * entries up to its failure are what explain it. Nothing of the guest's runs meanwhile: the prelude answers with a
   * string it holds, and the poll does not stop it. The entries are the prelude's own JSON, checked against the caps
   * once more; an instance that misbehaved is not entered again, and its run keeps no entries.
   */
  readLogs(): void {
    if (this.instanceBroken || this.logsRead) return;
    this.logsRead = true;
    this.readingLogs = true;
    const text = this.guarded(() => {
      const result = this.vm.callFunction(this.instance.driverFunctions.takeLogs, this.instance.driver);
      if (result.error) {
        result.error.dispose();
        return undefined;
      }
      try {
        return this.vm.typeof(result.value) === "string" ? this.vm.getString(result.value) : undefined;
      } finally {
        result.value.dispose();
      }
    });
    this.readingLogs = false;
    if (text === undefined) return;
    for (const [level, message, data] of JSON.parse(`[${text}]`) as [HookLogLevel, string, unknown?][]) {
      if (this.logs.length >= this.limits.logCount || message.length > this.limits.logMessageChars) break;
      const entry: HookLog = { level, message: replaceLoneSurrogates(message) };
      if (data !== undefined) entry.data = replaceLoneSurrogates(data);
      this.logs.push(entry);
    }
  }

  // ---- steps ----

  /**
   * Takes the instance and starts the run: restores the pristine image, applies
   * this run's limits, then sets the call's clock, a fresh random seed and
   * `context` inside the prelude. Everything from here to `close()` must run
   * synchronously, so no other run can use the instance in between.
   */
  begin(contextJson: string, calledAtMs: number): void {
    this.claim();
    this.setCall(contextJson, calledAtMs);
  }

  /**
   * `begin()` then `evaluateBundle()`, starting from the instance's image of the bundle where it has one (the
   * bundle's top level then does not run again, and `invoke` starts the call). When the bundle is due an image
   * (BUNDLE_IMAGES in isolate.instance.ts), this run evaluates it for the image first: from the pristine image with
   * no call state (no context, the clock at 0, a zero seed), so the image holds nothing of this call or its
   * workspace. A top level that read the clock or Math.random, or failed, could have evaluated differently under
   * this call's state: the instance notes the bundle as unimageable, and this run evaluates it again with its own
   * call state, as every later run of it does.
   */
  beginWithBundle(bundle: string, contextJson: string, calledAtMs: number): void {
    const image = this.instance.bundleImage(bundle);
    if (image === undefined || image === "unimageable") {
      this.begin(contextJson, calledAtMs);
      return this.evaluateBundle(bundle);
    }
    if (image !== "capture") {
      this.claim(image);
      this.pendingCall = callJson(contextJson, calledAtMs, this.limits);
      return;
    }
    this.claim();
    if (this.firstFault) return;
    this.instance.clearForImage();
    this.setCall(undefined, 0);
    this.evaluateBundle(bundle);
    const read = this.callDriver("readCallState", []);
    const deterministic = read !== undefined && this.vm.sameValue(read, this.vm.false);
    read?.dispose();
    if (deterministic) {
      this.instance.keepBundleImage(bundle, { polls: this.polls, chargedUnits: this.chargedUnits });
      this.pendingCall = callJson(contextJson, calledAtMs, this.limits);
      return;
    }
    this.instance.keepUnimageable(bundle);
    // A host exception or trap leaves the instance unusable: its fault stands.
    if (this.instanceBroken) return;
    // The attempt is undone, as if it never ran: the run starts over from the pristine image.
    this.firstFault = undefined;
    this.polls = 0;
    this.chargedUnits = 0;
    this.instance.reset();
    this.setCall(contextJson, calledAtMs);
    this.evaluateBundle(bundle);
  }

  /**
   * Takes the instance for this run and restores `image` (the pristine one by default); the run starts with the
   * image's work already spent, so a hook's budget is the same with or without its image.
   */
  private claim(image?: BundleImage): void {
    const instance = this.instance;
    if (instance.host) return this.fail("exception", "isolate fault: the instance is serving another run");
    instance.reset(image);
    if (image) {
      this.polls = image.polls;
      this.chargedUnits = image.chargedUnits;
    }
    instance.runtime.setMemoryLimit(this.limits.memoryBytes);
    instance.runtime.setMaxStackSize(this.limits.stackBytes);
    instance.host = this;
  }

  /** Sets the call's clock, a fresh random seed and `context` inside the prelude; none of them without `contextJson`. */
  private setCall(contextJson: string | undefined, calledAtMs: number): void {
    if (this.firstFault) return;
    const text = this.vm.newString(callJson(contextJson, calledAtMs, this.limits));
    this.callDriver("begin", [text])?.dispose();
    text.dispose();
  }

  /**
   * Calls the adapter's `stage` with `inputJson`: its promise, a string when the adapter lacks the stage, or
   * undefined after a fault. A call a bundle image left pending starts in the same crossing.
   */
  invoke(stage: QuickJSHandle, inputJson: string): QuickJSHandle | undefined {
    if (this.firstFault) return undefined;
    const json = this.vm.newString(`[${this.pendingCall ?? "null"},${inputJson}]`);
    this.pendingCall = undefined;
    try {
      return this.callDriver("invoke", [stage, json]);
    } finally {
      json.dispose();
    }
  }

  /** Evaluates the bundle's top level (a classic script) and runs the jobs it queued. */
  evaluateBundle(bundle: string): void {
    if (this.firstFault) return;
    // BigInt arithmetic cannot be charged (see the prelude), so a bundle that writes a BigInt literal does not run.
    if (BIGINT_LITERAL.test(bundle)) return this.fail("exception", "SyntaxError: BigInt is not available in hooks");
    this.guarded(() => {
      const result = this.vm.evalCode(bundle, "bundle.js", { type: "global" });
      if (result.error) return this.failFromThrown(result.error, "exception");
      result.value.dispose();
      this.drainJobs();
    });
  }

  /** Calls a driver function; on a guest throw records a fault (`fallback` unless it is an engine error). */
  callDriver(
    name: Exclude<DriverFunction, "describeThrown">,
    args: QuickJSHandle[],
    fallback: IsolateErrorCode = "exception",
  ): QuickJSHandle | undefined {
    if (this.firstFault) return undefined;
    return this.guarded(() => {
      const result = this.vm.callFunction(this.instance.driverFunctions[name], this.instance.driver, ...args);
      if (result.error) {
        this.failFromThrown(result.error, fallback);
        return undefined;
      }
      return result.value;
    });
  }

  /** The guest is idle until `resumeClock`: nothing runs, so the deadline does not advance. */
  pauseClock(): void {
    this.waitingSince ??= Date.now();
  }

  resumeClock(): void {
    if (this.waitingSince === undefined) return;
    this.waitedMs += Date.now() - this.waitingSince;
    this.waitingSince = undefined;
  }

  /** Evaluates trusted host source (not the guest's) and returns its value, or records a fault. */
  evaluateTrusted(source: string, filename: string): QuickJSHandle | undefined {
    if (this.firstFault) return undefined;
    return this.guarded(() => {
      const result = this.vm.evalCode(source, filename, { type: "global", strict: true });
      if (result.error) {
        this.failFromThrown(result.error, "exception");
        return undefined;
      }
      return result.value;
    });
  }

  /** Calls a guest function; a throw is recorded as the fault (`exception` unless it is an engine error). */
  callFunction(fn: QuickJSHandle, args: QuickJSHandle[]): QuickJSHandle | undefined {
    if (this.firstFault) return undefined;
    return this.guarded(() => {
      const result = this.vm.callFunction(fn, this.vm.undefined, ...args);
      if (result.error) {
        this.failFromThrown(result.error, "exception");
        return undefined;
      }
      return result.value;
    });
  }

  /** Runs every queued job (bounded by the interrupt handler) and reports whether `promise` is still pending. */
  runUntilIdle(promise: QuickJSHandle): "pending" | "settled" | "fault" {
    const state = this.guarded(() => {
      this.drainJobs();
      if (this.firstFault) return "fault" as const;
      return this.vm.getPromiseState(promise).type === "pending" ? ("pending" as const) : ("settled" as const);
    });
    return state ?? "fault";
  }

  newString(text: string): QuickJSHandle {
    return this.vm.newString(text);
  }

  readShortString(handle: QuickJSHandle): string | undefined {
    return this.shortString(handle);
  }

  /**
   * Runs the job queue to exhaustion (bounded by the interrupt handler), then
   * returns the settled value of `promise`. A promise still pending after the
   * queue drained can never settle: `unresolved_promise`.
   */
  settle(promise: QuickJSHandle): QuickJSHandle | undefined {
    return this.guarded(() => {
      this.drainJobs();
      if (this.firstFault) return undefined;
      const state = this.vm.getPromiseState(promise);
      if (state.type === "pending") {
        this.fail("unresolved_promise", "the stage's promise was still pending when no work was left");
        return undefined;
      }
      if (state.type === "rejected") {
        this.failFromThrown(state.error, "exception");
        return undefined;
      }
      return state.notAPromise ? promise.dup() : state.value;
    });
  }

  private drainJobs(): void {
    while (!this.firstFault && this.instance.runtime.hasPendingJob()) {
      const result = this.instance.runtime.executePendingJobs();
      if (result.error) this.failFromThrown(result.error, "exception");
    }
  }

  /**
   * Copies a guest value out as JSON. The JSON text is produced and measured
   * inside the isolate, and only copied when its length fits `maxBytes`
   * (UTF-16 units never exceed UTF-8 bytes); the exact UTF-8 size is checked after.
   */
  copyJson(value: QuickJSHandle, maxBytes: number, what: string): { json: unknown } | undefined {
    const maxLength = this.vm.newNumber(maxBytes);
    const text = this.callDriver("serialize", [value, maxLength], "invalid_return");
    maxLength.dispose();
    if (!text) {
      if (this.firstFault?.code === "invalid_return")
        this.firstFault.message = `${what} is not JSON-serialisable: ${this.firstFault.message}`;
      return undefined;
    }
    try {
      const type = this.vm.typeof(text);
      if (type === "number") {
        this.fail("output_too_large", `${what} is larger than ${maxBytes} bytes as JSON`);
        return undefined;
      }
      if (type !== "string") {
        this.fail("invalid_return", `${what} has no JSON representation`);
        return undefined;
      }
      const json = this.vm.getString(text);
      const bytes = utf8Length(json);
      if (bytes > maxBytes) {
        this.fail("output_too_large", `${what} is larger than ${maxBytes} bytes as JSON`);
        return undefined;
      }
      this.outputBytes = bytes;
      return { json: JSON.parse(json) as unknown };
    } finally {
      text.dispose();
    }
  }

  /**
   * Ends the run. Nothing is disposed: the next run restores the instance's
   * image over whatever this one left. An instance that misbehaved (its wasm
   * stack pointer may be mid-frame) or grew past the retain cap is discarded.
   */
  close(): IsolateUsage {
    const wasmBytes = this.instance.wasmBytes();
    if (this.instance.host === this) this.instance.host = undefined;
    if (this.instanceBroken) discardInstance(this.instance);
    else retainOrDiscard(this.instance);
    return {
      polls: Math.ceil(this.workSpent()),
      wasmBytes,
      durationMs: Date.now() - this.startedAt,
      outputBytes: this.outputBytes,
    };
  }
}

/**
 * The prelude's `startCall` argument as JSON: [calledAt, seed0, seed1, seed2, seed3, context, logCount,
 * logMessageChars, logDataBytes], with a fresh seed; without `contextJson`, a null context, clock 0, a zero seed and
 * no log caps.
 */
function callJson(contextJson: string | undefined, calledAtMs: number, limits: IsolateLimits): string {
  if (contextJson === undefined) return "[0,0,0,0,0,null,0,0,0]";
  const logCaps = `${limits.logCount},${limits.logMessageChars},${limits.logDataBytes}`;
  return `[${calledAtMs},${randomSeed().join(",")},${contextJson},${logCaps}]`;
}

/** Random words drawn ahead, four per run: one call into the platform's CSPRNG serves many runs. */
const seeds = new Int32Array(4 * 256);
let seedsUsed = seeds.length;

/**
 * A fresh `Math.random` seed for one run: four words from crypto.getRandomValues, each used by exactly one run
 * (QuickJS seeds its generator once per context, so every run restored from one image would otherwise draw the
 * same numbers).
 */
function randomSeed(): Int32Array {
  if (seedsUsed === seeds.length) {
    crypto.getRandomValues(seeds);
    seedsUsed = 0;
  }
  seedsUsed += 4;
  return seeds.subarray(seedsUsed - 4, seedsUsed);
}

/** A thrown value as one line of text, as fault messages show it. */
function thrownText(read: ThrownValue): string {
  if (read.kind === "object") return `${read.name ?? "Error"}: ${read.message}`;
  if (read.kind === "string" || read.kind === "null") return `thrown value: ${read.message}`;
  return `thrown value of type ${read.kind}`;
}

/**
 * The shared instance could not be had: it failed to start, or this isolate's wasm budget has no room for it
 * (`budget`). Nothing ran; the caller refuses the work (hook_unavailable, code_mode_busy).
 */
export interface IsolateUnavailable {
  unavailable: "budget" | "fault";
  message: string;
}

/** Acquires the shared wasm instance (every retained one is at its initial memory) and opens a session in it. */
export async function openSession(limits: IsolateLimits): Promise<IsolateSession | IsolateUnavailable> {
  try {
    return new IsolateSession(await acquireInstance(), limits);
  } catch (error) {
    return { unavailable: error instanceof WasmBudgetExceeded ? "budget" : "fault", message: `isolate unavailable: ${String(error)}` };
  }
}
