// The rules file, parsed and validated when the run starts. Every mistake is a
// RulesFileError naming the key path and its line; nothing is silently ignored.
import { parse as parseToml, TomlError } from "smol-toml";
import type { AliasOptions } from "./alias/door.ts";
import { RulesFileError, type RulesFileErrorCode } from "./errors.ts";
import { jsonNestingPastAt, MAX_EVENT_DEPTH } from "./bounds.ts";
import { eventNamed, own, type EventName } from "./events.ts";
import { formatPath, jsonLines, tomlLines, type KeyPath, type LineMap } from "./locate.ts";
import { compileMatcher } from "./matcher.ts";
import { envNames } from "./env.ts";
import { liveConfig, type LiveConfig } from "./live/config.ts";

export { envNames, interpolateEnv } from "./env.ts";

interface HandlerBase {
  name?: string;
  /** Seconds; defaults by type and event (see defaultTimeoutSeconds). */
  timeout?: number;
  async?: boolean;
  /** Where it is in the file, for errors raised while building it. */
  at: { path: string; line?: number };
}
export type HandlerSpec = HandlerBase &
  (
    | { type: "command"; command: string; args?: string[]; cwd?: string }
    | { type: "http"; url: string; headers?: Record<string, string>; allowed_env?: string[] }
    | { type: "callable"; target: string }
    | { type: "record"; sink: string; session?: string; source?: string }
    | { type: "deny"; reason?: string }
    | { type: "alias"; direction?: "out" | "in" | "check"; check?: "outgoing"; args?: "keep" | "alias" }
  );
export type HandlerType = HandlerSpec["type"];

export interface RuleSpec {
  event: EventName;
  matcher: string;
  vendor?: string;
  arg?: string;
  handlers: HandlerSpec[];
}

export interface RulesConfig {
  rules: RuleSpec[];
  /** Vendor name → tool-name matcher. */
  vendors: Record<string, string>;
  alias?: { slugs?: string[]; public_layer_wins?: boolean; public_mailbox_domains?: string[] };
  /** The declared live tools: `[live]` and `[tools.<name>]` (docs/rules-file.md#declared-live-tools). */
  live?: LiveConfig;
}

type FieldType = "string" | "string[]" | "number" | "boolean" | "string-table";
const COMMON_FIELDS: Record<string, FieldType> = { type: "string", name: "string", timeout: "number", async: "boolean" };
const HANDLER_FIELDS: Record<HandlerType, { fields: Record<string, FieldType>; required: string[] }> = {
  command: { fields: { command: "string", args: "string[]", cwd: "string" }, required: ["command"] },
  http: { fields: { url: "string", headers: "string-table", allowed_env: "string[]" }, required: ["url"] },
  callable: { fields: { target: "string" }, required: ["target"] },
  record: { fields: { sink: "string", session: "string", source: "string" }, required: ["sink"] },
  deny: { fields: { reason: "string" }, required: [] },
  alias: { fields: { direction: "string", check: "string", args: "string" }, required: [] },
};
/** Handler types that make sense only on some events; the rest run on every event. */
const ALLOWED_EVENTS: Partial<Record<HandlerType, readonly EventName[]>> = {
  record: ["post_tool_call", "post_response"],
  deny: ["pre_tool_call", "pre_request", "run_end"],
};
const ALIAS_DIRECTION: Record<EventName, "out" | "in" | "check"> = {
  pre_tool_call: "out",
  pre_request: "out",
  post_tool_call: "in",
  post_response: "in",
  run_end: "check",
};
const RULE_FIELDS: Record<string, FieldType> = { matcher: "string", vendor: "string", arg: "string" };
const ALIAS_FIELDS: Record<string, FieldType> = { slugs: "string[]", public_layer_wins: "boolean", public_mailbox_domains: "string[]" };

const TOP_LEVEL_KEYS = ["hooks", "vendors", "alias", "live", "tools"];

export type RulesFormat = "toml" | "json";

/** Parses and validates a rules file's text. `file` only labels errors. */
export function parseRules(text: string, format: RulesFormat, file?: string): RulesConfig {
  let document: unknown;
  let lines: LineMap;
  if (format === "json") {
    const past = jsonNestingPastAt(text);
    if (past !== undefined)
      throw new RulesFileError(
        "rules_file_syntax",
        `objects and arrays nest deeper than ${MAX_EVENT_DEPTH} levels`,
        undefined,
        text.slice(0, past).split("\n").length,
        file,
      );
  }
  try {
    document = format === "toml" ? parseToml(text) : JSON.parse(text);
    lines = format === "toml" ? tomlLines(text) : jsonLines(text);
  } catch (error) {
    if (error instanceof TomlError) throw new RulesFileError("rules_file_syntax", firstLine(error.message), undefined, error.line, file);
    const message = error instanceof Error ? error.message : String(error);
    throw new RulesFileError("rules_file_syntax", message, undefined, jsonErrorLine(text, message), file);
  }
  return new Validator(lines, file).config(document);
}

const firstLine = (message: string) => message.split("\n")[0]!;

function jsonErrorLine(text: string, message: string): number | undefined {
  const position = /position (\d+)/.exec(message);
  if (position) return text.slice(0, Number(position[1])).split("\n").length;
  const line = /line (\d+)/.exec(message);
  return line ? Number(line[1]) : undefined;
}

class Validator {
  constructor(
    readonly lines: LineMap,
    readonly file: string | undefined,
  ) {}

  fail(code: RulesFileErrorCode, path: KeyPath, message: string): never {
    throw new RulesFileError(code, message, formatPath(path), this.lines.lineOf(path), this.file);
  }

  table(value: unknown, path: KeyPath): Record<string, unknown> {
    if (value === null || typeof value !== "object" || Array.isArray(value)) this.fail("rules_wrong_type", path, "must be a table");
    return value as Record<string, unknown>;
  }

  field(value: unknown, type: FieldType, path: KeyPath): void {
    const ok =
      type === "string"
        ? typeof value === "string"
        : type === "number"
          ? typeof value === "number" && Number.isFinite(value) && value > 0
          : type === "boolean"
            ? typeof value === "boolean"
            : type === "string[]"
              ? Array.isArray(value) && value.every((item) => typeof item === "string")
              : value !== null &&
                typeof value === "object" &&
                !Array.isArray(value) &&
                Object.values(value).every((item) => typeof item === "string");
    if (!ok) {
      const expected = { string: "a string", number: "a positive number", boolean: "true or false", "string[]": "a list of strings" };
      this.fail("rules_wrong_type", path, `must be ${type === "string-table" ? "a table of strings" : expected[type]}`);
    }
  }

  fields(table: Record<string, unknown>, allowed: Record<string, FieldType>, path: KeyPath, what: string): void {
    for (const [key, value] of Object.entries(table)) {
      const type = own(allowed, key);
      if (!type) this.fail("rules_unknown_key", [...path, key], `unknown key in ${what} (allowed: ${Object.keys(allowed).join(", ")})`);
      this.field(value, type, [...path, key]);
    }
  }

  config(document: unknown): RulesConfig {
    const root = this.table(document, []);
    const config: RulesConfig = { rules: [], vendors: {} };
    for (const key of Object.keys(root)) {
      if (!TOP_LEVEL_KEYS.includes(key))
        this.fail("rules_unknown_key", [key], `unknown top-level key (allowed: ${TOP_LEVEL_KEYS.join(", ")})`);
    }
    if (root.live !== undefined || root.tools !== undefined) config.live = liveConfig(root.live, root.tools, this.lines, this.file);
    if (root.vendors !== undefined) {
      const vendors = this.table(root.vendors, ["vendors"]);
      for (const [name, pattern] of Object.entries(vendors)) {
        this.field(pattern, "string", ["vendors", name]);
        this.matcher(pattern as string, ["vendors", name]);
      }
      // Built whole, so every name is an own key (`config.vendors["__proto__"] = …` would set the prototype instead).
      config.vendors = Object.fromEntries(Object.entries(vendors)) as Record<string, string>;
    }
    if (root.alias !== undefined) {
      const alias = this.table(root.alias, ["alias"]);
      this.fields(alias, ALIAS_FIELDS, ["alias"], "[alias]");
      (alias.slugs as string[] | undefined)?.forEach((worldSlug, index) => {
        if (!/^[A-Za-z0-9_.-]{1,64}$/.test(worldSlug))
          this.fail("rules_wrong_type", ["alias", "slugs", index], "a slug is 1 to 64 letters, digits, '.', '_' or '-'");
      });
      config.alias = alias;
    }
    if (root.hooks !== undefined) {
      const hooks = this.table(root.hooks, ["hooks"]);
      for (const [eventKey, rules] of Object.entries(hooks)) {
        const event = eventNamed(eventKey);
        if (!event)
          this.fail(
            "rules_unknown_event",
            ["hooks", eventKey],
            "unknown event (pre_tool_call, post_tool_call, pre_request, post_response, run_end, or PreToolUse, PostToolUse, Stop, SessionEnd)",
          );
        if (!Array.isArray(rules)) this.fail("rules_wrong_type", ["hooks", eventKey], `must be a list of rules ([[hooks.${eventKey}]])`);
        rules.forEach((rule, index) => config.rules.push(this.rule(rule, event, ["hooks", eventKey, index])));
      }
    }
    return config;
  }

  matcher(source: string, path: KeyPath): void {
    try {
      compileMatcher(source);
    } catch (error) {
      // Matchers run on the linear-time engine: what it cannot take (backreferences, lookaround, \b) is refused here, by rule.
      this.fail(
        "rules_bad_matcher",
        path,
        `cannot be a matcher: ${error instanceof Error ? error.message : String(error)} (matchers are regular expressions run in linear time: no backreferences, lookaround or word boundaries)`,
      );
    }
  }

  rule(value: unknown, event: EventName, path: KeyPath): RuleSpec {
    const table = this.table(value, path);
    const { handlers, ...rest } = table;
    this.fields(rest, RULE_FIELDS, path, "a rule");
    if (typeof rest.matcher === "string") this.matcher(rest.matcher, [...path, "matcher"]);
    if (handlers === undefined) this.fail("rules_missing_key", [...path, "handlers"], "a rule needs a list of handlers");
    if (!Array.isArray(handlers) || handlers.length === 0)
      this.fail("rules_wrong_type", [...path, "handlers"], "must be a non-empty list of handler tables");
    const specs = handlers.map((handler, index) => this.handler(handler, event, [...path, "handlers", index]));
    const aliases = specs.map((spec, index) => (spec.type === "alias" ? index : -1)).filter((index) => index >= 0);
    if (aliases.length > 1)
      this.fail(
        "rules_two_alias_handlers",
        [...path, "handlers", aliases[1]!],
        "a rule may hold one alias handler (two would both rewrite the same event)",
      );
    return {
      event,
      matcher: (rest.matcher as string | undefined) ?? "",
      vendor: rest.vendor as string | undefined,
      arg: rest.arg as string | undefined,
      handlers: specs,
    };
  }

  handler(value: unknown, event: EventName, path: KeyPath): HandlerSpec {
    const table = this.table(value, path);
    if (table.type === undefined) this.fail("rules_missing_key", [...path, "type"], "a handler needs a type");
    this.field(table.type, "string", [...path, "type"]);
    const type = table.type as HandlerType;
    const shape = own(HANDLER_FIELDS, type);
    if (!shape)
      this.fail("rules_unknown_handler", [...path, "type"], `unknown handler type "${type}" (${Object.keys(HANDLER_FIELDS).join(", ")})`);
    const allowedOn = own(ALLOWED_EVENTS, type);
    if (allowedOn && !allowedOn.includes(event))
      this.fail("rules_handler_not_allowed", [...path, "type"], `a ${type} handler cannot run on ${event} (only ${allowedOn.join(", ")})`);
    this.fields(table, { ...COMMON_FIELDS, ...shape.fields }, path, `a ${type} handler`);
    for (const key of shape.required) {
      if (table[key] === undefined) this.fail("rules_missing_key", [...path, key], `a ${type} handler needs ${key}`);
    }
    if (type === "http") this.headerEnv(table, path);
    if (type === "alias") this.aliasFields(table, event, path);
    if (type === "callable" && !/^[^#]+(#[A-Za-z_$][\w$]*)?$/.test(table.target as string))
      this.fail("rules_wrong_type", [...path, "target"], 'must be "<file>#<export>" (for example "./guards.mjs#check")');
    return { ...table, at: { path: formatPath(path), line: this.lines.lineOf(path) } } as HandlerSpec;
  }

  /** The alias door's direction follows the event; the fields may only say so, not turn it round. */
  aliasFields(table: Record<string, unknown>, event: EventName, path: KeyPath): void {
    const direction = ALIAS_DIRECTION[event];
    if (table.direction !== undefined && table.direction !== direction)
      this.fail("rules_wrong_type", [...path, "direction"], `on ${event} the alias door's direction is "${direction}"`);
    if (table.check !== undefined && (event !== "run_end" || table.check !== "outgoing"))
      this.fail("rules_wrong_type", [...path, "check"], 'check = "outgoing" belongs on run_end (it scans the report and artifacts)');
    if (table.args !== undefined && (event !== "post_tool_call" || (table.args !== "keep" && table.args !== "alias")))
      this.fail("rules_wrong_type", [...path, "args"], 'args is "keep" or "alias", on post_tool_call');
  }

  /** `$VAR` in a header value may name only what `allowed_env` lists: a file cannot read the environment by accident. */
  headerEnv(table: Record<string, unknown>, path: KeyPath): void {
    const allowed = new Set((table.allowed_env as string[] | undefined) ?? []);
    for (const [header, value] of Object.entries((table.headers as Record<string, string> | undefined) ?? {})) {
      for (const name of envNames(value)) {
        if (!allowed.has(name))
          this.fail("rules_env_not_allowed", [...path, "headers", header], `$${name} is not listed in this handler's allowed_env`);
      }
    }
  }
}

/** The door's options from a file's [alias] table. */
export function aliasOptionsOf(alias: RulesConfig["alias"], key?: string): AliasOptions {
  return {
    ...(key === undefined ? {} : { key }),
    slugs: alias?.slugs,
    publicLayerWins: alias?.public_layer_wins,
    publicMailboxDomains: alias?.public_mailbox_domains,
  };
}

/** The handler's timeout in seconds, or undefined for none. */
export function defaultTimeoutSeconds(type: HandlerType | "function", event: EventName): number | undefined {
  if (event === "run_end") return 120;
  // A callable too: one that never settles would hold the call until the agent's own hook timeout let it through.
  if (type === "command" || type === "callable") return 60;
  if (type === "http") return 30;
  return undefined;
}
