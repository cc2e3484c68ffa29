import type { LimitOverrides } from "../hooks/isolate/isolate.limits.ts";
import type { StageMeter } from "../hooks/isolate/index.ts";
import { utf8Length } from "../hooks/isolate/isolate.text.ts";
import { ComputeAllowance } from "./codemode.allowance.ts";
import type { CodeModeError } from "./codemode.errors.ts";
import { busyError, endedError } from "./codemode.failures.ts";
import { CODE_MODE_COST, CODE_MODE_LIMITS, CODE_MODE_SHARE, type CodeModeLimits } from "./codemode.limits.ts";
import { compiledProgram } from "./codemode.programs.ts";
import { Run, type ComputeTurn, type ProgramHost, type ProgramRun } from "./codemode.run.ts";
import { FairSlots } from "./codemode.turns.ts";

export interface ProgramRequest {
  /** The program, as `run_code` got it: compiled here (or taken from the compile cache) in the run's first turn. */
  source: string;
  host: ProgramHost;
  requestId: string;
  /** The caller's workspace: its runs share the isolate's compute and sandboxes with other workspaces' fairly. */
  workspaceId: string;
  /** Per-run overrides for tests: they can only lower a bound. */
  limits?: Partial<CodeModeLimits>;
  isolateLimits?: LimitOverrides;
  /** The client went away or cancelled: the run ends as `cancelled`. */
  signal?: AbortSignal;
}

/**
 * The isolate's compute lane: a compile, a trial or a step of a run holds it,
 * a run waiting on tools does not. Steps are synchronous, so the lane is only
 * ever waited for behind a compile (esbuild is asynchronous) or a sandbox
 * being created; who gets it next is decided fairly between workspaces.
 */
const LANE = new FairSlots(1, 1, 5);
/**
 * Private instances (16 MiB each, lib/wasm-budget.ts) held by runs waiting on tools; a run
 * waiting for one is answered at once if it needs no tool (see `Run.trial`).
 */
const SANDBOXES = new FairSlots(CODE_MODE_SHARE.parkedRuns, CODE_MODE_SHARE.parkedRunsPerWorkspace, 20);
const ALLOWANCE = new ComputeAllowance(CODE_MODE_SHARE.burstMs, CODE_MODE_SHARE.refillMsPerSecond);
const runsInProgress = new Map<string, number>();

/** The message of a run or an inner call refused because its workspace spent its allowance. */
export const busyMessage = (wait: number) =>
  `This workspace used its share of Code Mode's compute on this server; run the program again in ${wait} s`;

/** 0 when the workspace may compute now, else whole seconds until its allowance is above zero again. */
export const computeWait = (workspaceId: string): number => ALLOWANCE.retryAfterSeconds(workspaceId);

/**
 * The hook stages of a run's inner calls, live and shadow, charged to the workspace's allowance as the program's own
 * work is: each stage may spend a whole work budget, so a run's calls (50, two stages each, and a shadow's two) would
 * otherwise spend a hundred budgets or more of the isolate's thread on one allowance of one and a half. Checked and
 * charged stage by stage (isolate.run.ts), so calls in flight together cannot all pass one check first; a stage the
 * allowance has no room for does not run, and its call is refused `code_mode_busy`.
 */
export const allowanceMeter = (workspaceId: string): StageMeter => ({
  refusal: () => {
    const wait = computeWait(workspaceId);
    return wait > 0 ? { message: busyMessage(wait), retryAfterSeconds: wait } : null;
  },
  charge: (usage) => ALLOWANCE.charge(workspaceId, Math.max(usage.polls * CODE_MODE_COST.msPerPoll, usage.durationMs)),
});

/**
 * Runs a program, sharing this Worker isolate fairly (docs/code-mode.md,
 * "Sharing the isolate"):
 * 1. At most CODE_MODE_SHARE.runsPerWorkspace runs of a workspace at once, and
 *    only while its compute allowance is above zero; else `code_mode_busy`.
 * 2. Compiled in a turn of the compute lane (or taken from the cache).
 * 3. Run in a sandbox of its own when one is free for its workspace; else its
 *    first step is tried on the shared instance, which answers any program that
 *    needs no tool at once, and one that does waits, fairly, for a sandbox.
 * Every turn is charged to the workspace's allowance. Never throws: every
 * failure is an error with a stable code.
 */
export async function runProgram(request: ProgramRequest): Promise<ProgramRun> {
  const limits = boundedLimits(request.limits);
  const workspaceId = request.workspaceId;
  const running = runsInProgress.get(workspaceId) ?? 0;
  if (running >= CODE_MODE_SHARE.runsPerWorkspace) {
    const message = `This workspace already has ${CODE_MODE_SHARE.runsPerWorkspace} programs running here; run it again when one has finished`;
    return notRun(busyError(message, 1, { limit: CODE_MODE_SHARE.runsPerWorkspace }));
  }
  runsInProgress.set(workspaceId, running + 1);
  const ended = new AbortController();
  const wall = setTimeout(() => ended.abort("wall"), limits.wallTimeMs);
  const onClientAbort = () => ended.abort("cancelled");
  request.signal?.addEventListener("abort", onClientAbort, { once: true });
  try {
    const turn = computeTurns(workspaceId, ended.signal, limits);
    let compiled = false;
    const program = await turn(
      async () => {
        const found = await compiledProgram(workspaceId, request.source);
        compiled = found.compiled;
        return found.program;
      },
      () => (compiled ? CODE_MODE_COST.compileMs + (utf8Length(request.source) / 1024) * CODE_MODE_COST.compileMsPerKiB : 0),
    );
    if (!program.ok) return notRun(program.error);
    if (!program.value.ok) return notRun(program.value.error);
    const settings = {
      script: program.value.script,
      host: request.host,
      requestId: request.requestId,
      limits,
      isolateLimits: request.isolateLimits,
      ended,
      turn,
    };
    let sandbox = SANDBOXES.tryTake(workspaceId);
    if (!sandbox) {
      const answered = await new Run(settings).trial();
      if (answered) return answered;
      sandbox = await SANDBOXES.take(workspaceId, ended.signal);
      if (!sandbox) return notRun(endedError(ended.signal, limits));
    }
    try {
      return await new Run(settings).parked();
    } finally {
      sandbox();
    }
  } finally {
    clearTimeout(wall);
    request.signal?.removeEventListener("abort", onClientAbort);
    if (!ended.signal.aborted) ended.abort("done");
    const left = (runsInProgress.get(workspaceId) ?? 1) - 1;
    if (left > 0) runsInProgress.set(workspaceId, left);
    else runsInProgress.delete(workspaceId);
  }
}

/**
 * A workspace's turns of the compute lane: each is refused while the
 * workspace is over its allowance, waits for the lane (fairly, and not past
 * the run's end), and is charged afterwards what its work cost (`costMs`,
 * counted from the work: CODE_MODE_COST), or the time the turn took if more.
 */
function computeTurns(workspaceId: string, signal: AbortSignal, limits: CodeModeLimits): ComputeTurn {
  return async (work, costMs) => {
    const wait = computeWait(workspaceId);
    if (wait > 0) return { ok: false, error: busyError(busyMessage(wait), wait) };
    const release = await LANE.take(workspaceId, signal);
    if (!release) return { ok: false, error: endedError(signal, limits) };
    const startedAt = Date.now();
    try {
      return { ok: true, value: await work() };
    } finally {
      // The time the turn took, where the clock shows it (it stands still during code on deployed Workers), when that
      // is more than its work counted: work the counts miss still costs the workspace its allowance.
      ALLOWANCE.charge(workspaceId, Math.max(costMs(), Date.now() - startedAt));
      release();
    }
  };
}

function notRun(error: CodeModeError): ProgramRun {
  return { ok: false, error, logs: [], ran: false };
}

function boundedLimits(overrides: Partial<CodeModeLimits> | undefined): CodeModeLimits {
  const limits = { ...CODE_MODE_LIMITS };
  for (const key of Object.keys(limits) as (keyof CodeModeLimits)[]) {
    const value = overrides?.[key];
    if (typeof value === "number" && Number.isFinite(value) && value >= 1) limits[key] = Math.min(limits[key], Math.floor(value));
  }
  return limits;
}
