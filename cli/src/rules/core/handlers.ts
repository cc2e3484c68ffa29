// Handlers that need nothing but the platform's fetch: deny, a function, http,
// record (through a sink the host provides). Node's command handler and file sink
// live in ../node.
import { answerFromText, answerFromValue } from "./answer.ts";
import { isoNow } from "./clock.ts";
import { interpolateEnv, type HandlerType } from "./config.ts";
import { HookFailure } from "./errors.ts";
import type { HookAnswer, HookEvent } from "./events.ts";

/** What a command prints or an http handler answers is read up to this many bytes; more is a hook error. */
export const MAX_OUTPUT_BYTES = 1024 * 1024;

export interface HandlerOptions {
  /** The label on the context it adds: `[hook <name>]`. */
  name?: string;
  /** Seconds; omitted, the type's default (command 60, http 30, function none; 120 on run_end). */
  timeout?: number;
  /** Run without blocking the call; the answer is logged on the run, never applied. */
  async?: boolean;
}

export interface Handler {
  readonly type: HandlerType | "function";
  readonly name: string;
  readonly async: boolean;
  readonly timeout?: number;
  /** Answers one event, or throws a HookFailure. `signal` aborts when the timeout passes. */
  handle(event: HookEvent, signal: AbortSignal): Promise<HookAnswer>;
}

abstract class BaseHandler implements Handler {
  abstract readonly type: Handler["type"];
  readonly name: string;
  readonly async: boolean;
  readonly timeout?: number;
  constructor(defaultName: string, options: HandlerOptions = {}) {
    this.name = options.name ?? defaultName;
    this.async = options.async ?? false;
    this.timeout = options.timeout;
  }
  abstract handle(event: HookEvent, signal: AbortSignal): Promise<HookAnswer>;
}

/** Refuses every matching call. */
export class DenyHandler extends BaseHandler {
  readonly type = "deny";
  constructor(
    readonly reason = "denied by rule",
    options?: HandlerOptions,
  ) {
    super("deny", options);
  }
  async handle(): Promise<HookAnswer> {
    return { decision: "deny", reason: this.reason };
  }
}

export type HookFunction = (event: HookEvent) => unknown;

/** A function as a handler (`run.on`, or a file's `callable`): it returns an answer, a plain object of that shape, text or nothing. */
export class FunctionHandler extends BaseHandler {
  readonly type: "function" | "callable";
  constructor(
    readonly fn: HookFunction,
    options?: HandlerOptions & { type?: "function" | "callable" },
  ) {
    super(fn.name || "function", options);
    this.type = options?.type ?? "function";
  }
  async handle(event: HookEvent): Promise<HookAnswer> {
    let value: unknown;
    try {
      value = await this.fn(event);
    } catch (error) {
      throw new HookFailure(
        "hook_threw",
        `${this.name} threw ${error instanceof Error ? `${error.name}: ${error.message}` : String(error)}`,
      );
    }
    return answerFromValue(value, event.hook_event_name);
  }
}

/** POSTs the event as JSON; a 2xx body is the answer (JSON, or text as context), anything else is a hook error. */
export class HttpHandler extends BaseHandler {
  readonly type = "http";
  readonly #headers: Record<string, string>;
  constructor(
    readonly url: string,
    headers: Record<string, string>,
    env: Readonly<Record<string, string | undefined>>,
    options?: HandlerOptions,
  ) {
    super(new URL(url).host, options);
    this.#headers = Object.fromEntries(Object.entries(headers).map(([key, value]) => [key, interpolateEnv(value, env)]));
  }
  async handle(event: HookEvent, signal: AbortSignal): Promise<HookAnswer> {
    let response: Response;
    try {
      response = await fetch(this.url, {
        method: "POST",
        headers: { "content-type": "application/json", ...this.#headers },
        body: JSON.stringify(event),
        signal,
      });
    } catch (error) {
      throw new HookFailure("hook_http_unreachable", `POST ${this.url} failed: ${error instanceof Error ? error.message : String(error)}`);
    }
    const text = await readBounded(response);
    if (!response.ok) throw new HookFailure("hook_http_status", `POST ${this.url} answered ${response.status}: ${text.slice(0, 200)}`);
    if (/json/i.test(response.headers.get("content-type") ?? "") && text.trim() !== "") {
      let value: unknown;
      try {
        value = JSON.parse(text);
      } catch {
        throw new HookFailure(
          "hook_malformed_answer",
          `POST ${this.url} answered content-type JSON that is not JSON: ${text.slice(0, 120)}`,
        );
      }
      return answerFromValue(value, event.hook_event_name);
    }
    return answerFromText(text, event.hook_event_name);
  }
}

async function readBounded(response: Response): Promise<string> {
  if (!response.body) return "";
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > MAX_OUTPUT_BYTES) {
      await reader.cancel();
      throw new HookFailure("hook_output_too_large", `the answer passed ${MAX_OUTPUT_BYTES} bytes`);
    }
    chunks.push(value);
  }
  const joined = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    joined.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return new TextDecoder().decode(joined);
}

/** Where record lines go; the Node SDK appends to a file. */
export interface RecordSink {
  append(line: string): Promise<void>;
}

/** One record line per call (docs/rules-file.md documents the fields). */
export interface RecordLine {
  ts: string;
  run_id: string;
  event: HookEvent["hook_event_name"];
  session?: string;
  source?: string;
  vendor?: string;
  tool_name?: string;
  tool_input?: unknown;
  tool_result?: unknown;
  error?: string;
  request?: unknown;
  response?: unknown;
}

/** Writes the call as one JSON line; it never changes the call. */
export class RecordHandler extends BaseHandler {
  readonly type = "record";
  constructor(
    readonly sink: RecordSink,
    readonly labels: { session?: string; source?: string } = {},
    options?: HandlerOptions,
  ) {
    super("record", options);
  }
  async handle(event: HookEvent): Promise<HookAnswer> {
    const line: RecordLine = {
      ts: isoNow(),
      run_id: event.run_id,
      event: event.hook_event_name,
      session: this.labels.session,
      source: this.labels.source,
      vendor: event.vendor,
      tool_name: event.tool_name,
      tool_input: event.tool_input,
      ...("tool_result" in event ? { tool_result: event.tool_result } : {}),
      error: event.error,
      request: event.request,
      response: event.response,
    };
    await this.sink.append(`${JSON.stringify(line)}\n`);
    return { decision: "allow" };
  }
}
