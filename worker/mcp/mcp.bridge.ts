import { createRequestStateCodec, inputRequired, type RequestStateCodec, type ServerContext } from "@modelcontextprotocol/server";
import type { ClientCapabilities, Progress, Result, ServerRequest } from "@modelcontextprotocol/sdk/types.js";
import { canonicalJson, sha256Hex } from "../lib/crypto.ts";
import type { UpstreamCallOptions } from "../services/upstream.call.ts";
import type { Caller, GatewayCore } from "./mcp.caller.ts";
import { relayedCapabilities } from "./mcp.capabilities.ts";
import { isRecord } from "./mcp.errors.ts";
import { ERROR_META_KEY } from "./mcp.results.ts";

/**
 * A 2026-07-28 client in front of a 2025-era upstream: the upstream asks for
 * input mid-request (`elicitation/create`, `sampling/createMessage`,
 * `roots/list`) as a server-to-client request, but a 2026-07-28 client takes
 * input only through an input-required result and a retry. The same holds for
 * each of the three requests that revision lets answer input-required
 * (`tools/call`, `prompts/get`, `resources/read`); "call" below is any of them.
 * The gateway answers the client's request with the upstream's request as an
 * `inputRequests` entry and a `requestState` it signs, and keeps the upstream
 * call (and its pending request) running in the isolate that made it. The
 * retry, wherever it lands, hands its `inputResponses` to that isolate
 * through the call's own CallRelayDO (named by a random token inside the
 * signed state) and waits there for what the call does next: another input
 * request, or its result. Progress the upstream reports between rounds takes
 * the same way: the retry waiting for the call's next step passes each one
 * to its client under the retry's own `progressToken`, so a client sees the
 * call's progress in every round, not only the first.
 *
 * How long: the isolate keeps the call alive with `waitUntil`, which Workers
 * honours for 30 s after the response; each round's pending request waits for
 * its answer at most INPUT_HOLD_MS, and a retry waits for the call's next step
 * at most as long. Past that the upstream's request is refused and the retry
 * answered `-32602` `input_expired`: call again. The whole call ends at most
 * CONTINUATION_MS after its first round's answer, within Workers' 30 s.
 */

export const INPUT_HOLD_MS = 25_000;

/**
 * How long a call goes on after the POST that answered its first round: Workers keeps `waitUntil` work 30 s after
 * the response that started it and then cancels it, and a call cut there would write no outcome and no log row. So
 * at this point the call is stopped as a cancelled one (its upstream request too), with time left to record it.
 */
export const CONTINUATION_MS = 28_000;

/** How long past a call's end its retry still waits for the outcome: the stop, the upstream's cancel and the relay. */
const OUTCOME_MARGIN_MS = 3_000;

/** The signed state of a call waiting for input: which call, whose, and which of its input requests. */
interface BridgeState {
  /** The call's token: the CallRelayDO that carries its input and its outcome. */
  t: string;
  /** The workspace and the credential (API key or OAuth grant) that made the call: only they may answer it. */
  w: string;
  k: string;
  /**
   * The method, its target (tool or prompt name, resource URI) and a hash of the arguments the call was made with
   * (a prompt's; none for a resource): the retry must repeat them exactly.
   */
  m: BridgedMethod;
  n: string;
  a: string;
  /** The `inputRequests` key the call waits on. */
  r: string;
  /** That input request itself, asked again when a retry carries no answer for it. */
  q: InputRequest;
  /** When the call ends at the latest (epoch ms; CONTINUATION_MS after its first round): a retry waits until then. */
  d?: number;
}

/** An upstream's request as an `inputRequests` entry shows it. */
type InputRequest = { method: string; params?: Record<string, unknown> };

/** The requests a 2026-07-28 server may answer input-required (its spec's "supported requests"). */
export type BridgedMethod = "tools/call" | "prompts/get" | "resources/read";

/** One bridged request as its signed state binds it: the method, its target and its arguments. */
export interface BridgedRequest {
  method: BridgedMethod;
  /** The tool or prompt name, or the resource URI. */
  name: string;
  /** A tool's or prompt's arguments; a resource read's are none (`{}`). */
  arguments: Record<string, unknown>;
}

/** What the call does next, carried from its isolate to the retry waiting for it (progress comes before the next step). */
type Step =
  | { kind: "progress"; progress: Progress }
  | { kind: "input"; key: string; request: InputRequest }
  | { kind: "result"; result: Result }
  | { kind: "error"; code: number; message: string; data?: Record<string, unknown> };

const codecs = new Map<string, Promise<RequestStateCodec<BridgeState>>>();

/** The requestState codec: HMAC-SHA256 under a key derived from SECRETS_KEY for this purpose only. */
function codec(secretsKey: string): Promise<RequestStateCodec<BridgeState>> {
  let made = codecs.get(secretsKey);
  if (!made) {
    made = crypto.subtle
      .digest("SHA-256", new TextEncoder().encode(`rayrun-mcp-request-state:${secretsKey}`))
      .then((key) => createRequestStateCodec<BridgeState>({ key: new Uint8Array(key), ttlSeconds: Math.ceil((2 * INPUT_HOLD_MS) / 1000) }));
    codecs.set(secretsKey, made);
  }
  return made;
}

/** The codec's verify, for the SDK server's `requestState.verify` hook: a state it did not sign never reaches a handler. */
export const verifyRequestState = (secretsKey: string) => async (state: string, ctx: ServerContext) =>
  (await codec(secretsKey)).verify(state, ctx);

/** A JSON-RPC error the SDK server sends with this exact code, message and data. */
class BridgeError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly data?: Record<string, unknown>,
  ) {
    super(message);
  }
}

const expired = () =>
  new BridgeError(-32602, "The call waiting for this input is gone (it waits 25 s for each answer); call the tool again", {
    code: "input_expired",
  });

const argumentsHash = (args: Record<string, unknown>) => sha256Hex(canonicalJson(args));

/** The relay of one call's messages, by token, through the call's own CallRelayDO. */
const relayOf = (env: Env, token: string) => env.CALL_RELAY.getByName(`mrtr:${token}`);

/**
 * Where the call's n-th step goes: the input request keyed `r{n}`, or, after n - 1 of them, its outcome, and the
 * progress reported meanwhile. The retry answering `r{n}` waits on step n + 1. One channel per step, because an
 * upstream may ask for several inputs in one round: those after the first wait there, in order, while the client
 * answers the one before (on one channel, a retry's listener would be handed every waiting step and read only the first).
 */
const stepChannel = (n: number) => `out:${n}`;

/**
 * The lines the relay sends on `listen(listenAs)`, each passed to `take` until it returns true (the one awaited
 * came); false when the stream ends, or nothing `take` awaited came within `waitMs`.
 */
async function readMessages(
  env: Env,
  callToken: string,
  listenAs: string,
  waitMs: number,
  take: (message: unknown) => boolean,
): Promise<boolean> {
  const stream = await relayOf(env, callToken).listen(listenAs, []);
  const reader = stream.getReader();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<null>((resolve) => (timer = setTimeout(() => resolve(null), waitMs)));
  try {
    const decoder = new TextDecoder();
    let buffered = "";
    for (;;) {
      const read = await Promise.race([reader.read(), timeout]);
      if (read === null || read.done) return false;
      buffered += decoder.decode(read.value, { stream: true });
      let newline: number;
      while ((newline = buffered.indexOf("\n")) >= 0) {
        const line = buffered.slice(0, newline);
        buffered = buffered.slice(newline + 1);
        if (take(JSON.parse(line) as unknown)) return true;
      }
    }
  } finally {
    clearTimeout(timer);
    void reader.cancel().catch(() => {});
  }
}

/**
 * The answer the requester sends for input request `key` of the call (or task) waiting under `token`, wherever it
 * lands; null when none comes within INPUT_HOLD_MS. It listens at once: call it before the request is shown.
 */
export async function awaitInput(env: Env, token: string, key: string): Promise<Record<string, unknown> | null> {
  let message: unknown = null;
  await readMessages(env, token, `in:${key}`, INPUT_HOLD_MS, (line) => ((message = line), true));
  return isRecord(message) && isRecord(message.response) ? message.response : null;
}

/** Hands the requester's answer for input request `key` to the call (or task) waiting under `token`, in its isolate. */
export const deliverInput = (env: Env, token: string, key: string, response: Record<string, unknown>) =>
  relayOf(env, token).deliver({ callToken: `in:${key}` }, { response });

/**
 * The first round of a call whose client declared capabilities to bridge. `run` starts the call with the
 * relay and the progress callback it is given; the answer is its result, or, when the upstream asks for input
 * first, an input-required result, the call going on in this isolate. Progress goes to `onProgress` while the
 * first round is answering, and to the retry waiting for the call's next step after that.
 */
export async function bridgedCall(
  core: GatewayCore,
  call: BridgedRequest & { capabilities: ClientCapabilities },
  onProgress: ((progress: Progress) => void) | undefined,
  run: (relay: NonNullable<UpstreamCallOptions["relay"]>, onProgress: (progress: Progress) => void, signal: AbortSignal) => Promise<Result>,
): Promise<Result> {
  const { env } = core;
  const continuation = new AbortController();
  const token = crypto.randomUUID();
  const relay = env.CALL_RELAY.getByName(`mrtr:${token}`);
  let rounds = 0;
  let firstInput: ((step: Extract<Step, { kind: "input" }>) => void) | undefined;
  const askedFirst = new Promise<Extract<Step, { kind: "input" }>>((resolve) => (firstInput = resolve));
  let shown = false;
  const forward = async (request: ServerRequest): Promise<Result> => {
    const round = ++rounds;
    const key = `r${round}`;
    const step: Extract<Step, { kind: "input" }> = {
      kind: "input",
      key,
      request: { method: request.method, ...(request.params ? { params: request.params as Record<string, unknown> } : {}) },
    };
    const answer = awaitInput(env, token, key);
    // Set at once: the inputs of one round arrive together, and only the first is this POST's answer.
    if (!shown) {
      shown = true;
      firstInput?.(step);
    } else await relay.deliver({ callToken: stepChannel(round) }, step);
    const response = await answer;
    if (!response) throw new Error("The client did not answer in time");
    return response as Result;
  };
  const progress = (update: Progress) => {
    if (!shown) onProgress?.(update);
    else void relay.deliver({ callToken: stepChannel(rounds + 1) }, { kind: "progress", progress: update } satisfies Step).catch(() => {});
  };
  const running = run({ capabilities: call.capabilities, forward, log: () => {} }, progress, continuation.signal);
  const first = await Promise.race([running.then((result) => ({ kind: "result" as const, result })), askedFirst]);
  if (first.kind === "result") return first.result;
  // The call goes on in this isolate; its outcome goes to the retry waiting for it (the one answering its last input).
  const endsBy = Date.now() + CONTINUATION_MS;
  const stop = setTimeout(
    () => continuation.abort(new Error(`the call went on for ${CONTINUATION_MS / 1000} s after its first round was answered`)),
    CONTINUATION_MS,
  );
  core.waitUntil(
    running
      .then(
        (result) => relay.deliver({ callToken: stepChannel(rounds + 1) }, { kind: "result", result } satisfies Step),
        (error: unknown) => relay.deliver({ callToken: stepChannel(rounds + 1) }, errorStep(error)),
      )
      .finally(() => clearTimeout(stop)),
  );
  return inputRequiredFor(core.env, core.caller, call, token, first, endsBy);
}

/**
 * A `prompts/get` or `resources/read` of a 2026-07-28 client, with the input rounds of a call (tools/call has its
 * own, for approvals and progress): a retry carrying a state resumes the request it was issued for; a client that
 * declared input capabilities gets the upstream's requests as rounds; any other runs with no relay, so the upstream's
 * request is refused at once. `run` is the whole request, given the relay its upstream request takes.
 */
export function withInputRounds(
  core: GatewayCore,
  request: BridgedRequest,
  asked: { capabilities: ClientCapabilities; state: BridgeState | undefined; inputResponses: Record<string, unknown> | undefined },
  run: (relay: UpstreamCallOptions["relay"], signal?: AbortSignal) => Promise<Result>,
): Promise<Result> {
  // An approval's state names a tools/call, so answerFor refuses it here as another request's.
  if (asked.state !== undefined) return resumedCall(core, request, asked.state, asked.inputResponses, undefined);
  const capabilities = relayedCapabilities(asked.capabilities);
  if (!Object.keys(capabilities).length) return run(undefined);
  return bridgedCall(core, { ...request, capabilities }, undefined, (relay, _progress, signal) => run(relay, signal));
}

/**
 * The answer a retry carries for the input request its state waits on, once the state is proven to be this call's;
 * null when the retry carries none.
 */
async function answerFor(
  caller: Caller,
  call: BridgedRequest,
  state: BridgeState,
  inputResponses: Record<string, unknown> | undefined,
): Promise<Record<string, unknown> | null> {
  const sameCall =
    state.w === caller.workspaceId &&
    state.k === caller.credential &&
    state.m === call.method &&
    state.n === call.name &&
    state.a === (await argumentsHash(call.arguments));
  if (!sameCall) {
    throw new BridgeError(-32602, "Invalid params: requestState belongs to another call; repeat the call it was issued for", {
      code: "request_state_mismatch",
    });
  }
  const response = inputResponses?.[state.r];
  return isRecord(response) ? response : null;
}

/**
 * A retry of the right call without an answer for the request it waits on is asked that request again, under a
 * fresh state for the same wait, as the spec has a server do when input is still missing; the call keeps waiting
 * for the answer (within INPUT_HOLD_MS of when it was first asked).
 */
const askedAgain = (env: Env, caller: Caller, call: BridgedRequest, state: BridgeState) =>
  inputRequiredFor(env, caller, call, state.t, { kind: "input", key: state.r, request: state.q }, state.d);

const APPROVAL_TOKEN_PREFIX = "approval:";
const APPROVAL_KEY = "approval";

/** Whether a state is an in-band approval's (no call waits for it: the retry runs the call again). */
export const isApprovalState = (state: BridgeState) => state.t.startsWith(APPROVAL_TOKEN_PREFIX);

/**
 * An approval asked in-band. A call held for a human approval answers a client that declared URL-mode
 * elicitation with an input-required result whose one request opens the approval's page; the client shows
 * it, and once the user is done retries. The retry runs the call again, so the approval binds exactly what
 * it always binds (the verified revision and the transformed call, claimed once); while it is still
 * pending, the answer is the same request again. Clients without URL-mode elicitation, and a user who
 * declines, get the `approval_required` result itself.
 */
export async function withApprovalInBand(
  core: GatewayCore,
  call: BridgedRequest & { capabilities: ClientCapabilities },
  result: Result,
): Promise<Result> {
  if (!call.capabilities.elicitation?.url) return result;
  const held = approvalHeld(result);
  if (!held) return result;
  return inputRequiredFor(core.env, core.caller, call, `${APPROVAL_TOKEN_PREFIX}${held.approvalId}`, {
    kind: "input",
    key: APPROVAL_KEY,
    request: { method: "elicitation/create", params: { mode: "url", message: held.message, url: held.approveAt } },
  });
}

/** A retry of an in-band approval: the call runs again (and is asked again while pending), unless the user declined. */
export async function resumedApproval(
  core: GatewayCore,
  call: BridgedRequest & { capabilities: ClientCapabilities },
  state: BridgeState,
  inputResponses: Record<string, unknown> | undefined,
  run: () => Promise<Result>,
): Promise<Result> {
  const answer = await answerFor(core.caller, call, state, inputResponses);
  if (!answer) return askedAgain(core.env, core.caller, call, state);
  const result = await run();
  return answer.action === "accept" ? withApprovalInBand(core, call, result) : result;
}

/** The approval a call result waits for, when it is an `approval_required` refusal. */
function approvalHeld(result: Result): { approvalId: string; approveAt: string; message: string } | null {
  const error = isRecord(result._meta) ? result._meta[ERROR_META_KEY] : undefined;
  if (!isRecord(error) || error.code !== "approval_required" || !isRecord(error.details)) return null;
  const { approvalId, approveAt } = error.details;
  if (typeof approvalId !== "string" || typeof approveAt !== "string" || typeof error.message !== "string") return null;
  return { approvalId, approveAt, message: error.message };
}

/**
 * A retry carrying the signed state: its answer reaches the waiting call, and the call's next step is the
 * answer. The call's progress meanwhile goes to `onProgress`, under the retry's own token.
 */
export async function resumedCall(
  core: GatewayCore,
  call: BridgedRequest,
  state: BridgeState,
  inputResponses: Record<string, unknown> | undefined,
  onProgress: ((progress: Progress) => void) | undefined,
): Promise<Result> {
  const response = await answerFor(core.caller, call, state, inputResponses);
  if (!response) return askedAgain(core.env, core.caller, call, state);
  const answering = /^r(\d+)$/.exec(state.r);
  if (!answering) throw expired();
  let step: Exclude<Step, { kind: "progress" }> | undefined;
  // The call's next step comes by the time it ends, or (a state without that time) within INPUT_HOLD_MS.
  const waitMs = state.d === undefined ? INPUT_HOLD_MS : Math.max(0, state.d - Date.now()) + OUTCOME_MARGIN_MS;
  const next = readMessages(core.env, state.t, stepChannel(Number(answering[1]) + 1), waitMs, (message) => {
    const line = message as Step;
    if (line.kind !== "progress") return Boolean((step = line));
    onProgress?.(line.progress);
    return false;
  });
  await deliverInput(core.env, state.t, state.r, response);
  await next;
  if (!step) throw expired();
  if (step.kind === "result") return step.result;
  if (step.kind === "error") throw new BridgeError(step.code, step.message, step.data);
  return inputRequiredFor(core.env, core.caller, call, state.t, step, state.d);
}

async function inputRequiredFor(
  env: Env,
  caller: Caller,
  call: BridgedRequest,
  token: string,
  step: Extract<Step, { kind: "input" }>,
  endsBy?: number,
): Promise<Result> {
  const state: BridgeState = {
    t: token,
    w: caller.workspaceId,
    k: caller.credential,
    m: call.method,
    n: call.name,
    a: await argumentsHash(call.arguments),
    r: step.key,
    q: step.request,
    ...(endsBy !== undefined && { d: endsBy }),
  };
  return inputRequired({
    inputRequests: { [step.key]: step.request } as never,
    requestState: await (await codec(env.SECRETS_KEY)).mint(state),
  }) as Result;
}

function errorStep(error: unknown): Step {
  if (error instanceof Error && "code" in error && typeof error.code === "number") {
    const data = "data" in error && isRecord(error.data) ? error.data : undefined;
    return { kind: "error", code: error.code, message: error.message, ...(data ? { data } : {}) };
  }
  console.error("bridged call failed", error);
  return { kind: "error", code: -32603, message: "Internal error" };
}

export type { BridgeState };
