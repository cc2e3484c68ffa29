// One run of the rules: events fired around tool calls and HTTP requests, each
// matching rule's handlers run on the same event, their answers merged, rules in
// declaration order with each seeing the previous rule's rewrite. Runtime-neutral.
import { AliasDoor, type AliasOptions, type Legend } from "./alias/door.ts";
import { AliasError, type SeedEntity } from "./alias/seeds.ts";
import { attachContext } from "./answer.ts";
import { MAX_EVENT_DEPTH, nestsDeeperThan } from "./bounds.ts";
import { defaultTimeoutSeconds } from "./config.ts";
import { HookDenied, HookError, HookFailure, type HookFailureCode } from "./errors.ts";
import {
  eventNamed,
  isPostEvent,
  isPreEvent,
  type EventName,
  type Finding,
  type HookAnswer,
  type HookEvent,
  type RequestShape,
  type ResponseShape,
  type ToolInput,
} from "./events.ts";
import { FunctionHandler, type Handler, type HookFunction } from "./handlers.ts";
import { compileMatcher, valueAt } from "./matcher.ts";
import { wrapToolkit, wrapToolLike, type ToolFunction, type ToolLike, type WrappedTool, type WrappedTools } from "./tool-shapes.ts";

export type { ToolFunction, ToolLike, ToolObject, WrappedTool, WrappedTools } from "./tool-shapes.ts";

export interface Rule {
  event: EventName;
  /** As written; sent to handlers as the event's `matcher`. */
  matcher: string;
  vendor?: string;
  arg?: string;
  handlers: Handler[];
}

interface CompiledRule extends Rule {
  matches: (name: string) => boolean;
}

export interface RecordedFailure {
  event: EventName;
  hook: string;
  code: HookFailureCode;
  message: string;
  tool_name?: string;
}

export interface AsyncAnswer {
  event: EventName;
  hook: string;
  answer?: HookAnswer;
  failure?: { code: HookFailureCode; message: string };
}

/** One run_end the run has seen: which (`run_end`, or the agent's `Stop`/`SessionEnd`), when, and its own outcome. */
export interface RunEnd {
  event: string;
  /** ISO time. */
  at: string;
  passed: boolean;
  reasons: string[];
}

/** The run's verdict: the conjunction of every run_end it has seen. Once failed it stays failed; later ends add findings. */
export interface Verdict {
  passed: boolean;
  /** Why it failed: every failed run_end's denial or hook error, in order. */
  reasons: string[];
  /** Every finding of the run. */
  findings: Finding[];
  /** Every hook error recorded on the run (only run_end's fail it). */
  errors: RecordedFailure[];
  /** Every run_end so far, in order, each with its own outcome (the last is the one just fired). */
  ends: RunEnd[];
}

/** What a run counts as it goes: numbers only, never a value (so they may be kept anywhere a run's state is). */
export interface RunCounts {
  calls: number;
  requests: number;
  denied: number;
  rewritten: number;
  /** Real values (seeded, private) found in text about to reach the agent, after every rewrite. */
  leak_through_inbound: number;
}

export interface RunSummary extends RunCounts {
  run_id: string;
  hook_errors: number;
  findings: number;
  async_answers: number;
  ended: boolean;
}

export interface HookRunOptions {
  runId?: string;
  cwd?: string;
  rules?: Rule[];
  /** Vendor name → tool-name matcher (the file's [vendors]). */
  vendors?: Record<string, string>;
  /** The run's alias door; its `alias` handlers must share it. Omitted, a door with a fresh random key. */
  alias?: AliasDoor;
  /** Options for the door made when `alias` is omitted (the run key, the file's [alias]). */
  aliasOptions?: AliasOptions;
  /**
   * Aborted, every handler still running is stopped as its own timeout would stop it (a command's process
   * group killed, a request cancelled): `hooks run` aborts it when its answer is due, before it exits.
   */
  signal?: AbortSignal;
}

/** What firing one event did. */
export interface Dispatched {
  event: HookEvent;
  denied?: { reason: string; failure?: HookFailureCode };
  contexts: string[];
  rewritten: boolean;
  /** How many rules applied. */
  matched: number;
  /** Whether a rule with an `alias` handler matched the event (even when an earlier rule denied first). */
  aliased: boolean;
}

/** What an event hands the agent besides the result: its context lines, or, when it denied, the reason alone. */
export interface AgentTexts {
  contexts: string[];
  reason?: string;
}

export type RequestFn = (request: RequestShape) => Promise<{ status: number; body: unknown; headers?: Record<string, string> }>;

/** A world session, or anything that calls tools by name and/or makes HTTP requests. */
export interface SessionLike {
  call?: (tool: string, input: ToolInput) => unknown;
  /** Its tools: a name → function (or tool object) map, or a toolkit with such a map as `impls`. */
  toolkit?: () => unknown;
  /** Where `request()` sends its requests when no `requestFn` is given. */
  baseUrl?: string;
  headers?: Record<string, string>;
}

export interface OnOptions {
  matcher?: string;
  vendor?: string;
  arg?: string;
  name?: string;
  /** Put the rule ahead of the file's rules for that event. */
  before?: boolean;
}

/** A run's id, as a run made without one gets. */
export const newRunId = () => `run-${crypto.randomUUID().replaceAll("-", "").slice(0, 6)}`;

export class HookRun {
  readonly runId: string;
  readonly cwd?: string;
  /** Every finding handlers reported, in order, each labelled with its hook and event. */
  readonly findings: Finding[] = [];
  /** Every hook error, in order. */
  readonly errors: RecordedFailure[] = [];
  /** Answers of `async = true` handlers: logged, never applied. */
  readonly asyncAnswers: AsyncAnswer[] = [];
  /** The persona door: `run.seed()` feeds it, `alias` handlers apply it. */
  readonly alias: AliasDoor;
  readonly #rules = new Map<EventName, CompiledRule[]>();
  readonly #vendors: [string, (name: string) => boolean][];
  readonly #pending = new Set<Promise<void>>();
  readonly #counts = { calls: 0, requests: 0, denied: 0, rewritten: 0 };
  readonly #ends: RunEnd[] = [];
  readonly #signal?: AbortSignal;

  constructor(options: HookRunOptions = {}) {
    this.runId = options.runId ?? newRunId();
    this.#signal = options.signal;
    this.cwd = options.cwd;
    this.alias = options.alias ?? new AliasDoor(options.aliasOptions);
    this.#vendors = Object.entries(options.vendors ?? {}).map(([name, pattern]) => [name, compileMatcher(pattern)]);
    for (const rule of options.rules ?? []) this.#add(rule, false);
  }

  #add(rule: Rule, before: boolean): void {
    const compiled = { ...rule, matches: compileMatcher(rule.matcher) };
    const list = this.#rules.get(rule.event) ?? [];
    if (before) list.unshift(compiled);
    else list.push(compiled);
    this.#rules.set(rule.event, list);
  }

  /** Adds a rule from code: functions (or built-in handlers) on an event (Claude Code's names work too). */
  on(event: EventName | string, handlers: HookFunction | Handler | (HookFunction | Handler)[], options: OnOptions = {}): this {
    const name = eventNamed(event);
    if (!name) throw new TypeError(`unknown event ${event}`);
    const list = (Array.isArray(handlers) ? handlers : [handlers]).map((handler) =>
      typeof handler === "function" ? new FunctionHandler(handler, { name: options.name }) : handler,
    );
    this.#add(
      { event: name, matcher: options.matcher ?? "", vendor: options.vendor, arg: options.arg, handlers: list },
      options.before ?? false,
    );
    return this;
  }

  /** Mints aliases for these entities before the agent starts (more calls add more; see docs/alias.md). */
  seed(entities: readonly SeedEntity[]): Promise<void> {
    return this.alias.seed(entities);
  }

  /** Every seed with its alias, and the run key: for a grader. Keep it with the run, never with world data. */
  legend(): Legend {
    return this.alias.legend();
  }

  /**
   * Counts real values in what is about to reach the agent (the inbound leak meter). The run's own
   * calls do it; a driver that fires events itself (`rayrun hooks run`) calls it with what it hands on.
   */
  meterInbound(value: unknown): void {
    if (!this.alias.seeded) return;
    try {
      this.alias.leakThroughInbound += this.alias.countReal(value);
    } catch (error) {
      // Past the door's text bound the meter cannot read it; an alias rule on that event has already refused it.
      if (!(error instanceof AliasError)) throw error;
    }
  }

  /** The counters so far (what summary() reports of them). */
  counts(): RunCounts {
    return { ...this.#counts, leak_through_inbound: this.alias.leakThroughInbound };
  }

  /**
   * Adds to the counters: for a driver that fires events itself, and for a run spread over
   * processes (`rayrun hooks run` adds the session's earlier counts, kept in its state folder).
   */
  addCounts(counts: Partial<RunCounts>): void {
    for (const name of ["calls", "requests", "denied", "rewritten"] as const) this.#counts[name] += counts[name] ?? 0;
    this.alias.leakThroughInbound += counts.leak_through_inbound ?? 0;
  }

  /** The vendor a tool belongs to: the one given, else the first [vendors] pattern its name matches. */
  vendorOf(toolName: string, given?: string): string | undefined {
    return given ?? this.#vendors.find(([, matches]) => matches(toolName))?.[0];
  }

  /** Fires one event through every matching rule in order. Throws HookError on two rewriters in one rule. */
  async dispatch(base: Omit<HookEvent, "run_id" | "matcher">): Promise<Dispatched> {
    let event: HookEvent = { ...base, run_id: this.runId, matcher: "", ...(this.cwd === undefined ? {} : { cwd: this.cwd }) };
    const contexts: string[] = [];
    let rewritten = false;
    let matched = 0;
    const rules = this.#rules.get(event.hook_event_name) ?? [];
    const aliased = rules.some((rule) => rule.handlers.some((handler) => handler.type === "alias") && this.#applies(rule, event));
    // Before any handler walks it: an event nested past the bound is refused whole (a post_* result too, so it never reaches the agent).
    const tooDeep = EVENT_VALUES.find((field) => nestsDeeperThan(event[field]));
    if (tooDeep) {
      const message = `the event's ${tooDeep} nests objects and arrays deeper than ${MAX_EVENT_DEPTH} levels`;
      this.errors.push({ event: event.hook_event_name, hook: "rayrun", code: "event_too_deep", message, tool_name: event.tool_name });
      return { event, denied: { reason: `event_too_deep: ${message}`, failure: "event_too_deep" }, contexts, rewritten, matched, aliased };
    }
    for (const rule of rules) {
      if (!this.#applies(rule, event)) continue;
      matched++;
      const ruleEvent = { ...event, matcher: rule.matcher };
      const outcomes = await Promise.all(rule.handlers.map((handler) => this.#run(handler, ruleEvent)));
      const merged = this.#merge(rule, ruleEvent, outcomes);
      contexts.push(...merged.contexts);
      if (merged.denied) return { event, denied: merged.denied, contexts, rewritten, matched, aliased };
      if (merged.rewrite) {
        event = applyRewrite(event, merged.rewrite);
        rewritten = true;
      }
    }
    return { event, contexts, rewritten, matched, aliased };
  }

  /**
   * The texts a fired event hands the agent besides the result (context lines, or a denial's
   * reason), as the agent will read them. Rules write them and may echo what a tool returned, so
   * they cross the alias door like the result: on a post_* event an `alias` rule guards, real
   * values become aliases; and on every event they are metered (`leak_through_inbound`).
   */
  toAgent(dispatched: Dispatched): AgentTexts {
    const shown: AgentTexts = dispatched.denied ? { contexts: [], reason: dispatched.denied.reason } : { contexts: dispatched.contexts };
    if (!this.alias.seeded) return shown;
    if (dispatched.aliased && isPostEvent(dispatched.event.hook_event_name)) {
      shown.contexts = shown.contexts.map((line) => this.#aliased(line));
      if (shown.reason !== undefined) shown.reason = this.#aliased(shown.reason);
    }
    this.meterInbound([...shown.contexts, ...(shown.reason === undefined ? [] : [shown.reason])]);
    return shown;
  }

  /** One text in alias space; one too large for the door to read is withheld, never passed unread. */
  #aliased(text: string): string {
    try {
      return this.alias.toAlias(text).value;
    } catch (error) {
      if (!(error instanceof AliasError)) throw error;
      return `[withheld: ${error.code}]`;
    }
  }

  #applies(rule: CompiledRule, event: HookEvent): boolean {
    const subject = event.tool_name ?? event.request?.path ?? "";
    if (!rule.matches(subject)) return false;
    if (rule.vendor !== undefined && rule.vendor !== event.vendor) return false;
    if (rule.arg !== undefined && valueAt(event.tool_input ?? event.request?.body, rule.arg) === undefined) return false;
    return true;
  }

  async #run(handler: Handler, event: HookEvent): Promise<{ handler: Handler; answer?: HookAnswer; failure?: HookFailure } | undefined> {
    const running = this.#withTimeout(handler, event);
    if (handler.async) {
      const logged = running.then((outcome) => {
        this.asyncAnswers.push({
          event: event.hook_event_name,
          hook: handler.name,
          ...(outcome.failure ? { failure: { code: outcome.failure.code, message: outcome.failure.message } } : { answer: outcome.answer }),
        });
      });
      this.#pending.add(logged);
      void logged.finally(() => this.#pending.delete(logged));
      return undefined;
    }
    return running;
  }

  async #withTimeout(handler: Handler, event: HookEvent): Promise<{ handler: Handler; answer?: HookAnswer; failure?: HookFailure }> {
    const seconds = handler.timeout ?? defaultTimeoutSeconds(handler.type, event.hook_event_name);
    const controller = new AbortController();
    const stopWithRun = () => controller.abort();
    this.#signal?.addEventListener("abort", stopWithRun, { once: true });
    if (this.#signal?.aborted) controller.abort();
    let timer: ReturnType<typeof setTimeout> | undefined;
    try {
      const answering = handler.handle(event, controller.signal);
      const answer = await (seconds === undefined
        ? answering
        : Promise.race([
            answering,
            new Promise<never>((_, reject) => {
              timer = setTimeout(() => {
                controller.abort();
                reject(new HookFailure("hook_timeout", `${handler.name} did not answer within ${seconds} s`));
              }, seconds * 1000);
            }),
          ]));
      return { handler, answer };
    } catch (error) {
      const failure =
        error instanceof HookFailure
          ? error
          : new HookFailure("hook_threw", `${handler.name} failed: ${error instanceof Error ? error.message : String(error)}`);
      return { handler, failure };
    } finally {
      if (timer !== undefined) clearTimeout(timer);
      this.#signal?.removeEventListener("abort", stopWithRun);
    }
  }

  /** deny beats rewrite beats allow; one rewriter per rule; every context and finding is kept. */
  #merge(
    rule: CompiledRule,
    event: HookEvent,
    outcomes: ({ handler: Handler; answer?: HookAnswer; failure?: HookFailure } | undefined)[],
  ): { denied?: Dispatched["denied"]; rewrite?: HookAnswer; contexts: string[] } {
    const contexts: string[] = [];
    let denied: Dispatched["denied"];
    const rewrites: { handler: Handler; answer: HookAnswer }[] = [];
    for (const outcome of outcomes) {
      if (!outcome) continue;
      const { handler, answer, failure } = outcome;
      if (failure) {
        this.errors.push({
          event: event.hook_event_name,
          hook: handler.name,
          code: failure.code,
          message: failure.message,
          tool_name: event.tool_name,
        });
        // A hook error denies a pre_* call and fails run_end; on a post_* event it leaves the result as it was.
        if ((isPreEvent(event.hook_event_name) || event.hook_event_name === "run_end") && !denied)
          denied = { reason: `hook ${handler.name} failed (${failure.code}): ${failure.message}`, failure: failure.code };
        continue;
      }
      if (!answer) continue;
      if (answer.additional_context) contexts.push(`[hook ${handler.name}] ${answer.additional_context}`);
      for (const finding of answer.findings ?? []) this.findings.push({ ...finding, hook: handler.name, event: event.hook_event_name });
      if (answer.decision === "deny" && !denied) denied = { reason: answer.reason ?? `denied by hook ${handler.name}` };
      if (answer.decision === "rewrite") rewrites.push({ handler, answer });
    }
    if (denied) return { denied, contexts };
    if (rewrites.length > 1)
      throw new HookError(
        "hook_two_rewriters",
        `hooks ${rewrites.map((r) => r.handler.name).join(" and ")} both rewrote ${event.hook_event_name}${rule.matcher ? ` under matcher "${rule.matcher}"` : ""}; at most one handler per rule may rewrite`,
      );
    return { rewrite: rewrites[0]?.answer, contexts };
  }

  /**
   * The same map of tools, each call going through pre_tool_call and post_tool_call. A tool is a function,
   * or an agent SDK's tool object (`execute` or `invoke`), returned with that method wrapped and the rest as it was.
   */
  wrapTools<T extends Record<string, ToolLike>>(tools: T, options: { vendor?: string } = {}): WrappedTools<T> {
    const wrapped: Record<string, unknown> = {};
    for (const [name, tool] of Object.entries(tools)) {
      wrapped[name] = wrapToolLike(
        name,
        tool,
        (fn): WrappedTool =>
          (input = {}, ...rest) =>
            this.callTool(name, fn, input, rest, options.vendor),
      );
    }
    return wrapped as WrappedTools<T>;
  }

  async callTool(name: string, fn: ToolFunction, input: ToolInput, rest: unknown[] = [], vendor?: string): Promise<unknown> {
    this.#counts.calls++;
    const base = { tool_name: name, vendor: this.vendorOf(name, vendor) };
    const pre = await this.dispatch({ ...base, hook_event_name: "pre_tool_call", tool_input: input ?? {} });
    if (pre.rewritten) this.#counts.rewritten++;
    const toolInput = pre.event.tool_input ?? {};
    const preShown = this.toAgent(pre);
    if (pre.denied) {
      this.#counts.denied++;
      // post_tool_call still fires, so a record handler logs the refusal.
      await this.dispatch({ ...base, hook_event_name: "post_tool_call", tool_input: toolInput, error: `denied: ${pre.denied.reason}` });
      throw new HookDenied(preShown.reason ?? pre.denied.reason, pre.denied.failure);
    }
    let result: unknown;
    let thrown: { error: unknown } | undefined;
    try {
      result = await fn(toolInput, ...rest);
    } catch (error) {
      thrown = { error };
    }
    const post = await this.dispatch({
      ...base,
      hook_event_name: "post_tool_call",
      tool_input: toolInput,
      ...(thrown ? { error: errorText(thrown.error) } : { tool_result: result }),
    });
    if (post.rewritten) this.#counts.rewritten++;
    const postShown = this.toAgent(post);
    if (post.denied) {
      this.#counts.denied++;
      throw new HookDenied(postShown.reason ?? post.denied.reason, post.denied.failure);
    }
    this.meterInbound(thrown ? post.event.error : post.event.tool_result);
    if (thrown) throw withMessage(thrown.error, post.event.error ?? errorText(thrown.error));
    return attachContext(post.event.tool_result, [...preShown.contexts, ...postShown.contexts]);
  }

  /** Puts the rules on a session: `call()` and `toolkit()`'s tools fire the tool-call events, `request()` fires pre_request and post_response. */
  session(session: SessionLike, options: { vendor?: string; requestFn?: RequestFn } = {}) {
    const requestFn = options.requestFn ?? fetchRequest(session);
    return {
      call: (tool: string, input: ToolInput) => {
        if (!session.call) throw new TypeError("this session has no call()");
        return this.callTool(tool, (args) => session.call!(tool, args), input, [], options.vendor);
      },
      toolkit: async () => {
        if (!session.toolkit) throw new TypeError("this session has no toolkit()");
        return wrapToolkit(await session.toolkit(), (tools) => this.wrapTools(tools, { vendor: options.vendor }));
      },
      request: (method: string, path: string, init: { query?: Record<string, string>; body?: unknown } = {}) =>
        this.#request({ method, path, ...init }, requestFn, options.vendor),
    };
  }

  async #request(request: RequestShape, requestFn: RequestFn, vendor?: string): Promise<ResponseShape> {
    this.#counts.requests++;
    const pre = await this.dispatch({ hook_event_name: "pre_request", vendor, request });
    if (pre.rewritten) this.#counts.rewritten++;
    const sent = pre.event.request ?? request;
    const preShown = this.toAgent(pre);
    if (pre.denied) {
      this.#counts.denied++;
      await this.dispatch({
        hook_event_name: "post_response",
        vendor,
        request: sent,
        response: { status: null, body: null, error: `denied: ${pre.denied.reason}`, elapsed: 0 },
      });
      throw new HookDenied(preShown.reason ?? pre.denied.reason, pre.denied.failure);
    }
    const started = performance.now();
    let response: ResponseShape;
    try {
      const answered = await requestFn(sent);
      response = { ...answered, elapsed: (performance.now() - started) / 1000 };
    } catch (error) {
      response = { status: null, body: null, error: errorText(error), elapsed: (performance.now() - started) / 1000 };
    }
    const post = await this.dispatch({ hook_event_name: "post_response", vendor, request: sent, response });
    if (post.rewritten) this.#counts.rewritten++;
    const postShown = this.toAgent(post);
    if (post.denied) {
      this.#counts.denied++;
      throw new HookDenied(postShown.reason ?? post.denied.reason, post.denied.failure);
    }
    const shown = post.event.response ?? response;
    this.meterInbound(shown.body);
    return { ...shown, body: attachContext(shown.body, [...preShown.contexts, ...postShown.contexts]) };
  }

  /**
   * Fires run_end with the report and artifacts; a deny or a hook error fails it. The verdict is that of
   * every end so far: a run that failed once stays failed (`event` labels this end, e.g. Claude Code's
   * `Stop` or `SessionEnd`).
   */
  async end(report: unknown, artifacts: Record<string, string> = {}, event = "run_end"): Promise<Verdict> {
    const ended = await this.dispatch({ hook_event_name: "run_end", report, artifacts });
    await this.settled();
    const reasons = ended.denied ? [ended.denied.reason] : [];
    this.#ends.push({ event, at: new Date().toISOString(), passed: reasons.length === 0, reasons });
    return this.verdict();
  }

  /** The verdict so far (before any end: passed, with no ends). */
  verdict(): Verdict {
    const ends = this.#ends.map((end) => ({ ...end, reasons: [...end.reasons] }));
    return {
      passed: ends.every((end) => end.passed),
      reasons: ends.flatMap((end) => end.reasons),
      findings: [...this.findings],
      errors: [...this.errors],
      ends,
    };
  }

  /** Waits for every async handler still running. */
  async settled(): Promise<void> {
    while (this.#pending.size > 0) await Promise.all([...this.#pending]);
  }

  summary(): RunSummary {
    return {
      run_id: this.runId,
      ...this.counts(),
      hook_errors: this.errors.length,
      findings: this.findings.length,
      async_answers: this.asyncAnswers.length,
      ended: this.#ends.length > 0,
    };
  }
}

/** The parts of an event that carry outsiders' data, checked for nesting before any handler runs. */
const EVENT_VALUES = [
  "tool_input",
  "tool_result",
  "request",
  "response",
  "report",
  "artifacts",
] as const satisfies readonly (keyof HookEvent)[];

/** Replaces what a rewrite names; `updated_request` patches the request (method kept), `updated_response` is the new body. */
function applyRewrite(event: HookEvent, answer: HookAnswer): HookEvent {
  const next = { ...event };
  if (answer.updated_input !== undefined) next.tool_input = answer.updated_input;
  if (answer.updated_result !== undefined) next.tool_result = answer.updated_result;
  if (answer.updated_error !== undefined) next.error = answer.updated_error;
  if (answer.updated_request !== undefined && event.request)
    next.request = { ...event.request, ...answer.updated_request, method: event.request.method };
  if (answer.updated_response !== undefined && event.response) next.response = { ...event.response, body: answer.updated_response };
  return next;
}

const errorText = (error: unknown) => (error instanceof Error ? error.message : String(error));

/** The tool's own exception, same class, with the message post_tool_call left. */
function withMessage(error: unknown, message: string): unknown {
  if (error instanceof Error) {
    error.message = message;
    return error;
  }
  return typeof error === "string" ? message : error;
}

function fetchRequest(session: SessionLike): RequestFn {
  return async ({ method, path, query, body }) => {
    if (!session.baseUrl) throw new TypeError("session.request needs session.baseUrl or a requestFn");
    const url = new URL(path, session.baseUrl);
    for (const [key, value] of Object.entries(query ?? {})) url.searchParams.set(key, value);
    const response = await fetch(url, {
      method,
      headers: { ...(body === undefined ? {} : { "content-type": "application/json" }), ...session.headers },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    let parsed: unknown = text;
    try {
      parsed = text === "" ? null : JSON.parse(text);
    } catch {
      // a non-JSON body stays text
    }
    const headers: Record<string, string> = {};
    response.headers.forEach((value, name) => (headers[name] = value));
    return { status: response.status, body: parsed, headers };
  };
}
