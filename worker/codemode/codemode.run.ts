import type { QuickJSDeferredPromise, QuickJSHandle } from "quickjs-emscripten-core";
import { prepareContext } from "../hooks/isolate/isolate.context.ts";
import type { IsolateInstance } from "../hooks/isolate/isolate.instance.ts";
import { resolveLimits, WASM_RETAIN_BYTES, type LimitOverrides } from "../hooks/isolate/isolate.limits.ts";
import { newPrivateInstance } from "../hooks/isolate/isolate.module.ts";
import { WasmBudgetExceeded } from "../lib/wasm-budget.ts";
import { IsolateSession, openSession } from "../hooks/isolate/isolate.session.ts";
import { utf8Length } from "../hooks/isolate/isolate.text.ts";
import type { CodeModeError } from "./codemode.errors.ts";
import { busyError, endedError, isolateError, THROWN_MESSAGE_MAX_CHARS, thrownError } from "./codemode.failures.ts";
import { CODE_MODE_COST, type CodeModeLimits } from "./codemode.limits.ts";
import { CODE_MODE_RUNTIME_SOURCE } from "./codemode.runtime.ts";

/** What one inner call gave the program: a value, or the error its promise rejects with. */
export type ToolAnswer = { ok: true; value: unknown } | { ok: false; error: CodeModeError };

/** The host side of a run: where `tools.<name>(args)` goes. It never throws. */
export interface ProgramHost {
  /** `index` counts the run's calls from 0; `signal` aborts when the run ends first. */
  callTool(call: { index: number; name: string; arguments: Record<string, unknown> }, signal: AbortSignal): Promise<ToolAnswer>;
}

/**
 * How a run ended. `ran` is false when it ended before the program ran (it did
 * not compile, or its workspace was over its share): such a refusal has no
 * console lines or calls to report.
 */
export type ProgramRun = { ok: true; value: unknown; logs: string[] } | { ok: false; error: CodeModeError; logs: string[]; ran: boolean };

/** One turn of the isolate's compute (see codemode.sandbox.ts): the lane, taken fairly, and the workspace's allowance. */
export type ComputeTurn = <T>(work: () => T | Promise<T>, estimateMs: () => number) => Promise<TurnResult<T>>;
export type TurnResult<T> = { ok: true; value: T } | { ok: false; error: CodeModeError };

export interface RunSettings {
  script: string;
  host: ProgramHost;
  requestId: string;
  limits: CodeModeLimits;
  isolateLimits?: LimitOverrides;
  /** Aborts when the run ends: wall time, the client, or its own end ("done"). */
  ended: AbortController;
  turn: ComputeTurn;
}

/** Longest console line kept; a longer one is cut and ends with "…". */
export const CONSOLE_LINE_MAX_CHARS = 2000;
/** The result may be this much over its bound and still be copied out, so the error can say how large it was. */
const RESULT_SLACK_BYTES = 256 * 1024;
const NAME_MAX_CHARS = 256;
/** How much of a program-supplied name an error repeats. */
const ECHOED_NAME_CHARS = 128;

type StepState = "pending" | "settled" | "fault";

interface Answered {
  deferred: QuickJSDeferredPromise;
  answer: ToolAnswer;
  /** A value's JSON, or the refusal's `{ code, message, details }` (details null when there are none). */
  json: string;
}

function answered(deferred: QuickJSDeferredPromise, answer: ToolAnswer): Answered {
  if (answer.ok) return { deferred, answer, json: JSON.stringify(answer.value ?? null) };
  const { code, message, details } = answer.error;
  return { deferred, answer, json: JSON.stringify({ code, message, details: details ?? null }) };
}

interface QueuedCall {
  index: number;
  name: string;
  arguments: Record<string, unknown>;
  deferred: QuickJSDeferredPromise;
}

/**
 * One idle private instance is kept for the next run: creating one (wasm
 * instantiation, runtime, prelude, image) costs far more than a run. Every run
 * restores the instance's pristine image first (`IsolateSession.begin`), as
 * the shared hook instance does, so nothing of a run survives into the next;
 * an instance that misbehaved or grew past the retain cap is dropped, and so
 * is one returned while another is idle: each gives its share of the wasm
 * budget back.
 */
let idleInstance: IsolateInstance | undefined;

/** The idle instance, or a new one (WasmBudgetExceeded when this isolate's wasm budget has no room for it). */
async function takeInstance(): Promise<IsolateInstance> {
  const idle = idleInstance;
  idleInstance = undefined;
  return idle ?? newPrivateInstance();
}

function returnInstance(instance: IsolateInstance, reusable: boolean): void {
  if (reusable && instance.wasmBytes() <= WASM_RETAIN_BYTES && !idleInstance) idleInstance = instance;
  else instance.drop();
}

/** No sandbox memory is free in this isolate: the run is refused before it starts, like a busy workspace. */
const noSandboxMemory = () =>
  busyError("This server has no sandbox memory free for the program right now; run it again in 1 s", 1, { limit: "wasm_memory" });

/**
 * One attempt at running a compiled program in a fresh QuickJS runtime and
 * context whose only capabilities are `tools` and `console.log`. The guest
 * runs in steps, each one turn of the isolate's compute: a step delivers the
 * answers that arrived and drains the job queue (bounded by the work budget
 * and the compute deadline, as a hook is); between steps the run waits for an
 * inner call with its clock stopped and holds no turn.
 *
 * - `trial()` runs the first step on the shared hook instance. A program that
 *   needs no tool to finish (most refusals, `return 1`) ends there; one that
 *   must wait on a tool is thrown away whole (its calls never started) and run
 *   again with `parked()` once a sandbox of its own is free.
 * - `parked()` runs it in a private instance, kept while it waits on tools.
 *
 * How the run ended is read host-side: the state of the program's own promise
 * as the engine holds it, and, for a rejection, whether it is one of the
 * ToolErrors the host delivered (by identity) or else what was thrown (read by
 * the prelude with none of the program's code running). Nothing the program
 * plants (toJSON, getters, proxies, a replaced `then`) changes which. Only the
 * result value is serialised by the program's own rules (its `toJSON`), and
 * while it is, tools and console refuse.
 */
export class Run {
  /** A Code Mode bound the run broke; it wins over the isolate fault it causes to stop the guest. */
  private runFault: CodeModeError | undefined;
  private calls = 0;
  private inFlight = 0;
  private readonly queued: QueuedCall[] = [];
  /** Answers that arrived, each with the JSON the program will be handed, until the next step delivers them. */
  private readonly answered: Answered[] = [];
  private wake: (() => void) | undefined;
  /** Everything this run holds in the guest, released before the instance is restored for the next run. */
  private readonly handles: QuickJSHandle[] = [];
  private readonly deferreds = new Set<QuickJSDeferredPromise>();
  /** The ToolErrors delivered to the program, with the refusal each stands for. */
  private readonly refusals: { handle: QuickJSHandle; error: CodeModeError }[] = [];
  /** The session of the attempt, for what its turns are charged. */
  private session: IsolateSession | undefined;
  private promise: QuickJSHandle | undefined;
  private toolError: QuickJSHandle | undefined;
  /** True while the result is serialised: the program returned, so tools and console refuse. */
  private reading = false;
  /** In a trial no call starts: the calls wait for the parked run that replaces it. */
  private startsCalls = false;
  readonly logs: string[] = [];

  constructor(private readonly settings: RunSettings) {}

  /** The first step on the shared instance: the run's outcome, or undefined when it must wait on a tool. */
  async trial(): Promise<ProgramRun | undefined> {
    const turn = await this.settings.turn(
      async (): Promise<ProgramRun | undefined> => {
        const session = await openSession(resolveLimits(this.settings.isolateLimits));
        if ("unavailable" in session) {
          if (session.unavailable === "budget") return notStarted(noSandboxMemory());
          return this.failed({ code: "exception", message: "The sandbox could not be started" });
        }
        try {
          let state = this.start(session);
          // Refusals the host answered at once (a bad name or arguments) need no waiting: deliver them here.
          while (state === "pending" && this.queued.length === 0 && this.answered.length > 0) state = this.step(session);
          if (state === "pending" && this.queued.length > 0 && !this.runFault && !session.fault) return undefined;
          return this.end(session, state);
        } catch (error) {
          session.fail("exception", `isolate fault: ${String(error)}`);
          return this.end(session, "fault");
        } finally {
          this.queued.length = 0;
          if (session.instanceReusable) this.release();
          session.close();
        }
      },
      () => this.firstStepCost(),
    );
    return turn.ok ? turn.value : notStarted(turn.error);
  }

  /** The whole run in a private instance of its own, held while the run waits on tools. */
  async parked(): Promise<ProgramRun> {
    this.startsCalls = true;
    let session: IsolateSession | undefined;
    let instance: IsolateInstance | undefined;
    try {
      const first = await this.settings.turn(
        async () => {
          instance = await takeInstance();
          const opened = new IsolateSession(instance, resolveLimits(this.settings.isolateLimits));
          session = opened;
          return this.advance(opened, this.start(opened));
        },
        () => this.firstStepCost(),
      );
      if (!first.ok) return notStarted(first.error);
      if (!session) throw new Error("the sandbox was not opened");
      return first.value ?? (await this.drive(session));
    } catch (error) {
      if (!session) {
        if (error instanceof WasmBudgetExceeded) return notStarted(noSandboxMemory());
        console.error("code mode isolate unavailable", error);
        instance?.drop();
        return this.failed({ code: "exception", message: "The sandbox could not be started" });
      }
      session.fail("exception", `isolate fault: ${String(error)}`);
      return this.end(session, "fault");
    } finally {
      // Nothing queued starts, and no answer reaches the guest, once the run is over.
      if (!this.settings.ended.signal.aborted) this.settings.ended.abort("done");
      this.queued.length = 0;
      if (session && instance) {
        const released = session.instanceReusable && this.release();
        session.close();
        returnInstance(instance, released);
      }
    }
  }

  /** Waits for answers and steps the program, one turn per step, until it settles or the run ends. */
  private async drive(session: IsolateSession): Promise<ProgramRun> {
    const ended = this.settings.ended.signal;
    for (;;) {
      // The clock stays stopped from here until the next step runs: waiting for tools and for a turn is not computing.
      session.pauseClock();
      if (this.answered.length === 0) await this.nextAnswerOrEnd();
      if (ended.aborted) return this.end(session, "pending");
      const polls = session.workSpentPolls;
      const answerBytes = this.answered.reduce((sum, entry) => sum + entry.json.length, 0);
      const stepped = await this.settings.turn(
        () => {
          session.resumeClock();
          return this.advance(session, this.step(session));
        },
        () => this.workCost(session, polls) + (answerBytes / 1024) * CODE_MODE_COST.answerMsPerKiB,
      );
      if (!stepped.ok) return this.failed(stepped.error);
      if (stepped.value) return stepped.value;
    }
  }

  /**
   * After a step: undefined while the program waits on calls that can still answer; else how the run ended, read
   * in the same turn (serialising the result is the program's computation too, and the program is done).
   */
  private advance(session: IsolateSession, state: StepState): ProgramRun | undefined {
    const waiting = this.inFlight > 0 || this.queued.length > 0 || this.answered.length > 0;
    if (state === "pending" && waiting && !this.runFault && !session.fault && !this.settings.ended.signal.aborted) return undefined;
    return this.end(session, state);
  }

  /** Begins the session, sets up the runtime and the program, and runs the program until it first waits. */
  private start(session: IsolateSession): StepState {
    const context = prepareContext({
      calledAt: new Date().toISOString(),
      requestId: this.settings.requestId,
      workspaceUid: "",
      connectionId: "",
      toolUid: "",
      toolName: "run_code",
      config: {},
    });
    if (!context.ok) throw new Error(context.message);
    this.session = session;
    session.begin(context.json, context.calledAtMs);
    session.program = { call: (name, args) => this.onCall(session, name, args), line: (line) => this.onLine(session, line) };
    const vm = session.vm;
    const held = <T extends QuickJSHandle | undefined>(handle: T): T => {
      if (handle) this.handles.push(handle);
      return handle;
    };
    const maxLine = held(vm.newNumber(CONSOLE_LINE_MAX_CHARS));
    const factory = held(session.evaluateTrusted(CODE_MODE_RUNTIME_SOURCE, "rayrun-code-mode.js"));
    const { call, line } = session.programFunctions;
    const entries = held(factory && session.callFunction(factory, [call, line, maxLine]));
    if (!entries) return "fault";
    // Elements of the runtime's array literal, read before any program code exists.
    const start = held(vm.getProp(entries, 0));
    this.toolError = held(vm.getProp(entries, 1));
    session.evaluateBundle(this.settings.script);
    if (session.fault) return "fault";
    // Not `vm.global`: that handle is cached across runs, and the next run restores the memory under it.
    const program = held(session.evaluateTrusted("globalThis.__rayrun.default", "rayrun-code-mode-program.js"));
    if (!program) return "fault";
    this.promise = held(session.callFunction(start, [program]));
    if (!this.promise) return "fault";
    return session.runUntilIdle(this.promise);
  }

  /** Hands the answers that arrived to the program's promises and drains the job queue. */
  private step(session: IsolateSession): StepState {
    for (const entry of this.answered.splice(0)) {
      this.deliver(session, entry);
      this.deferreds.delete(entry.deferred);
      entry.deferred.dispose();
    }
    if (session.fault || !this.promise) return "fault";
    return session.runUntilIdle(this.promise);
  }

  /** A value resolves the call's promise as JSON; a refusal rejects it with a ToolError the host keeps. */
  private deliver(session: IsolateSession, { deferred, answer, json }: Answered): void {
    const text = session.vm.newString(json);
    try {
      if (answer.ok) return deferred.resolve(text);
      const error = this.toolError && session.callFunction(this.toolError, [text]);
      if (!error) return;
      this.handles.push(error);
      this.refusals.push({ handle: error, error: answer.error });
      deferred.reject(error);
    } finally {
      text.dispose();
    }
  }

  /** How the run ended, once the guest stopped: a bound, a fault, or the program's promise as the engine holds it. */
  private end(session: IsolateSession, state: StepState): ProgramRun {
    const ended = this.settings.ended.signal;
    const limits = this.settings.limits;
    if (this.runFault) return this.failed(this.runFault);
    if (ended.aborted && ended.reason !== "done") return this.failed(endedError(ended, limits));
    if (state === "pending" && !session.fault) {
      session.fail("unresolved_promise", "the program's promise was still pending when no work was left");
    }
    if (state !== "settled" || session.fault || !this.promise) return this.failed(isolateError(session.fault, limits));
    const vm = session.vm;
    const settled = vm.getPromiseState(this.promise);
    if (settled.type === "pending") return this.failed(isolateError(undefined, limits));
    if (settled.type === "rejected") {
      const thrown = settled.error;
      try {
        const refusal = this.refusals.find(({ handle }) => vm.sameValue(handle, thrown));
        if (refusal) return this.failed(refusal.error);
        const read = session.readThrown(thrown, THROWN_MESSAGE_MAX_CHARS + 1);
        if (!read) return this.failed(isolateError(session.fault ?? { code: "memory_exceeded", message: "" }, limits));
        return this.failed(thrownError(read, limits));
      } finally {
        thrown.dispose();
      }
    }
    const value = settled.value;
    try {
      if (vm.typeof(value) === "undefined") return { ok: true, value: null, logs: this.logs };
      this.reading = true;
      let copied: { json: unknown } | undefined;
      try {
        copied = session.copyJson(value, limits.resultBytes + RESULT_SLACK_BYTES, "the program's result");
      } finally {
        this.reading = false;
      }
      if (this.runFault) return this.failed(this.runFault);
      if (!copied) return this.failed(isolateError(session.fault, limits));
      if (session.outputBytes > limits.resultBytes) {
        return this.failed(isolateError({ code: "output_too_large", message: "" }, limits, session.outputBytes));
      }
      return { ok: true, value: copied.json, logs: this.logs };
    } finally {
      if (!settled.notAPromise) value.dispose();
    }
  }

  private nextAnswerOrEnd(): Promise<void> {
    const signal = this.settings.ended.signal;
    return new Promise<void>((resolve) => {
      const done = () => {
        this.wake = undefined;
        signal.removeEventListener("abort", done);
        resolve();
      };
      this.wake = done;
      signal.addEventListener("abort", done, { once: true });
    });
  }

  /** `tools.<name>(argsJson)` from the guest: counts the call, queues it, and returns its promise. */
  private onCall(session: IsolateSession, nameHandle: QuickJSHandle, argsHandle: QuickJSHandle): QuickJSHandle {
    const vm = session.vm;
    const limits = this.settings.limits;
    if (this.settings.ended.signal.aborted || this.runFault) return this.stopGuest(session);
    if (this.reading) {
      const name = readBoundedString(session, nameHandle, NAME_MAX_CHARS) ?? "(a long name)";
      return this.stopGuest(session, {
        code: "exception",
        message: `The program's result called tools.${echoed(name)} while it was read; tools end when the program returns`,
      });
    }
    if (this.calls >= limits.toolCalls) {
      return this.stopGuest(session, {
        code: "too_many_tool_calls",
        message: `The program made more than ${limits.toolCalls} tool calls; the run was stopped`,
        details: { limit: limits.toolCalls },
      });
    }
    const index = this.calls++;
    const deferred = vm.newPromise();
    this.deferreds.add(deferred);
    const settleNow = (error: CodeModeError) => this.answered.push(answered(deferred, { ok: false, error }));
    const name = readBoundedString(session, nameHandle, NAME_MAX_CHARS);
    const argsJson = readBoundedString(session, argsHandle, limits.argumentsBytes);
    if (name === undefined) {
      settleNow({ code: "unknown_tool", message: "Unknown tool: (a name over 256 characters)" });
    } else if (argsJson === undefined || utf8Length(argsJson) > limits.argumentsBytes) {
      settleNow({
        code: "invalid_arguments",
        message: `The arguments are larger than ${limits.argumentsBytes} bytes as JSON`,
        details: { tool: name, limit: limits.argumentsBytes },
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

  /** Makes the guest stop at its next poll, with `fault` as the run's error if given. */
  private stopGuest(session: IsolateSession, fault?: CodeModeError): QuickJSHandle {
    this.runFault ??= fault;
    session.fail("exception", "the run was stopped");
    return session.vm.undefined;
  }

  /** Starts queued calls while fewer than the in-flight bound run; a finished call starts the next one. */
  private pump(): void {
    const { host, limits, ended } = this.settings;
    while (this.startsCalls && this.inFlight < limits.callsInFlight && this.queued.length > 0 && !ended.signal.aborted) {
      const call = this.queued.shift()!;
      this.inFlight++;
      void host
        .callTool({ index: call.index, name: call.name, arguments: call.arguments }, ended.signal)
        .catch((error: unknown): ToolAnswer => {
          console.error("code mode inner call failed", error);
          return { ok: false, error: { code: "exception", message: "The tool call failed inside the gateway" } };
        })
        .then((answer) => {
          this.inFlight--;
          if (ended.signal.aborted) return;
          this.answered.push(answered(call.deferred, answer));
          this.pump();
          this.wake?.();
        });
    }
  }

  /** `console.log` from the guest: one line, already cut to CONSOLE_LINE_MAX_CHARS. */
  private onLine(session: IsolateSession, lineHandle: QuickJSHandle): QuickJSHandle {
    const limits = this.settings.limits;
    if (this.reading) {
      return this.stopGuest(session, {
        code: "exception",
        message: "The program's result wrote to the console while it was read; the console ends when the program returns",
      });
    }
    if (this.logs.length >= limits.logLines) {
      session.fail("log_limit", `more than ${limits.logLines} console lines`);
      return session.vm.undefined;
    }
    const line = readBoundedString(session, lineHandle, CONSOLE_LINE_MAX_CHARS + 1);
    if (line === undefined) session.fail("log_limit", `a console line longer than ${CONSOLE_LINE_MAX_CHARS} characters`);
    else this.logs.push(line);
    return session.vm.undefined;
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
    } finally {
      this.deferreds.clear();
      this.handles.length = 0;
    }
  }

  /**
   * The program's work since `pollsBefore` in compute ms (CODE_MODE_COST), counted rather than timed: on a deployed
   * Worker the clock does not move while code runs, and on a loaded machine time would bill the tenant for other
   * processes. A run stopped by its time bound (the deadline can fire before the budget on a loaded machine) is
   * charged its whole work budget.
   */
  private workCost(session: IsolateSession, pollsBefore: number): number {
    const budget = session.fault?.code === "timeout" ? session.limits.workBudgetPolls : 0;
    return (Math.max(session.workSpentPolls, budget) - pollsBefore) * CODE_MODE_COST.msPerPoll;
  }

  /** The first step's work, and parsing and evaluating the whole bundle, which polls do not show. */
  private firstStepCost(): number {
    const work = this.session ? this.workCost(this.session, 0) : 0;
    return work + (utf8Length(this.settings.script) / 1024) * CODE_MODE_COST.evaluateMsPerKiB;
  }

  private failed(error: CodeModeError): ProgramRun {
    return { ok: false, error, logs: this.logs, ran: true };
  }
}

/** A run refused before its program's first step (its workspace is over its share, or it ended meanwhile). */
const notStarted = (error: CodeModeError): ProgramRun => ({ ok: false, error, logs: [], ran: false });

const echoed = (name: string) => (name.length <= ECHOED_NAME_CHARS ? name : `${name.slice(0, ECHOED_NAME_CHARS)}…`);

/** A guest string of at most `maxChars` UTF-16 units, read without copying a longer one; undefined otherwise. */
function readBoundedString(session: IsolateSession, handle: QuickJSHandle, maxChars: number): string | undefined {
  const vm = session.vm;
  if (vm.typeof(handle) !== "string") return undefined;
  const length = vm.getProp(handle, "length");
  const chars = vm.getNumber(length);
  length.dispose();
  return chars <= maxChars ? vm.getString(handle) : undefined;
}
