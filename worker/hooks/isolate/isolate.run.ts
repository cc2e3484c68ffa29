import {
  validateAfterReturn,
  validateBeforeReturn,
  type AfterReturn,
  type BeforeReturn,
  type JsonObject,
  type JsonValue,
} from "../../../schema/hooks/contract.ts";
import { prepareContext } from "./isolate.context.ts";
import { resolveLimits, type LimitOverrides } from "./isolate.limits.ts";
import { IsolateSession, openSession } from "./isolate.session.ts";
import { containsLoneSurrogate } from "./isolate.text.ts";
import type { HookLog, IsolateError, IsolateUsage, StageContextInput, StageName } from "./isolate.types.ts";

/** `after` also gets the arguments sent upstream and the result; see worker/hooks/stage-call.ts. */
export type StageInput = { arguments: JsonObject; upstreamArguments?: JsonObject; result?: JsonValue };

/**
 * Whose compute a stage is charged to (a Code Mode run's workspace allowance). `runStage` asks it right before the
 * stage runs and charges it right after, in the same synchronous turn (QuickJS runs a stage to its end without
 * yielding), so stages started together cannot all pass one check before any of them is charged.
 */
export interface StageMeter {
  /** Null while a stage may run, else why not and in how many whole seconds one may. */
  refusal(): StageRefusal | null;
  charge(usage: IsolateUsage): void;
}

export interface StageRefusal {
  message: string;
  retryAfterSeconds: number;
}

export interface StageRequest {
  /** A "rayrun bundle v1": classic script leaving the adapter at `globalThis.__rayrun.default`. */
  bundle: string;
  stage: StageName;
  input: StageInput;
  context: StageContextInput;
  /** Per-run overrides; they can only lower the defaults. */
  limits?: LimitOverrides;
  meter?: StageMeter;
}

export type StageOutcome = "continue" | "reject" | "require_approval" | "return" | "fail" | "error";

export interface StageRun {
  outcome: StageOutcome;
  /** The isolate could not be had (it failed to start, or this isolate's wasm budget had no room): nothing ran. */
  unavailable?: true;
  /** The request's meter had nothing left for it: nothing ran. */
  busy?: StageRefusal;
  value?: BeforeReturn | AfterReturn;
  error?: IsolateError;
  logs: HookLog[];
  usage: IsolateUsage;
}

const NO_USAGE: IsolateUsage = { polls: 0, wasmBytes: 0, durationMs: 0, outputBytes: 0 };

/** A stage the adapter does not define passes the call (before) or the result (after) through unchanged. */
function passThrough(stage: StageName, input: StageInput): BeforeReturn | AfterReturn {
  return stage === "before" ? { action: "continue", arguments: input.arguments } : { action: "return", result: input.result ?? null };
}

function validated(stage: StageName, json: unknown): { value: BeforeReturn | AfterReturn } | IsolateError {
  if (containsLoneSurrogate(json)) {
    return { code: "invalid_return", message: "the returned value contains a lone UTF-16 surrogate" };
  }
  const check = stage === "before" ? validateBeforeReturn(json) : validateAfterReturn(json);
  return check.ok ? { value: check.value } : { code: "invalid_return", message: check.message };
}

/**
 * Everything inside one session; returns the stage's validated value or records a fault. A run at the default
 * limits starts from the bundle's image (see `beginWithBundle`); one with lowered limits evaluates the bundle itself,
 * so a limit a test lowers is reached exactly where it would be without images.
 */
function runInSession(session: IsolateSession, request: StageRequest, contextJson: string, calledAtMs: number) {
  if (request.limits === undefined) {
    session.beginWithBundle(request.bundle, contextJson, calledAtMs);
  } else {
    session.begin(contextJson, calledAtMs);
    session.evaluateBundle(request.bundle);
  }
  const stageName = session.newString(request.stage);
  try {
    const promise = session.invoke(stageName, JSON.stringify(request.input));
    if (!promise) return undefined;
    if (session.vm.typeof(promise) === "string") {
      promise.dispose();
      return passThrough(request.stage, request.input);
    }
    const settled = session.settle(promise);
    promise.dispose();
    if (!settled) return undefined;
    const copied = session.copyJson(settled, session.limits.outputBytes, "the returned value");
    settled.dispose();
    if (!copied) return undefined;
    const checked = validated(request.stage, copied.json);
    if ("code" in checked) {
      session.fail(checked.code, checked.message);
      return undefined;
    }
    return checked.value;
  } finally {
    stageName.dispose();
  }
}

/**
 * Runs one stage of a compiled hook in a fresh QuickJS runtime and context.
 * Never throws: every failure is `outcome: "error"` with a stable code, and
 * the caller must treat it as failing the call closed.
 */
export async function runStage(request: StageRequest): Promise<StageRun> {
  const context = prepareContext(request.context);
  if (!context.ok) return { outcome: "error", error: { code: "exception", message: context.message }, logs: [], usage: NO_USAGE };
  const session = await openSession(resolveLimits(request.limits));
  if ("unavailable" in session) {
    return { outcome: "error", error: { code: "exception", message: session.message }, logs: [], usage: NO_USAGE, unavailable: true };
  }
  const busy = request.meter?.refusal();
  if (busy) {
    session.close();
    return { outcome: "error", error: { code: "exception", message: busy.message }, logs: [], usage: NO_USAGE, busy };
  }
  let value: BeforeReturn | AfterReturn | undefined;
  try {
    value = runInSession(session, request, context.json, context.calledAtMs);
  } catch (error) {
    session.fail("exception", `isolate fault: ${String(error)}`);
  }
  session.readLogs();
  const usage = session.close();
  request.meter?.charge(usage);
  const fault = session.fault;
  if (fault || !value) {
    return { outcome: "error", error: fault ?? { code: "exception", message: "the stage produced no value" }, logs: session.logs, usage };
  }
  return { outcome: value.action, value, logs: session.logs, usage };
}
