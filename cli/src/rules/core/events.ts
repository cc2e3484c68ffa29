// The rules file's vocabulary: the five events, Claude Code's names for them, and
// the shapes a handler reads (an event) and answers (an answer). Runtime-neutral.

export const EVENTS = ["pre_tool_call", "post_tool_call", "pre_request", "post_response", "run_end"] as const;
export type EventName = (typeof EVENTS)[number];

/** Claude Code's event names, accepted wherever an event is named. */
export const EVENT_ALIASES: Readonly<Record<string, EventName>> = {
  PreToolUse: "pre_tool_call",
  PostToolUse: "post_tool_call",
  Stop: "run_end",
  SessionEnd: "run_end",
};

export function eventNamed(name: string): EventName | undefined {
  return (EVENTS as readonly string[]).includes(name) ? (name as EventName) : own(EVENT_ALIASES, name);
}

/**
 * `table[key]` when the table itself has that key: never what its prototype has. A name from a file, an
 * event or a command line (`constructor`, `toString`, `__proto__`) is then unknown like any other.
 */
export function own<T>(table: Readonly<Record<string, T>>, key: string): T | undefined {
  return Object.hasOwn(table, key) ? table[key] : undefined;
}

export const isPreEvent = (event: EventName) => event === "pre_tool_call" || event === "pre_request";
export const isPostEvent = (event: EventName) => event === "post_tool_call" || event === "post_response";

export type ToolInput = Record<string, unknown>;

/** One HTTP request a session makes, as `pre_request` sees it. */
export interface RequestShape {
  method: string;
  path: string;
  query?: Record<string, string>;
  body?: unknown;
}

/** Its response, as `post_response` sees it; `status: null` is a network failure. */
export interface ResponseShape {
  status: number | null;
  body: unknown;
  headers?: Record<string, string>;
  error?: string;
  /** Seconds. */
  elapsed: number;
}

/** What a handler reads (a command on stdin, an http handler as the POST body). The run key is never in it. */
export interface HookEvent {
  hook_event_name: EventName;
  run_id: string;
  /** The rule's matcher as written ("" when the rule has none). */
  matcher: string;
  cwd?: string;
  vendor?: string;
  tool_name?: string;
  tool_input?: ToolInput;
  tool_result?: unknown;
  error?: string;
  request?: RequestShape;
  response?: ResponseShape;
  report?: unknown;
  artifacts?: Record<string, string>;
}

export type Finding = Record<string, unknown>;

export const DECISIONS = ["allow", "deny", "rewrite"] as const;
export type Decision = (typeof DECISIONS)[number];

/** A handler's answer after normalisation (Claude Code's form and plain text are mapped onto it). */
export interface HookAnswer {
  decision: Decision;
  reason?: string;
  updated_input?: ToolInput;
  updated_result?: unknown;
  updated_error?: string;
  updated_request?: Partial<RequestShape>;
  updated_response?: unknown;
  additional_context?: string;
  findings?: Finding[];
}

export const UPDATE_FIELDS = ["updated_input", "updated_result", "updated_error", "updated_request", "updated_response"] as const;
export type UpdateField = (typeof UPDATE_FIELDS)[number];

/** Which `updated_*` fields a rewrite may carry on each event. */
export const UPDATES_BY_EVENT: Readonly<Record<EventName, readonly UpdateField[]>> = {
  pre_tool_call: ["updated_input"],
  // `updated_input` here changes the arguments later rules and record handlers see, not what the tool got.
  post_tool_call: ["updated_result", "updated_error", "updated_input"],
  pre_request: ["updated_request"],
  post_response: ["updated_response"],
  run_end: [],
};
