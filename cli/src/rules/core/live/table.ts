// The declared tools of one run: each call goes through the run's rules
// (pre_tool_call, post_tool_call), is bounded by its timeout, and is one line in the
// record, or is answered from a recording without touching the network. The host
// supplies how each tool executes (fetch, an imported function).
import { isoNow } from "../clock.ts";
import type { RecordSink } from "../handlers.ts";
import type { ToolInput } from "../events.ts";
import type { WrappedTool } from "../tool-shapes.ts";
import type { LiveSettings, ResolvedTool } from "./config.ts";
import { LiveToolError } from "./errors.ts";
import { isDenial, type LiveLine, type Redactor, type ReplayBook } from "./record.ts";
import { InputChecker, toolDefinition, withDefaults, type DefinitionShape } from "./schema.ts";

/** What one execution reports besides its result, for the record line. */
export interface LiveCall {
  /** Aborts when the tool's timeout passes. */
  signal: AbortSignal;
  request?: { method: string; url: string };
  truncated?: boolean;
}

/** Runs a tool on the input as sent (defaults filled, checked), or throws. */
export type LiveExecutor = (input: ToolInput, call: LiveCall) => Promise<unknown>;

export interface BuiltTool {
  spec: ResolvedTool;
  execute: LiveExecutor;
}

/** The part of a HookRun the tools use. */
export interface LiveRun {
  readonly runId: string;
  callTool(
    name: string,
    fn: (input: ToolInput, ...rest: unknown[]) => unknown,
    input: ToolInput,
    rest?: unknown[],
    vendor?: string,
  ): Promise<unknown>;
  vendorOf(toolName: string, given?: string): string | undefined;
  /** Where the lines go, when the run keeps them (the Node HookRun's `liveLog`). */
  readonly liveLog?: LiveLine[];
}

export interface LiveToolsOptions {
  settings: LiveSettings;
  /** The record file ([live].record). */
  sink?: RecordSink;
  /** Set: every tool answers from this recording ([live].replay). */
  replay?: ReplayBook;
  redactor?: Redactor;
}

interface Tool extends BuiltTool {
  checker: InputChecker;
}

interface Trace extends Partial<LiveCall> {
  inputSent?: ToolInput;
  raw?: { value: unknown };
  failure?: NonNullable<LiveLine["error_raw"]>;
  replayed?: boolean;
}

/**
 * Lines a run keeps in memory, newest last: a long agent run makes unbounded calls, and every line holds a raw and a
 * shown result. The record file keeps them all.
 */
export const MAX_KEPT_LINES = 1_000;

export class LiveTools {
  /** The last MAX_KEPT_LINES calls' lines, in order (the same lines the record file gets). */
  readonly log: LiveLine[];
  readonly #run: LiveRun;
  readonly #tools = new Map<string, Tool>();
  readonly #options: LiveToolsOptions;

  constructor(run: LiveRun, tools: readonly BuiltTool[], options: LiveToolsOptions) {
    this.#run = run;
    this.#options = options;
    this.log = run.liveLog ?? [];
    for (const tool of tools) this.#tools.set(tool.spec.name, { ...tool, checker: new InputChecker(tool.spec.name, tool.spec.input) });
  }

  /** The declared tools' names, in the file's order. */
  get names(): string[] {
    return [...this.#tools.keys()];
  }

  get replaying(): boolean {
    return this.#options.replay !== undefined;
  }

  /** Every declared tool, wrapped by the run's rules and recorded. `vendor` applies to tools that name none. */
  tools(options: { vendor?: string } = {}): Record<string, WrappedTool> {
    const wrapped: Record<string, WrappedTool> = {};
    for (const name of this.#tools.keys()) wrapped[name] = (input = {}, ...rest) => this.call(name, input, rest, options.vendor);
    return wrapped;
  }

  /** The tools as a model is told of them: OpenAI's `{ type: "function", function }` (default) or Anthropic's `{ name, description, input_schema }`. */
  toolDefinitions(shape: DefinitionShape = "openai") {
    return [...this.#tools.values()].map(({ spec }) => toolDefinition(spec, shape));
  }

  /** One call of a declared tool, through the rules; its line is written before it returns or throws. */
  async call(name: string, input: ToolInput = {}, rest: unknown[] = [], vendor?: string): Promise<unknown> {
    const tool = this.#tools.get(name);
    if (!tool) throw new TypeError(`no declared tool "${name}" (tools: ${this.names.join(", ") || "none"})`);
    const started = performance.now();
    const asked = snapshot(input);
    const trace: Trace = {};
    const given = tool.spec.vendor ?? vendor;
    let outcome: { shown: unknown } | { error: unknown };
    try {
      outcome = { shown: await this.#run.callTool(name, (toolInput) => this.#execute(tool, toolInput, trace), input, rest, given) };
    } catch (error) {
      outcome = { error };
    }
    // Field by field, in the documented order (no object spread per optional field: this runs on every call).
    const line = { ts: isoNow(), run_id: this.#run.runId, tool: name } as LiveLine;
    const vendorName = this.#run.vendorOf(name, given);
    if (vendorName !== undefined) line.vendor = vendorName;
    line.input_asked = asked;
    if (trace.inputSent !== undefined) line.input_sent = trace.inputSent;
    if (trace.request !== undefined) line.request = trace.request;
    if (trace.raw) line.result_raw = trace.raw.value;
    if ("shown" in outcome) line.result_shown = outcome.shown;
    if (trace.failure !== undefined) line.error_raw = trace.failure;
    if ("error" in outcome) {
      line.error = messageOf(outcome.error);
      if (isDenial(outcome.error)) line.denied = true;
    }
    if (trace.truncated) line.truncated = true;
    line.elapsed = Math.round(performance.now() - started) / 1000;
    line.replayed = trace.replayed ?? false;
    await this.#record(line);
    if ("error" in outcome) throw outcome.error;
    return outcome.shown;
  }

  async #execute(tool: Tool, toolInput: ToolInput, trace: Trace): Promise<unknown> {
    const sent = withDefaults(toolInput, tool.spec.defaults);
    trace.inputSent = sent;
    try {
      tool.checker.check(sent);
      const value = this.#options.replay ? this.#fromRecording(tool.spec.name, sent, trace) : await this.#bounded(tool, sent, trace);
      trace.raw = { value };
      return value;
    } catch (error) {
      trace.failure ??= rawError(error);
      throw error;
    }
  }

  /** The recorded answer, or the recorded failure thrown again; an unrecorded call is refused by name. */
  #fromRecording(name: string, sent: ToolInput, trace: Trace): unknown {
    const found = this.#options.replay!.take(name, sent);
    if (!("line" in found))
      throw new LiveToolError(
        "live_replay_unrecorded",
        `${name}: replay has no recorded answer for this input${found.recorded ? ` (it was recorded ${found.recorded} time(s); this is call ${found.recorded + 1})` : ""}: ${JSON.stringify(sent).slice(0, 300)}`,
      );
    const { line } = found;
    trace.replayed = true;
    trace.request = line.request;
    trace.truncated = line.truncated;
    if (line.error_raw) {
      trace.failure = line.error_raw;
      throw replayedError(line.error_raw);
    }
    return structuredClone(line.result_raw);
  }

  /** The executor, stopped at the tool's timeout (its signal aborts the request too). */
  async #bounded(tool: Tool, sent: ToolInput, trace: Trace): Promise<unknown> {
    const seconds = tool.spec.timeout ?? this.#options.settings.timeout;
    const controller = new AbortController();
    const call: LiveCall = { signal: controller.signal };
    let timer: ReturnType<typeof setTimeout> | undefined;
    try {
      return await Promise.race([
        tool.execute(sent, call),
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => {
            controller.abort();
            reject(new LiveToolError("live_timeout", `${tool.spec.name}: no answer within ${seconds} s`));
          }, seconds * 1000);
        }),
      ]);
    } finally {
      clearTimeout(timer);
      trace.request = call.request;
      trace.truncated = call.truncated;
    }
  }

  async #record(line: LiveLine): Promise<void> {
    const redacted = this.#options.redactor ? this.#options.redactor.redact(line) : line;
    this.log.push(redacted);
    // One line in, one out: shift() drops the first without moving the rest, where a splice moved all 1,000 each call.
    while (this.log.length > MAX_KEPT_LINES) this.log.shift();
    await this.#options.sink?.append(`${JSON.stringify(redacted)}\n`);
  }
}

const messageOf = (error: unknown) => (error instanceof Error ? error.message : String(error));

/** The input as the agent gave it, kept apart from what the rules do to theirs. */
function snapshot(input: ToolInput): ToolInput {
  // What agents send is a small JSON value: copied directly it is the same copy structuredClone makes, whose
  // serialiser cost a call about as much as all the rest of its wrapper. Anything else takes structuredClone.
  const copied = jsonCopy(input, []);
  if (copied !== NOT_JSON) return copied as ToolInput;
  try {
    return structuredClone(input);
  } catch {
    return { ...input };
  }
}

const NOT_JSON = Symbol("not a plain JSON value");
/** Objects and arrays jsonCopy takes in one value; a larger one goes to structuredClone. */
const MAX_COPIED_OBJECTS = 64;

/**
 * A copy of a tree of plain objects, dense arrays without extra keys, and primitives other than symbols; NOT_JSON
 * for anything structuredClone would copy differently (another prototype, a hole, an object met twice, a
 * `__proto__` key) or not at all.
 */
function jsonCopy(value: unknown, seen: object[]): unknown {
  if (value === null || (typeof value !== "object" && typeof value !== "function" && typeof value !== "symbol")) return value;
  // structuredClone keeps a shared object shared (and a cycle a cycle): such a value is left to it.
  if (typeof value !== "object" || seen.length === MAX_COPIED_OBJECTS || seen.includes(value)) return NOT_JSON;
  seen.push(value);
  const prototype = Object.getPrototypeOf(value);
  const keys = Object.keys(value);
  if (Array.isArray(value)) {
    if (prototype !== Array.prototype || keys.length !== value.length) return NOT_JSON;
    const copy: unknown[] = [];
    for (const item of value) {
      const itemCopy = jsonCopy(item, seen);
      if (itemCopy === NOT_JSON) return NOT_JSON;
      copy.push(itemCopy);
    }
    return copy;
  }
  if (prototype !== Object.prototype) return NOT_JSON;
  const copy: Record<string, unknown> = {};
  for (const key of keys) {
    // Assigned, a `__proto__` key would set the copy's prototype; structuredClone keeps it a key.
    if (key === "__proto__") return NOT_JSON;
    const itemCopy = jsonCopy((value as Record<string, unknown>)[key], seen);
    if (itemCopy === NOT_JSON) return NOT_JSON;
    copy[key] = itemCopy;
  }
  return copy;
}

function rawError(error: unknown): NonNullable<LiveLine["error_raw"]> {
  const { name, code, reason } = (error !== null && typeof error === "object" ? error : {}) as {
    name?: unknown;
    code?: unknown;
    reason?: unknown;
  };
  return {
    name: typeof name === "string" ? name : "Error",
    message: messageOf(error),
    ...(typeof code === "string" ? { code } : {}),
    ...(typeof reason === "string" ? { reason } : {}),
  };
}

/** A recorded failure, thrown again with the same name, code and reason (so a refusal stays a refusal). */
function replayedError(raw: NonNullable<LiveLine["error_raw"]>): Error {
  if (raw.name === "LiveToolError" && raw.code?.startsWith("live_"))
    return new LiveToolError(raw.code as LiveToolError["code"], raw.message);
  const error = new Error(raw.message);
  error.name = raw.name;
  return Object.assign(error, raw.code === undefined ? {} : { code: raw.code }, raw.reason === undefined ? {} : { reason: raw.reason });
}
