import type { RawResultCapture } from "./raw-result.ts";
import { UpstreamFailure } from "./upstream.fetch.ts";
import type { ClientCapabilities, LoggingMessageNotification, Progress, Result, ServerRequest } from "@modelcontextprotocol/sdk/types.js";

/** The client capabilities whose requests the gateway relays; an upstream may list some tools only to clients declaring them. */
export const RELAYED_CAPABILITIES = ["sampling", "elicitation", "roots"] as const;
/**
 * What a client may have to declare to see a tool: one of those, or URL-mode elicitation in particular (an upstream
 * lists a tool that sends the user to a URL only to clients that declare `elicitation.url`).
 */
export const TOOL_REQUIREMENTS = [...RELAYED_CAPABILITIES, "elicitation.url"] as const;
export type ToolRequirement = (typeof TOOL_REQUIREMENTS)[number];

const declares = (capabilities: ClientCapabilities | undefined, name: ToolRequirement) =>
  name === "elicitation.url" ? capabilities?.elicitation?.url !== undefined : capabilities?.[name] !== undefined;

/** Whether a client declaring `capabilities` may see and call a tool that needs `required` (null: any client). */
export const declaresAll = (capabilities: ClientCapabilities | undefined, required: readonly ToolRequirement[] | null) =>
  !required || required.every((name) => declares(capabilities, name));

/** The capabilities a client declaring exactly `names` sends (form-mode elicitation is `elicitation: {}`). */
export function declaring(names: readonly ToolRequirement[]): ClientCapabilities {
  const capabilities: ClientCapabilities = {};
  for (const name of names) {
    if (name === "elicitation.url") capabilities.elicitation = { ...capabilities.elicitation, url: {} };
    else if (name === "elicitation") capabilities.elicitation = { ...capabilities.elicitation, form: {} };
    else capabilities[name] = {};
  }
  return capabilities;
}

/**
 * A call may run while the upstream keeps talking: each progress notification,
 * and each server-to-client request the client is answering, counts as life.
 * Silence for this long ends the call with `upstream_timeout`.
 */
export const CALL_IDLE_TIMEOUT_MS = 30_000;
/** No call runs longer than this, however much progress it reports. */
export const MAX_CALL_DURATION_MS = 10 * 60_000;
/**
 * Requests one call's upstream may have waiting on the client at once (sampling, elicitation, roots). An
 * input-required result names as many input requests as its bytes hold, and a 2025-era upstream can send as many
 * server-to-client requests as it likes; each one waiting costs a stream event and, for a 2026-07-28 client, a
 * CallRelayDO listener held for 25 s. Unbounded, 20,000 of them held a gateway isolate for minutes.
 */
export const MAX_PENDING_INPUT_REQUESTS = 8;

/** What a tools/call adds to the bare upstream request when the client is streaming. */
export interface UpstreamCallOptions {
  /** Each upstream progress notification, as it arrives. */
  onProgress?: (progress: Progress) => void;
  /** Aborted when the client cancels the call or drops the connection. */
  signal?: AbortSignal;
  /**
   * Awaited right before each tools/call request goes out, once its session
   * is ready; the request follows at once. If it rejects, nothing is sent and
   * the call rejects with that error.
   */
  beforeSend?: () => Promise<void>;
  /**
   * Where the result's bytes go when they can pass through unchanged (see
   * upstream.passthrough.ts); the call then resolves with an empty stub result.
   */
  rawResult?: RawResultCapture;
  /**
   * For a client that answers server-to-client requests: the call gets a
   * dedicated upstream session declaring these capabilities, and each request
   * the upstream sends during the call goes to `forward`. Being the call's
   * own, that session's log messages are the call's too: each goes to `log`
   * (on a shared session no message can be told apart from another call's).
   */
  relay?: {
    capabilities: ClientCapabilities;
    forward: (request: ServerRequest, signal: AbortSignal) => Promise<Result>;
    log: (message: LoggingMessageNotification["params"]) => void;
    /** Settles before the call goes out (with the session being opened): what `log` needs first, e.g. the client's log level. */
    ready?: Promise<void>;
  };
}

/** The upstream went silent past the idle timeout, or the call passed the maximum duration. */
export class UpstreamTimeout extends Error {
  constructor(readonly bound: "idle" | "duration") {
    super(
      bound === "idle"
        ? `The upstream sent nothing for ${CALL_IDLE_TIMEOUT_MS / 1000} s, so the call was stopped`
        : `The call ran past the maximum of ${MAX_CALL_DURATION_MS / 60_000} minutes, so it was stopped`,
    );
    this.name = "UpstreamTimeout";
  }
}

/** The client cancelled the call or went away; the upstream was told. */
export class CallCancelled extends Error {
  constructor(reason: string) {
    super(reason);
    this.name = "CallCancelled";
  }
}

/**
 * The idle and total clocks of one upstream call. `signal` aborts when either
 * trips or the client's signal aborts; the SDK then sends the upstream
 * `notifications/cancelled`. While the client is answering a relayed request
 * (a person filling in an elicitation), the idle clock is held. Once the call
 * is disposed, `signal` no longer follows the client's: the SDK never removes
 * its abort listener, and a client signal that aborts after the answer (the
 * 2026-07-28 server aborts every request's signal when its exchange closes)
 * would tell the upstream a finished call was cancelled.
 */
export class CallDeadline {
  readonly signal: AbortSignal;
  tripped: "idle" | "duration" | null = null;
  /** A failure found in the upstream's answer (upstream.scope.ts), which ended the call. */
  failure: Error | null = null;
  /**
   * The `notifications/cancelled` sends this call's own abort started, so it waits for its own only: a send another
   * request started belongs to that request, and once that request ends its promise can never settle in this one.
   */
  readonly cancellations = new Set<Promise<void>>();
  private readonly controller = new AbortController();
  /**
   * One timer for both clocks, set for whichever could trip first and checked again when it fires: life only moves
   * `lastLife` forward. A timer set and cleared per call and per progress notification cost more than the check.
   */
  private timer: ReturnType<typeof setTimeout> | undefined;
  private readonly startedAt = Date.now();
  private lastLife = this.startedAt;
  private held = 0;

  private readonly outer: AbortSignal | undefined;
  private readonly followOuter = () => this.controller.abort(this.outer!.reason);

  constructor(outer: AbortSignal | undefined) {
    this.signal = this.controller.signal;
    this.outer = outer;
    if (outer?.aborted) this.followOuter();
    else outer?.addEventListener("abort", this.followOuter, { once: true });
    this.schedule();
  }

  /** The upstream showed life: the idle clock starts again from now. */
  touch(): void {
    this.lastLife = Date.now();
  }

  /** Sets the timer for the earlier of the two bounds still running (the idle one stops while the client answers). */
  private schedule(): void {
    const now = Date.now();
    const untilTotal = this.startedAt + MAX_CALL_DURATION_MS - now;
    const untilIdle = this.held === 0 ? this.lastLife + CALL_IDLE_TIMEOUT_MS - now : Infinity;
    this.timer = setTimeout(() => this.check(), Math.max(0, Math.min(untilTotal, untilIdle)));
  }

  private check(): void {
    if (this.tripped) return;
    const now = Date.now();
    if (now - this.startedAt >= MAX_CALL_DURATION_MS) this.trip("duration");
    else if (this.held === 0 && now - this.lastLife >= CALL_IDLE_TIMEOUT_MS) this.trip("idle");
    else this.schedule();
  }

  /**
   * Runs `work` (the client answering a relayed request) with the idle clock held. One request past
   * MAX_PENDING_INPUT_REQUESTS at once ends the call `upstream_protocol_error`, before it reaches the client.
   */
  async hold<T>(work: () => Promise<T>): Promise<T> {
    // Ended already: the rest of a flood (thousands, dispatched at once) is refused with the one error, made once.
    if (this.failure) throw this.failure;
    if (this.held >= MAX_PENDING_INPUT_REQUESTS) {
      const failure = new UpstreamFailure(
        "upstream_protocol_error",
        `The upstream asked the client for more than ${MAX_PENDING_INPUT_REQUESTS} inputs at once`,
      );
      this.fail(failure);
      throw failure;
    }
    this.held++;
    try {
      return await work();
    } finally {
      this.held--;
      this.touch();
      // The timer may be set for the total bound only (it fired while held): the idle clock runs again from now.
      if (this.held === 0 && !this.tripped) {
        clearTimeout(this.timer);
        this.schedule();
      }
    }
  }

  /** Ends the call with `error`; the SDK tells the upstream it was cancelled. */
  fail(error: Error): void {
    this.failure ??= error;
    this.abort(error);
  }

  dispose(): void {
    clearTimeout(this.timer);
    this.outer?.removeEventListener("abort", this.followOuter);
  }

  private trip(bound: "idle" | "duration"): void {
    this.tripped = bound;
    this.abort(new UpstreamTimeout(bound));
  }

  /** Abort listeners run inside `abort()`, the SDK's cancellation send among them: while they run, this call is `aborting`. */
  private abort(reason: Error): void {
    aborting = this;
    try {
      this.controller.abort(reason);
    } finally {
      aborting = null;
    }
  }
}

let aborting: CallDeadline | null = null;

/** The call whose own clock or failure is aborting it right now (null outside such an abort). */
export const abortingCall = (): CallDeadline | null => aborting;
