import type { QuickJSContext, QuickJSHandle, QuickJSRuntime, QuickJSWASMModule } from "quickjs-emscripten-core";
import { HOOK_LOG_LEVELS, type HookLogLevel } from "../../../schema/hooks/contract.ts";
import { WASM_RUN_HEADROOM_BYTES, type IsolateLimits } from "./isolate.limits.ts";
import { acquireQuickJS, discardQuickJS, retainOrDiscard, wasmMemoryBytes } from "./isolate.module.ts";
import { BASE64_SOURCE, PRELUDE_SOURCE } from "./isolate.prelude.ts";
import { replaceLoneSurrogates, utf8Length } from "./isolate.text.ts";
import type { HookLog, IsolateError, IsolateErrorCode, IsolateUsage } from "./isolate.types.ts";

/** Native element visits charged as one poll (a poll is ~10,000 interpreter ticks). */
const UNITS_PER_POLL = 1000;
/** JSON escaping grows a string at most six-fold (`\uXXXX`), plus the quotes. */
const MAX_JSON_ESCAPE_GROWTH = 6;
const THROWN_TEXT_MAX = 500;

type DriverFunction = "stageKind" | "invoke" | "describe" | "serialize";

/** The engine's own uncatchable or resource errors, by `name: message`. */
function engineErrorCode(text: string): IsolateErrorCode | undefined {
  if (text === "InternalError: interrupted") return "timeout";
  if (text === "InternalError: out of memory") return "memory_exceeded";
  if (text === "InternalError: stack overflow") return "stack_overflow";
  return undefined;
}

/**
 * One bounded QuickJS runtime + context: created fresh for one stage call or
 * one adapter evaluation, then disposed. Every failure is recorded as the
 * session's fault (the first one wins) instead of being thrown; callers check
 * `fault` after each step and stop at the first one.
 */
export class IsolateSession {
  readonly logs: HookLog[] = [];
  outputBytes = 0;
  private polls = 0;
  private chargedUnits = 0;
  private firstFault: IsolateError | undefined;
  /** Set when the wasm instance itself misbehaved (host exception, trap): it is discarded, not disposed into. */
  private instanceBroken = false;
  private readonly startedAt = Date.now();
  private readonly deadline: number;
  private readonly runtime: QuickJSRuntime;
  private readonly vm: QuickJSContext;
  private driver: QuickJSHandle | undefined;

  constructor(
    private readonly module: QuickJSWASMModule,
    readonly limits: IsolateLimits,
  ) {
    this.deadline = this.startedAt + limits.deadlineMs;
    this.runtime = module.newRuntime();
    this.runtime.setMemoryLimit(limits.memoryBytes);
    this.runtime.setMaxStackSize(limits.stackBytes);
    this.runtime.setInterruptHandler(() => this.onPoll());
    this.vm = this.runtime.newContext();
  }

  get fault(): IsolateError | undefined {
    return this.firstFault;
  }

  fail(code: IsolateErrorCode, message: string): void {
    this.firstFault ??= { code, message };
  }

  /** Interrupt handler: true stops the guest with an uncatchable "interrupted". */
  private onPoll(): boolean {
    this.polls++;
    if (this.firstFault) return true;
    if (this.workSpent() > this.limits.workBudgetPolls) {
      this.fail("timeout", `work budget of ${this.limits.workBudgetPolls} polls exhausted`);
    } else if (Date.now() > this.deadline) {
      this.fail("timeout", `deadline of ${this.limits.deadlineMs} ms exceeded`);
    } else if (wasmMemoryBytes(this.module) >= this.limits.wasmMemoryBytes) {
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
      const text = this.describeThrown(thrown);
      const code =
        engineErrorCode(text) ??
        // An allocation failure so deep that not even the error object fit leaves a bare null.
        (text === "thrown value: null" && wasmMemoryBytes(this.module) >= this.limits.wasmMemoryBytes * 0.9
          ? "memory_exceeded"
          : fallback);
      this.fail(code, prefix + text);
    } finally {
      thrown.dispose();
    }
  }

  /** Reads name/message host-side, copying only short strings. */
  private describeThrown(thrown: QuickJSHandle): string {
    const kind = this.vm.typeof(thrown);
    if (kind === "string") return `thrown value: ${this.shortString(thrown) ?? "(long string)"}`;
    if (kind !== "object") return `thrown value of type ${kind}`;
    if (this.vm.sameValue(thrown, this.vm.null)) return "thrown value: null";
    const name = this.vm.getProp(thrown, "name");
    const message = this.vm.getProp(thrown, "message");
    try {
      return `${this.shortString(name) ?? "Error"}: ${this.shortString(message) ?? ""}`;
    } finally {
      name.dispose();
      message.dispose();
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

  // ---- host functions handed to the prelude ----

  private hostCharge(units: QuickJSHandle): QuickJSHandle {
    const amount = this.vm.getNumber(units);
    this.chargedUnits += Number.isFinite(amount) && amount > 0 ? amount : 0;
    if (this.workSpent() > this.limits.workBudgetPolls) {
      this.fail("timeout", `work budget of ${this.limits.workBudgetPolls} polls exhausted`);
    }
    return this.firstFault ? this.vm.true : this.vm.false;
  }

  /** Returns true (the guest then throws) once a log limit is hit; the run fails with `log_limit`. */
  private hostLog(level: QuickJSHandle, messageJson: QuickJSHandle, dataJson: QuickJSHandle): QuickJSHandle {
    const limits = this.limits;
    const refuse = (message: string): QuickJSHandle => {
      this.fail("log_limit", message);
      return this.vm.true;
    };
    if (this.firstFault) return this.vm.true;
    if (this.logs.length >= limits.logCount) return refuse(`more than ${limits.logCount} log entries`);
    const levelName = this.shortString(level);
    if (!HOOK_LOG_LEVELS.includes(levelName as HookLogLevel)) return refuse("unknown log level");
    const messageLength = this.stringLength(messageJson);
    if (messageLength > limits.logMessageChars * MAX_JSON_ESCAPE_GROWTH + 2) {
      return refuse(`log message longer than ${limits.logMessageChars} characters`);
    }
    const message: unknown = JSON.parse(this.vm.getString(messageJson));
    if (typeof message !== "string" || message.length > limits.logMessageChars) {
      return refuse(`log message longer than ${limits.logMessageChars} characters`);
    }
    const entry: HookLog = { level: levelName as HookLogLevel, message: replaceLoneSurrogates(message) };
    if (this.vm.typeof(dataJson) === "string") {
      if (this.stringLength(dataJson) > limits.logDataBytes) {
        return refuse(`log data larger than ${limits.logDataBytes} bytes`);
      }
      const text = this.vm.getString(dataJson);
      if (utf8Length(text) > limits.logDataBytes) return refuse(`log data larger than ${limits.logDataBytes} bytes`);
      entry.data = replaceLoneSurrogates(JSON.parse(text) as unknown);
    }
    this.logs.push(entry);
    return this.vm.false;
  }

  // ---- steps ----

  /** Installs the prelude (clock, charging, branding, context) and keeps its driver. */
  setup(contextJson: string, calledAtMs: number): void {
    this.guarded(() => {
      const prelude = this.vm.evalCode(PRELUDE_SOURCE, "rayrun-prelude.js", { type: "global", strict: true });
      if (prelude.error) return this.failFromThrown(prelude.error, "exception", "isolate setup failed: ");
      const charge = this.vm.newFunction("charge", (units) => this.hostCharge(units));
      const log = this.vm.newFunction("log", (level, message, data) => this.hostLog(level, message, data));
      const contextText = this.vm.newString(contextJson);
      const calledAt = this.vm.newNumber(calledAtMs);
      const base64 = this.vm.newString(BASE64_SOURCE);
      const driver = this.vm.callFunction(prelude.value, this.vm.undefined, charge, log, contextText, calledAt, base64);
      for (const handle of [prelude.value, charge, log, contextText, calledAt, base64]) handle.dispose();
      if (driver.error) return this.failFromThrown(driver.error, "exception", "isolate setup failed: ");
      this.driver = driver.value;
    });
  }

  /** Evaluates the bundle's top level (a classic script) and runs the jobs it queued. */
  evaluateBundle(bundle: string): void {
    if (this.firstFault) return;
    this.guarded(() => {
      const result = this.vm.evalCode(bundle, "bundle.js", { type: "global" });
      if (result.error) return this.failFromThrown(result.error, "exception");
      result.value.dispose();
      this.drainJobs();
    });
  }

  /** Calls a driver function; on a guest throw records a fault (`fallback` unless it is an engine error). */
  callDriver(name: DriverFunction, args: QuickJSHandle[], fallback: IsolateErrorCode = "exception"): QuickJSHandle | undefined {
    const driver = this.driver;
    if (this.firstFault || !driver) return undefined;
    return this.guarded(() => {
      const result = this.vm.callMethod(driver, name, args);
      if (result.error) {
        this.failFromThrown(result.error, fallback);
        return undefined;
      }
      return result.value;
    });
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
    while (!this.firstFault && this.runtime.hasPendingJob()) {
      const result = this.runtime.executePendingJobs();
      if (result.error) this.failFromThrown(result.error, "exception");
    }
  }

  /**
   * Copies a guest value out as JSON. The JSON text is produced and measured
   * inside the isolate, and only copied when its length fits `maxBytes`
   * (UTF-16 units never exceed UTF-8 bytes); the exact UTF-8 size is checked after.
   */
  copyJson(value: QuickJSHandle, maxBytes: number, what: string): { json: unknown } | undefined {
    const text = this.callDriver("serialize", [value], "invalid_return");
    if (!text) {
      if (this.firstFault?.code === "invalid_return") this.firstFault.message = `${what} is not JSON-serialisable: ${this.firstFault.message}`;
      return undefined;
    }
    try {
      if (this.vm.typeof(text) !== "string") {
        this.fail("invalid_return", `${what} has no JSON representation`);
        return undefined;
      }
      const length = this.stringLength(text);
      if (length > maxBytes) {
        this.fail("output_too_large", `${what} is larger than ${maxBytes} bytes as JSON`);
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

  /** Disposes everything; discards the wasm instance if it misbehaved or grew past the retain cap. */
  close(): IsolateUsage {
    const wasmBytes = wasmMemoryBytes(this.module);
    if (!this.instanceBroken) {
      try {
        // Freeing can allocate (GC bookkeeping); a run that ended at its memory limit must still free cleanly.
        this.runtime.setMemoryLimit(-1);
        this.driver?.dispose();
        this.vm.dispose();
        this.runtime.dispose();
      } catch {
        // QuickJS can leak objects after an allocation failure deep inside the engine; its
        // free then aborts the instance. The instance is discarded; the run's outcome stands.
        this.instanceBroken = true;
      }
    }
    if (this.instanceBroken) discardQuickJS(this.module);
    else retainOrDiscard(this.module);
    return {
      polls: Math.ceil(this.workSpent()),
      wasmBytes,
      durationMs: Date.now() - this.startedAt,
      outputBytes: this.outputBytes,
    };
  }
}

/**
 * Acquires the shared wasm instance and opens a session in it. A failure here
 * (instantiation, or a runtime that cannot be created) discards the instance.
 */
export async function openSession(limits: IsolateLimits): Promise<IsolateSession | IsolateError> {
  let module: QuickJSWASMModule;
  try {
    module = await acquireQuickJS();
  } catch (error) {
    return { code: "exception", message: `isolate unavailable: ${String(error)}` };
  }
  try {
    // An instance retained near this run's (possibly lowered) wasm cap would leave the run no room: start fresh.
    if (wasmMemoryBytes(module) > limits.wasmMemoryBytes - WASM_RUN_HEADROOM_BYTES) {
      discardQuickJS(module);
      module = await acquireQuickJS();
    }
    return new IsolateSession(module, limits);
  } catch (error) {
    discardQuickJS(module);
    return { code: "exception", message: `isolate unavailable: ${String(error)}` };
  }
}
