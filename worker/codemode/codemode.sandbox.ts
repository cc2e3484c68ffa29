import type { QuickJSDeferredPromise, QuickJSHandle } from "quickjs-emscripten-core";
import { prepareContext } from "../hooks/isolate/isolate.context.ts";
import type { IsolateInstance } from "../hooks/isolate/isolate.instance.ts";
import { resolveLimits, WASM_RETAIN_BYTES, type LimitOverrides } from "../hooks/isolate/isolate.limits.ts";
import { newPrivateInstance } from "../hooks/isolate/isolate.module.ts";
import { IsolateSession } from "../hooks/isolate/isolate.session.ts";
import { utf8Length } from "../hooks/isolate/isolate.text.ts";
import type { IsolateError } from "../hooks/isolate/isolate.types.ts";
import { CODE_MODE_LIMITS, type CodeModeLimits } from "./codemode.limits.ts";
import { CODE_MODE_RUNTIME_SOURCE } from "./codemode.runtime.ts";
import type { CodeModeError } from "./codemode.errors.ts";

/** What one inner call gave the program: a value, or the error its promise rejects with. */
export type ToolAnswer = { ok: true; value: unknown } | { ok: false; error: CodeModeError };

/** The host side of a run: where `tools.<name>(args)` goes. It never throws. */
export interface ProgramHost {
  /** `index` counts the run's calls from 0; `signal` aborts when the run ends first. */
  callTool(call: { index: number; name: string; arguments: Record<string, unknown> }, signal: AbortSignal): Promise<ToolAnswer>;
}

export interface ProgramRequest {
  /** A "rayrun bundle v1" from `compileProgram`. */
  script: string;
  host: ProgramHost;
  requestId: string;
  /** The caller's workspace: it holds at most RUNS_PER_WORKSPACE of the isolate's slots. */
  workspaceId: string;
  /** Per-run overrides for tests: they can only lower a bound. */
  limits?: Partial<CodeModeLimits>;
  isolateLimits?: LimitOverrides;
  /** The client went away or cancelled: the run ends as `cancelled`. */
  signal?: AbortSignal;
}

export type ProgramRun = { ok: true; value: unknown; logs: string[] } | { ok: false; error: CodeModeError; logs: string[] };

/** Longest console line kept; a longer one is cut and ends with "…". */
export const CONSOLE_LINE_MAX_CHARS = 2000;
/** The envelope around the result or error may add this much to what the program returned. */
const ENVELOPE_SLACK_BYTES = 256 * 1024;

/**
 * Code Mode runs hold a private QuickJS wasm instance each (16–48 MiB) for as
 * long as their tools take; this many may run at once in one Worker isolate,
 * later ones wait (inside their wall time) for a slot.
 */
export const RUNS_PER_ISOLATE = 2;
/**
 * A workspace holds at most this many of the isolate's slots, so one tenant's
 * runs waiting on slow tools cannot keep every other tenant's runs waiting: a
 * slot stays free for the rest.
 */
export const RUNS_PER_WORKSPACE = 1;
let running = 0;
const runningByWorkspace = new Map<string, number>();
/** How often a run waiting for a slot looks again. */
const SLOT_POLL_MS = 20;

const slotFree = (workspaceId: string) => running < RUNS_PER_ISOLATE && (runningByWorkspace.get(workspaceId) ?? 0) < RUNS_PER_WORKSPACE;

/**
 * Waits inside the waiting run's own request, polling: a run that finishes
 * cannot hand its slot over by resolving a promise the waiting run awaits,
 * because in workerd a promise resolved from another request's handler never
 * wakes the request that awaits it (that run would hang until its client gave up).
 */
async function takeSlot(workspaceId: string, signal: AbortSignal): Promise<boolean> {
  while (!slotFree(workspaceId)) {
    if (signal.aborted) return false;
    await new Promise((resolve) => setTimeout(resolve, SLOT_POLL_MS));
  }
  if (signal.aborted) return false;
  running++;
  runningByWorkspace.set(workspaceId, (runningByWorkspace.get(workspaceId) ?? 0) + 1);
  return true;
}

function releaseSlot(workspaceId: string): void {
  running--;
  const held = (runningByWorkspace.get(workspaceId) ?? 1) - 1;
  if (held > 0) runningByWorkspace.set(workspaceId, held);
  else runningByWorkspace.delete(workspaceId);
}

/**
 * One idle private instance is kept for the next run: creating one (wasm
 * instantiation, runtime, prelude, image) costs far more than a run. Every run
 * restores the instance's pristine image first (`IsolateSession.begin`), as
 * the shared hook instance does, so nothing of a run survives into the next;
 * an instance that misbehaved or grew past the retain cap is dropped.
 */
let idleInstance: IsolateInstance | undefined;

async function takeInstance(): Promise<IsolateInstance> {
  const idle = idleInstance;
  idleInstance = undefined;
  return idle ?? newPrivateInstance();
}

function returnInstance(instance: IsolateInstance, session: IsolateSession): void {
  if (!session.instanceReusable || instance.wasmBytes() > WASM_RETAIN_BYTES) return;
  idleInstance ??= instance;
}

/**
 * Runs a compiled program in a fresh QuickJS runtime and context (a private
 * instance restored to its pristine image) whose only
 * capabilities are `tools` and `console.log`. The guest runs in steps: each
 * step drains the job queue (bounded by the work budget and the compute
 * deadline, as a hook is), then the host waits for an inner call to finish,
 * with the guest's clock stopped. Bounds: inner calls per run, calls in flight
 * (later ones queue), wall time, result size, console lines. Never throws:
 * every failure is an error with a stable code, and once the run has ended no
 * queued call starts and no guest code runs.
 */
export async function runProgram(request: ProgramRequest): Promise<ProgramRun> {
  const limits = boundedLimits(request.limits);
  const ended = new AbortController();
  const wall = setTimeout(() => ended.abort("wall"), limits.wallTimeMs);
  const onClientAbort = () => ended.abort("cancelled");
  request.signal?.addEventListener("abort", onClientAbort, { once: true });
  const logs: string[] = [];
  try {
    if (!(await takeSlot(request.workspaceId, ended.signal))) return { ok: false, error: endedError(ended.signal, limits), logs };
    try {
      const run = new Run(request, limits, ended, logs);
      return await run.execute();
    } finally {
      releaseSlot(request.workspaceId);
    }
  } finally {
    clearTimeout(wall);
    request.signal?.removeEventListener("abort", onClientAbort);
    if (!ended.signal.aborted) ended.abort("done");
  }
}

function boundedLimits(overrides: Partial<CodeModeLimits> | undefined): CodeModeLimits {
  const limits = { ...CODE_MODE_LIMITS };
  for (const key of Object.keys(limits) as (keyof CodeModeLimits)[]) {
    const value = overrides?.[key];
    if (typeof value === "number" && Number.isFinite(value) && value >= 1) limits[key] = Math.min(limits[key], Math.floor(value));
  }
  return limits;
}

function endedError(signal: AbortSignal, limits: CodeModeLimits): CodeModeError {
  if (signal.reason === "cancelled") return { code: "cancelled", message: "The client cancelled the run" };
  return {
    code: "wall_time_exceeded",
    message: `The run took longer than ${limits.wallTimeMs / 1000} s; calls still in flight were cancelled`,
    details: { limit: limits.wallTimeMs },
  };
}

interface QueuedCall {
  index: number;
  name: string;
  arguments: Record<string, unknown>;
  deferred: QuickJSDeferredPromise;
}

class Run {
  private session: IsolateSession | undefined;
  /** A Code Mode bound the run broke; it wins over the isolate fault it causes to stop the guest. */
  private runFault: CodeModeError | undefined;
  private calls = 0;
  private inFlight = 0;
  private readonly queued: QueuedCall[] = [];
  private readonly answered: { deferred: QuickJSDeferredPromise; text: string }[] = [];
  private wake: (() => void) | undefined;
  /** Everything this run holds in the guest, released before the instance is restored for the next run. */
  private readonly handles: QuickJSHandle[] = [];
  private readonly deferreds = new Set<QuickJSDeferredPromise>();

  constructor(
    private readonly request: ProgramRequest,
    private readonly limits: CodeModeLimits,
    private readonly ended: AbortController,
    private readonly logs: string[],
  ) {}

  async execute(): Promise<ProgramRun> {
    let instance: IsolateInstance;
    try {
      instance = await takeInstance();
    } catch (error) {
      console.error("code mode isolate unavailable", error);
      return this.failed({ code: "exception", message: "The sandbox could not be started" });
    }
    const session = new IsolateSession(instance, resolveLimits(this.request.isolateLimits));
    this.session = session;
    try {
      const envelope = await this.drive(session);
      return this.finish(session, envelope);
    } catch (error) {
      session.fail("exception", `isolate fault: ${String(error)}`);
      return this.finish(session, undefined);
    } finally {
      // Nothing queued starts, and no answer reaches the guest, once the run is over.
      if (!this.ended.signal.aborted) this.ended.abort("done");
      this.queued.length = 0;
      const released = session.instanceReusable && this.release();
      session.close();
      if (released) returnInstance(instance, session);
    }
  }

  /** Disposes the run's handles; false if the instance is not in a state to do so (it is then not reused). */
  private release(): boolean {
    try {
      for (const deferred of this.deferreds) deferred.dispose();
      for (const handle of this.handles) if (handle.alive) handle.dispose();
      return true;
    } catch (error) {
      console.error("code mode handles could not be released", error);
      return false;
    }
  }

  /** Starts the program and steps it until its promise settles or the run ends; returns the settled envelope. */
  private async drive(session: IsolateSession): Promise<QuickJSHandle | undefined> {
    const context = prepareContext({
      calledAt: new Date().toISOString(),
      requestId: this.request.requestId,
      workspaceUid: "",
      connectionId: "",
      toolUid: "",
      toolName: "run_code",
      config: {},
    });
    if (!context.ok) throw new Error(context.message);
    session.begin(context.json, context.calledAtMs);
    const vm = session.vm;
    const held = <T extends QuickJSHandle | undefined>(handle: T): T => {
      if (handle) this.handles.push(handle);
      return handle;
    };
    const hostCall = held(vm.newFunction("callTool", (name, args) => this.onCall(name, args)));
    const hostLine = held(vm.newFunction("consoleLine", (line) => this.onLine(line)));
    const maxLine = held(vm.newNumber(CONSOLE_LINE_MAX_CHARS));
    const factory = held(session.evaluateTrusted(CODE_MODE_RUNTIME_SOURCE, "rayrun-code-mode.js"));
    const start = held(factory && session.callFunction(factory, [hostCall, hostLine, maxLine]));
    session.evaluateBundle(this.request.script);
    if (!start || session.fault) return undefined;
    // Not `vm.global`: that handle is cached across runs, and the next run restores the memory under it.
    const program = held(session.evaluateTrusted("globalThis.__rayrun.default", "rayrun-code-mode-program.js"));
    if (!program) return undefined;
    const promise = held(session.callFunction(start, [program]));
    if (!promise) return undefined;

    for (;;) {
      const state = session.runUntilIdle(promise);
      if (state === "fault" || this.runFault) return undefined;
      // The runtime's promise only rejects when even reporting the program's error failed (e.g. out of memory):
      // settle() records that rejection as the run's fault.
      if (state === "settled") return session.settle(promise);
      if (this.ended.signal.aborted) return undefined;
      if (this.inFlight === 0 && this.queued.length === 0 && this.answered.length === 0) {
        session.fail("unresolved_promise", "the program's promise was still pending when no work was left");
        return undefined;
      }
      if (this.answered.length === 0) {
        session.pauseClock();
        await this.nextAnswerOrEnd();
        session.resumeClock();
      }
      if (this.ended.signal.aborted) return undefined;
      for (const { deferred, text } of this.answered.splice(0)) {
        const value = vm.newString(text);
        deferred.resolve(value);
        value.dispose();
        deferred.dispose();
        this.deferreds.delete(deferred);
      }
    }
  }

  private nextAnswerOrEnd(): Promise<void> {
    return new Promise<void>((resolve) => {
      const done = () => {
        this.wake = undefined;
        this.ended.signal.removeEventListener("abort", done);
        resolve();
      };
      this.wake = done;
      this.ended.signal.addEventListener("abort", done, { once: true });
    });
  }

  /** `tools.<name>(argsJson)` from the guest: counts the call, queues it, and returns its promise. */
  private onCall(nameHandle: QuickJSHandle, argsHandle: QuickJSHandle): QuickJSHandle {
    const session = this.session!;
    const vm = session.vm;
    if (this.ended.signal.aborted || this.runFault) return this.stopGuest(vm);
    if (this.calls >= this.limits.toolCalls) {
      this.runFault = {
        code: "too_many_tool_calls",
        message: `The program made more than ${this.limits.toolCalls} tool calls; the run was stopped`,
        details: { limit: this.limits.toolCalls },
      };
      return this.stopGuest(vm);
    }
    const index = this.calls++;
    const deferred = vm.newPromise();
    this.deferreds.add(deferred);
    const settleNow = (error: CodeModeError) => this.answered.push({ deferred, text: JSON.stringify({ ok: false, error }) });
    const name = readBoundedString(session, nameHandle, NAME_MAX_CHARS);
    const argsJson = readBoundedString(session, argsHandle, this.limits.argumentsBytes);
    if (name === undefined) {
      settleNow({ code: "unknown_tool", message: "Unknown tool: (a name over 256 characters)" });
    } else if (argsJson === undefined || utf8Length(argsJson) > this.limits.argumentsBytes) {
      settleNow({
        code: "invalid_arguments",
        message: `The arguments are larger than ${this.limits.argumentsBytes} bytes as JSON`,
        details: { tool: name, limit: this.limits.argumentsBytes },
      });
    } else {
      const parsed: unknown = JSON.parse(argsJson);
      if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
        settleNow({ code: "invalid_arguments", message: "The arguments must be a JSON object", details: { tool: name } });
      } else {
        this.queued.push({ index, name, arguments: parsed as Record<string, unknown>, deferred });
        this.pump();
      }
    }
    return deferred.handle.dup();
  }

  /** Makes the guest stop at its next poll; the run's error is already recorded. */
  private stopGuest(vm: IsolateSession["vm"]): QuickJSHandle {
    this.session?.fail("exception", "the run was stopped");
    return vm.undefined;
  }

  /** Starts queued calls while fewer than the in-flight bound run; a finished call starts the next one. */
  private pump(): void {
    while (this.inFlight < this.limits.callsInFlight && this.queued.length > 0 && !this.ended.signal.aborted) {
      const call = this.queued.shift()!;
      this.inFlight++;
      void this.request.host
        .callTool({ index: call.index, name: call.name, arguments: call.arguments }, this.ended.signal)
        .catch((error: unknown): ToolAnswer => {
          console.error("code mode inner call failed", error);
          return { ok: false, error: { code: "exception", message: "The tool call failed inside the gateway" } };
        })
        .then((answer) => {
          this.inFlight--;
          if (this.ended.signal.aborted) return;
          this.answered.push({ deferred: call.deferred, text: JSON.stringify(answer) });
          this.pump();
          this.wake?.();
        });
    }
  }

  /** `console.log` from the guest: one line, already cut to CONSOLE_LINE_MAX_CHARS. */
  private onLine(lineHandle: QuickJSHandle): QuickJSHandle {
    const session = this.session!;
    if (this.logs.length >= this.limits.logLines) {
      session.fail("log_limit", `more than ${this.limits.logLines} console lines`);
      return session.vm.undefined;
    }
    const line = readBoundedString(session, lineHandle, CONSOLE_LINE_MAX_CHARS + 1);
    if (line === undefined) session.fail("log_limit", `a console line longer than ${CONSOLE_LINE_MAX_CHARS} characters`);
    else this.logs.push(line);
    return session.vm.undefined;
  }

  private finish(session: IsolateSession, envelope: QuickJSHandle | undefined): ProgramRun {
    if (this.runFault) return this.failed(this.runFault);
    if (this.ended.signal.aborted && this.ended.signal.reason !== "done") return this.failed(endedError(this.ended.signal, this.limits));
    if (!envelope || session.fault) return this.failed(isolateError(session.fault, this.limits));
    const copied = session.copyJson(envelope, this.limits.resultBytes + ENVELOPE_SLACK_BYTES, "the program's result");
    envelope.dispose();
    if (!copied) return this.failed(isolateError(session.fault, this.limits));
    const result = copied.json as
      { ok: true; value: unknown } | { ok: false; error: { tool?: CodeModeError; thrown?: { name: string; message: string } } };
    if (result.ok) {
      const bytes = utf8Length(JSON.stringify(result.value));
      if (bytes > this.limits.resultBytes) return this.failed(isolateError({ code: "output_too_large", message: "" }, this.limits, bytes));
      return { ok: true, value: result.value, logs: this.logs };
    }
    if (result.error.tool) return this.failed(result.error.tool);
    const thrown = result.error.thrown ?? { name: "Error", message: "" };
    return this.failed(thrownError(thrown));
  }

  private failed(error: CodeModeError): ProgramRun {
    return { ok: false, error, logs: this.logs };
  }
}

const NAME_MAX_CHARS = 256;

/** A guest string of at most `maxChars` UTF-16 units, read without copying a longer one; undefined otherwise. */
function readBoundedString(session: IsolateSession, handle: QuickJSHandle, maxChars: number): string | undefined {
  const vm = session.vm;
  if (vm.typeof(handle) !== "string") return undefined;
  const length = vm.getProp(handle, "length");
  const chars = vm.getNumber(length);
  length.dispose();
  return chars <= maxChars ? vm.getString(handle) : undefined;
}

/** The engine's own errors, when the program caught nothing and they surfaced as a rejection. */
const ENGINE_ERRORS: Record<string, IsolateError["code"]> = {
  "InternalError: interrupted": "timeout",
  "InternalError: out of memory": "memory_exceeded",
  "InternalError: stack overflow": "stack_overflow",
};

function thrownError(thrown: { name: string; message: string }): CodeModeError {
  const text = `${thrown.name}: ${thrown.message}`;
  const engine = ENGINE_ERRORS[text];
  if (engine) return isolateError({ code: engine, message: text }, CODE_MODE_LIMITS);
  return { code: "exception", message: `The program threw ${text}`, details: { name: thrown.name, message: thrown.message } };
}

/** An isolate fault as the run's error, in words for the agent. */
function isolateError(fault: IsolateError | undefined, limits: CodeModeLimits, bytes?: number): CodeModeError {
  if (!fault) return { code: "exception", message: "The program produced no result" };
  switch (fault.code) {
    case "timeout":
      return { code: "timeout", message: "The program used up its work budget (time waiting on tools does not count)" };
    case "memory_exceeded":
      return { code: "memory_exceeded", message: "The program ran out of memory" };
    case "stack_overflow":
      return { code: "stack_overflow", message: "The program overflowed its stack" };
    case "output_too_large":
      return {
        code: "output_too_large",
        message: `The program's result is larger than ${limits.resultBytes} bytes as JSON`,
        details: { limit: limits.resultBytes, ...(bytes !== undefined ? { bytes } : {}) },
      };
    case "invalid_return":
      return { code: "invalid_return", message: `The program's result is not JSON: ${fault.message}` };
    case "unresolved_promise":
      return { code: "unresolved_promise", message: "The program awaited a promise that can never settle" };
    case "log_limit":
      return { code: "log_limit", message: `The program wrote ${fault.message}`, details: { limit: limits.logLines } };
    case "exception":
      return { code: "exception", message: `The program failed: ${fault.message}` };
  }
}
