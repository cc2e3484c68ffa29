// `[live]` and `[tools.<name>]` of a rules file, and connector files, validated when the
// run starts. Every mistake is a RulesFileError naming the key path and its line: a hole
// naming no input field, an env name outside allowed_env, a pattern or JSONPath that
// does not compile. Runtime-neutral: reading the connector file is the host's part.
import { Validator } from "@cfworker/json-schema";
import { parse as parseToml, TomlError } from "smol-toml";
import { envNames } from "../env.ts";
import { RulesFileError, type RulesFileErrorCode } from "../errors.ts";
import { own } from "../events.ts";
import { formatPath, jsonLines, tomlLines, type KeyPath, type LineMap } from "../locate.ts";
import { compileJsonPath } from "./jsonpath.ts";
import type { FieldMap, FieldSource, ParseSpec } from "./parse.ts";
import { shorthandProperty, SHORTHAND_TYPES, type InputSchema, type JsonSchema } from "./schema.ts";
import { holesIn, holesOf, urlTemplate, type UrlTemplate } from "./template.ts";

/** A response is read up to this many bytes unless a tool says otherwise. */
export const DEFAULT_MAX_BYTES = 1024 * 1024;
/** The most a tool may ask to read of one response. */
export const MAX_LIVE_BYTES = 64 * 1024 * 1024;
/** Seconds a request may take unless [live] or the tool says otherwise. */
export const DEFAULT_LIVE_TIMEOUT = 30;

export interface LiveSettings {
  /** JSON-lines file, one line per call; `{run_id}` and `{run_dir}` are filled in. */
  record?: string;
  /** Answer every tool from this recording instead of the network ("" is off). */
  replay?: string;
  /** The only environment names a tool or connector may read. */
  allowed_env: string[];
  /** Seconds per request. */
  timeout: number;
  /** Whether a URL the input chose may reach a private, loopback or link-local address (false unless set). */
  allow_private?: boolean;
}

export interface Located {
  /** Where it is in the file, for errors raised while building or calling it. */
  at: { path: string; line?: number; file?: string };
}

/** Auth of a connector: a header, a bearer token or a query key, its value from one env name. */
export type ConnectorAuth =
  { type: "header"; name: string; env: string } | { type: "bearer"; env: string } | { type: "query"; name: string; env: string };

export interface HttpRequestSpec {
  method: string;
  url: UrlTemplate;
  query: Record<string, string>;
  headers: Record<string, string>;
  body?: unknown;
  parse: ParseSpec;
  limit?: number | string;
  auth?: ConnectorAuth;
}

interface ToolCommon extends Located {
  name: string;
  description?: string;
  vendor?: string;
  /** Seconds; [live].timeout when omitted. */
  timeout?: number;
  max_bytes: number;
}

interface WithInput {
  input: InputSchema;
  defaults: Record<string, unknown>;
}

export type HttpTool = ToolCommon & WithInput & { kind: "http"; request: HttpRequestSpec };
export type CallableTool = ToolCommon & WithInput & { kind: "callable"; target: string };
/** A connector operation, before the host has read the connector file. */
export type ConnectorRef = Omit<ToolCommon, "max_bytes"> & {
  kind: "connector";
  connector: string;
  operation: string;
  defaults: Record<string, unknown>;
  /** Unset: the operation's. */
  max_bytes?: number;
};
export type ToolSpec = HttpTool | CallableTool | ConnectorRef;
/** A tool ready to build: a connector reference resolved to the HTTP request it makes. */
export type ResolvedTool = HttpTool | CallableTool;

export interface LiveConfig {
  live: LiveSettings;
  tools: ToolSpec[];
}

export interface ConnectorSpec {
  file: string;
  base_url: string;
  headers: Record<string, string>;
  auth?: ConnectorAuth;
  operations: Record<string, HttpTool>;
}

const TOOL_NAME = /^[A-Za-z0-9_-]{1,64}$/;
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE"];
const PARSE_MODES = ["json", "regex", "text"];
const LIVE_KEYS = ["record", "replay", "allowed_env", "timeout", "allow_private"];
const COMMON_KEYS = ["description", "vendor", "timeout", "max_bytes", "defaults"];
const HTTP_KEYS = ["input", "method", "query", "headers", "body", "parse", "results", "fields", "pattern", "limit"];
const CONNECTOR_KEYS = ["base_url", "headers", "auth", "operations"];

/** Validates `[live]` and `[tools]` (either may be absent). */
export function liveConfig(live: unknown, tools: unknown, lines: LineMap, file?: string): LiveConfig {
  const check = new LiveValidator(lines, file);
  const settings = check.settings(live);
  const specs: ToolSpec[] = [];
  if (tools !== undefined) {
    for (const [name, table] of Object.entries(check.table(tools, ["tools"]))) specs.push(check.tool(name, table, settings));
  }
  return { live: settings, tools: specs };
}

/** Parses and validates a connector file (TOML, or JSON when `format` says so); every env name it reads must be in allowed_env. */
export function parseConnector(text: string, format: "toml" | "json", file: string, live: LiveSettings): ConnectorSpec {
  let document: unknown;
  let lines: LineMap;
  try {
    document = format === "toml" ? parseToml(text) : JSON.parse(text);
    lines = format === "toml" ? tomlLines(text) : jsonLines(text);
  } catch (error) {
    const line = error instanceof TomlError ? error.line : undefined;
    throw new RulesFileError(
      "rules_file_syntax",
      (error instanceof Error ? error.message : String(error)).split("\n")[0]!,
      undefined,
      line,
      file,
    );
  }
  return new LiveValidator(lines, file).connector(document, live);
}

/** The HTTP tool a connector reference stands for: the operation's request, with the tool's own description, defaults and bounds. */
export function resolveConnector(ref: ConnectorRef, connector: ConnectorSpec): HttpTool {
  const operation = connector.operations[ref.operation];
  if (!operation)
    throw new RulesFileError(
      "rules_unknown_key",
      `${connector.file} has no operation "${ref.operation}" (operations: ${Object.keys(connector.operations).join(", ") || "none"})`,
      `${ref.at.path}.operation`,
      ref.at.line,
      ref.at.file,
    );
  const defaults = { ...operation.defaults, ...ref.defaults };
  const input: InputSchema = { ...operation.input, properties: { ...operation.input.properties } };
  for (const [field, value] of Object.entries(ref.defaults)) {
    const fail = (code: RulesFileErrorCode, why: string) =>
      new RulesFileError(code, why, `${ref.at.path}.defaults.${field}`, ref.at.line, ref.at.file);
    const schema = own(input.properties, field);
    if (!schema) throw fail("rules_unknown_key", `names no input field of ${ref.operation}`);
    if (!new Validator(schema as never, "2020-12").validate(value).valid)
      throw fail("rules_wrong_type", `does not match the field's schema ${JSON.stringify(schema)}`);
    input.properties[field] = { ...schema, default: value };
  }
  return {
    ...operation,
    input,
    name: ref.name,
    at: ref.at,
    defaults,
    description: ref.description ?? operation.description,
    vendor: ref.vendor,
    timeout: ref.timeout ?? operation.timeout,
    max_bytes: ref.max_bytes ?? operation.max_bytes,
  };
}

class LiveValidator {
  constructor(
    readonly lines: LineMap,
    readonly file: string | undefined,
  ) {}

  fail(code: RulesFileErrorCode, path: KeyPath, message: string): never {
    throw new RulesFileError(code, message, formatPath(path), this.lines.lineOf(path), this.file);
  }

  located(path: KeyPath): Located["at"] {
    return { path: formatPath(path), line: this.lines.lineOf(path), ...(this.file === undefined ? {} : { file: this.file }) };
  }

  table(value: unknown, path: KeyPath): Record<string, unknown> {
    if (value === null || typeof value !== "object" || Array.isArray(value)) this.fail("rules_wrong_type", path, "must be a table");
    return value as Record<string, unknown>;
  }

  known(table: Record<string, unknown>, allowed: readonly string[], path: KeyPath, what: string): void {
    for (const key of Object.keys(table)) {
      if (!allowed.includes(key)) this.fail("rules_unknown_key", [...path, key], `unknown key in ${what} (allowed: ${allowed.join(", ")})`);
    }
  }

  string(value: unknown, path: KeyPath): string | undefined {
    if (value !== undefined && typeof value !== "string") this.fail("rules_wrong_type", path, "must be a string");
    return value;
  }

  positive(value: unknown, path: KeyPath, integer = false): number | undefined {
    if (value === undefined) return undefined;
    if (typeof value !== "number" || !Number.isFinite(value) || value <= 0 || (integer && !Number.isInteger(value)))
      this.fail("rules_wrong_type", path, `must be a positive ${integer ? "whole number" : "number"}`);
    return value;
  }

  strings(value: unknown, path: KeyPath): Record<string, string> {
    if (value === undefined) return {};
    const table = this.table(value, path);
    for (const [key, item] of Object.entries(table)) this.string(item, [...path, key]);
    return table as Record<string, string>;
  }

  settings(value: unknown): LiveSettings {
    if (value === undefined) return { allowed_env: [], timeout: DEFAULT_LIVE_TIMEOUT };
    const table = this.table(value, ["live"]);
    this.known(table, LIVE_KEYS, ["live"], "[live]");
    const allowed = table.allowed_env ?? [];
    if (!Array.isArray(allowed) || !allowed.every((name) => typeof name === "string"))
      this.fail("rules_wrong_type", ["live", "allowed_env"], "must be a list of strings");
    allowed.forEach((name: string, index) => {
      if (!ENV_NAME.test(name))
        this.fail("rules_wrong_type", ["live", "allowed_env", index], `${JSON.stringify(name)} is not an environment name`);
    });
    const replay = this.string(table.replay, ["live", "replay"]);
    return {
      record: this.string(table.record, ["live", "record"]) || undefined,
      replay: replay === "" ? undefined : replay,
      allowed_env: allowed as string[],
      timeout: this.positive(table.timeout, ["live", "timeout"]) ?? DEFAULT_LIVE_TIMEOUT,
      ...(this.boolean(table.allow_private, ["live", "allow_private"]) ? { allow_private: true } : {}),
    };
  }

  boolean(value: unknown, path: KeyPath): boolean | undefined {
    if (value !== undefined && typeof value !== "boolean") this.fail("rules_wrong_type", path, "must be true or false");
    return value as boolean | undefined;
  }

  tool(name: string, value: unknown, live: LiveSettings): ToolSpec {
    const path = ["tools", name];
    if (!TOOL_NAME.test(name))
      this.fail("rules_wrong_type", path, "a tool name is 1 to 64 letters, digits, '_' or '-' (what OpenAI and Anthropic accept)");
    const table = this.table(value, path);
    const kinds = (["url", "callable", "connector"] as const).filter((key) => table[key] !== undefined);
    if (kinds.length === 0) this.fail("rules_missing_key", path, "a tool needs url (an HTTP tool), callable or connector");
    if (kinds.length > 1)
      this.fail("rules_wrong_type", [...path, kinds[1]!], `a tool is one of url, callable or connector, not ${kinds.join(" and ")}`);
    const common = {
      name,
      at: this.located(path),
      description: this.string(table.description, [...path, "description"]),
      vendor: this.string(table.vendor, [...path, "vendor"]),
      timeout: this.positive(table.timeout, [...path, "timeout"]),
    };
    const maxBytes = this.maxBytes(table.max_bytes, [...path, "max_bytes"]);
    if (kinds[0] === "connector") {
      this.known(table, [...COMMON_KEYS, "connector", "operation"], path, "a connector tool");
      const operation = this.string(table.operation, [...path, "operation"]);
      if (operation === undefined) this.fail("rules_missing_key", [...path, "operation"], "a connector tool names its operation");
      const defaults = table.defaults === undefined ? {} : this.table(table.defaults, [...path, "defaults"]);
      const connector = this.string(table.connector, [...path, "connector"])!;
      return {
        ...common,
        kind: "connector",
        connector,
        operation,
        defaults,
        ...(table.max_bytes === undefined ? {} : { max_bytes: maxBytes }),
      };
    }
    const input = this.input(table.input, [...path, "input"]);
    const defaults = this.defaults(table.defaults, input, [...path, "defaults"]);
    if (kinds[0] === "callable") {
      this.known(table, [...COMMON_KEYS, "input", "callable"], path, "a callable tool");
      const target = this.string(table.callable, [...path, "callable"])!;
      if (!/^[^#]+(#[A-Za-z_$][\w$]*)?$/.test(target))
        this.fail("rules_wrong_type", [...path, "callable"], 'must be "<file>#<export>" (for example "./tools.mjs#lookup")');
      return { ...common, max_bytes: maxBytes, kind: "callable", input, defaults, target };
    }
    this.known(table, [...COMMON_KEYS, ...HTTP_KEYS, "url"], path, "an HTTP tool");
    const request = this.request(table, path, input, live, { key: "url", text: this.string(table.url, [...path, "url"])! });
    return { ...common, max_bytes: maxBytes, kind: "http", input, defaults, request };
  }

  maxBytes(value: unknown, path: KeyPath): number {
    const bytes = this.positive(value, path, true) ?? DEFAULT_MAX_BYTES;
    if (bytes > MAX_LIVE_BYTES) this.fail("rules_wrong_type", path, `is at most ${MAX_LIVE_BYTES} (64 MiB)`);
    return bytes;
  }

  /** `input`: a table of `type[?][: description]` shorthands, or one JSON schema table with `properties`. */
  input(value: unknown, path: KeyPath): InputSchema {
    if (value === undefined) return { type: "object", properties: {} };
    const table = this.table(value, path);
    if (table.type === "object" && table.properties !== undefined) {
      const properties = this.table(table.properties, [...path, "properties"]);
      for (const [field, schema] of Object.entries(properties)) this.table(schema, [...path, "properties", field]);
      const required = table.required ?? [];
      if (!Array.isArray(required) || !required.every((field) => typeof field === "string" && field in properties))
        this.fail("rules_wrong_type", [...path, "required"], "must list fields of properties");
      return table as InputSchema;
    }
    const properties: Record<string, JsonSchema> = {};
    const required: string[] = [];
    for (const [field, text] of Object.entries(table)) {
      const parsed = typeof text === "string" ? shorthandProperty(text) : undefined;
      if (!parsed)
        this.fail(
          "rules_wrong_type",
          [...path, field],
          `must be "type[?][: description]" with type ${SHORTHAND_TYPES.join(", ")} (or string[] and the like), or input must be a JSON schema table`,
        );
      properties[field] = parsed.schema;
      if (!parsed.optional) required.push(field);
    }
    return { type: "object", properties, ...(required.length ? { required } : {}) };
  }

  defaults(value: unknown, input: InputSchema, path: KeyPath): Record<string, unknown> {
    if (value === undefined) return {};
    const table = this.table(value, path);
    for (const [field, item] of Object.entries(table)) {
      const schema = own(input.properties, field);
      if (!schema)
        this.fail("rules_unknown_key", [...path, field], `names no input field (fields: ${Object.keys(input.properties).join(", ")})`);
      if (!new Validator(schema as never, "2020-12").validate(item).valid)
        this.fail("rules_wrong_type", [...path, field], `does not match the field's schema ${JSON.stringify(schema)}`);
      if (input.properties[field]) input.properties[field] = { ...schema, default: item };
    }
    return table;
  }

  request(
    table: Record<string, unknown>,
    path: KeyPath,
    input: InputSchema,
    live: LiveSettings,
    url: { key: "url" | "path"; text: string; base?: string; headers?: Record<string, string>; auth?: ConnectorAuth },
  ): HttpRequestSpec {
    const method = (this.string(table.method, [...path, "method"]) ?? "GET").toUpperCase();
    if (!METHODS.includes(method)) this.fail("rules_wrong_type", [...path, "method"], `must be one of ${METHODS.join(", ")}`);
    if (table.body !== undefined && method === "GET")
      this.fail("rules_wrong_type", [...path, "body"], "a GET request has no body (set method)");
    const template = urlTemplate((url.base ?? "") + url.text);
    if (template.whole === undefined) {
      let sample: URL | undefined;
      try {
        sample = new URL(template.text.replace(/\{[A-Za-z_][A-Za-z0-9_]*\}/g, "x"));
      } catch {
        sample = undefined;
      }
      if (!sample || (sample.protocol !== "http:" && sample.protocol !== "https:"))
        this.fail("rules_wrong_type", [...path, url.key], "must be an http or https URL template (or one hole, such as {url})");
    }
    // A connector's base_url takes no holes, so it names its origin whatever the path: a path hole right after it
    // (`path = "{p}"`) would otherwise extend the host (`api.example.com` + `.evil.test`).
    if (url.base !== undefined && URL.canParse(url.base)) template.fixedOrigin = new URL(url.base).origin;
    const query = this.strings(table.query, [...path, "query"]);
    const own = this.strings(table.headers, [...path, "headers"]);
    this.envAllowed(own, live, [...path, "headers"]);
    const headers = { ...url.headers, ...own };
    if (template.fixedOrigin === undefined) this.secretsBound(headers, url.auth, path, url.key);
    const limit = table.limit;
    if (limit !== undefined && typeof limit !== "string" && !(typeof limit === "number" && Number.isInteger(limit) && limit >= 0))
      this.fail("rules_wrong_type", [...path, "limit"], 'must be a whole number or a template such as "{max_results}"');
    const parse = this.parse(table, path, limit !== undefined);
    const fields = Object.keys(input.properties);
    const holes: [KeyPath, string[]][] = [
      [[...path, url.key], holesOf(url.text)],
      ...Object.entries(query).map(([name, text]): [KeyPath, string[]] => [[...path, "query", name], holesOf(text)]),
      [[...path, "body"], holesIn(table.body)],
      [[...path, "limit"], typeof limit === "string" ? holesOf(limit) : []],
    ];
    for (const [at, names] of holes) {
      for (const name of names) {
        if (!fields.includes(name))
          this.fail("rules_bad_template", at, `the hole {${name}} names no input field (fields: ${fields.join(", ") || "none"})`);
      }
    }
    return { method, url: template, query, headers, body: table.body, parse, limit: limit as number | string | undefined, auth: url.auth };
  }

  parse(table: Record<string, unknown>, path: KeyPath, hasLimit: boolean): ParseSpec {
    const mode = this.string(table.parse, [...path, "parse"]) ?? "json";
    if (!PARSE_MODES.includes(mode)) this.fail("rules_wrong_type", [...path, "parse"], `must be one of ${PARSE_MODES.join(", ")}`);
    const unused = (keys: string[]) => {
      for (const key of keys)
        if (table[key] !== undefined) this.fail("rules_wrong_type", [...path, key], `is not used with parse = "${mode}"`);
    };
    if (mode === "text") {
      unused(["results", "fields", "pattern", "limit"]);
      return { mode: "text" };
    }
    const fields = table.fields === undefined ? undefined : this.fieldMap(table.fields, [...path, "fields"]);
    if (mode === "regex") {
      unused(["results"]);
      const source = this.string(table.pattern, [...path, "pattern"]);
      if (source === undefined) this.fail("rules_missing_key", [...path, "pattern"], 'parse = "regex" needs a pattern with named groups');
      let pattern: RegExp;
      try {
        pattern = new RegExp(source, "gs");
      } catch (error) {
        this.fail(
          "rules_bad_pattern",
          [...path, "pattern"],
          `not a regular expression: ${error instanceof Error ? error.message : String(error)}`,
        );
      }
      if (!/\(\?<[A-Za-z_$][\w$]*>/.test(source))
        this.fail("rules_bad_pattern", [...path, "pattern"], "needs at least one named group, (?<name>...)");
      return { mode: "regex", pattern, ...(fields ? { fields } : {}) };
    }
    unused(["pattern"]);
    const results = this.string(table.results, [...path, "results"]);
    if (results === undefined && (fields || hasLimit))
      this.fail("rules_missing_key", [...path, "results"], "fields and limit apply to results: a JSONPath such as $.items[*]");
    if (results !== undefined) this.jsonPath(results, [...path, "results"]);
    for (const [name, source] of Object.entries(fields ?? {})) {
      const item = typeof source === "string" ? source : source.from;
      if (item.startsWith("$")) this.jsonPath(item, [...path, "fields", name]);
    }
    return { mode: "json", ...(results === undefined ? {} : { results }), ...(fields ? { fields } : {}) };
  }

  jsonPath(path: string, at: KeyPath): void {
    try {
      // Parsed once here, and kept for the calls.
      compileJsonPath(path);
    } catch (error) {
      this.fail("rules_bad_jsonpath", at, `not a JSONPath (RFC 9535): ${error instanceof Error ? error.message : String(error)}`);
    }
  }

  fieldMap(value: unknown, path: KeyPath): FieldMap {
    const table = this.table(value, path);
    const fields: FieldMap = {};
    for (const [name, source] of Object.entries(table)) {
      if (typeof source === "string") {
        fields[name] = source;
        continue;
      }
      const unwrap = this.table(source, [...path, name]);
      this.known(unwrap, ["from", "query_param"], [...path, name], "a field");
      if (typeof unwrap.from !== "string" || typeof unwrap.query_param !== "string")
        this.fail("rules_wrong_type", [...path, name], 'a field is an item path, or { from = "<path>", query_param = "<name>" }');
      fields[name] = unwrap as FieldSource;
    }
    return fields;
  }

  /**
   * A tool whose URL fixes no origin (`{url}`, or a hole before the host ends) sends its request wherever the input
   * says, and the input is the model's: a variable in its headers or auth would go to any host a prompt names.
   */
  secretsBound(headers: Record<string, string>, auth: ConnectorAuth | undefined, path: KeyPath, urlKey: string): void {
    const why = "the input chooses where it goes (its URL fixes no origin before the first hole), so it may read no variable";
    for (const [header, value] of Object.entries(headers)) {
      const name = envNames(value)[0];
      if (name !== undefined) this.fail("rules_env_not_allowed", [...path, "headers", header], `$${name}: ${why}`);
    }
    if (auth) this.fail("rules_env_not_allowed", [...path, urlKey], `${auth.env}: ${why}`);
  }

  envAllowed(headers: Record<string, string>, live: LiveSettings, path: KeyPath): void {
    for (const [header, value] of Object.entries(headers)) {
      for (const name of envNames(value)) {
        if (!live.allowed_env.includes(name))
          this.fail("rules_env_not_allowed", [...path, header], `$${name} is not listed in [live].allowed_env`);
      }
    }
  }

  connector(document: unknown, live: LiveSettings): ConnectorSpec {
    const root = this.table(document, []);
    this.known(root, CONNECTOR_KEYS, [], "a connector file");
    const base = this.string(root.base_url, ["base_url"]);
    if (base === undefined) this.fail("rules_missing_key", ["base_url"], "a connector needs base_url");
    if (holesOf(base).length) this.fail("rules_bad_template", ["base_url"], "base_url takes no holes");
    const headers = this.strings(root.headers, ["headers"]);
    this.envAllowed(headers, live, ["headers"]);
    const auth = root.auth === undefined ? undefined : this.auth(root.auth, live);
    const operations: Record<string, HttpTool> = {};
    const table = this.table(root.operations ?? {}, ["operations"]);
    for (const [name, value] of Object.entries(table)) {
      const path = ["operations", name];
      const operation = this.table(value, path);
      this.known(operation, [...COMMON_KEYS, ...HTTP_KEYS, "path"], path, "an operation");
      const text = this.string(operation.path, [...path, "path"]) ?? "";
      const input = this.input(operation.input, [...path, "input"]);
      operations[name] = {
        kind: "http",
        name,
        at: this.located(path),
        description: this.string(operation.description, [...path, "description"]),
        timeout: this.positive(operation.timeout, [...path, "timeout"]),
        max_bytes: this.maxBytes(operation.max_bytes, [...path, "max_bytes"]),
        input,
        defaults: this.defaults(operation.defaults, input, [...path, "defaults"]),
        request: this.request(operation, path, input, live, { key: "path", text, base: base.replace(/\/+$/, ""), headers, auth }),
      };
    }
    if (Object.keys(operations).length === 0)
      this.fail("rules_missing_key", ["operations"], "a connector needs at least one [operations.<name>]");
    return { file: this.file ?? "connector", base_url: base, headers, auth, operations };
  }

  auth(value: unknown, live: LiveSettings): ConnectorAuth {
    const table = this.table(value, ["auth"]);
    const type = this.string(table.type, ["auth", "type"]);
    if (type !== "header" && type !== "bearer" && type !== "query")
      this.fail("rules_wrong_type", ["auth", "type"], "must be header, bearer or query");
    this.known(table, type === "bearer" ? ["type", "env"] : ["type", "name", "env"], ["auth"], `${type} auth`);
    const env = this.string(table.env, ["auth", "env"]);
    if (env === undefined) this.fail("rules_missing_key", ["auth", "env"], "auth reads its value from one environment name");
    if (!live.allowed_env.includes(env)) this.fail("rules_env_not_allowed", ["auth", "env"], `${env} is not listed in [live].allowed_env`);
    if (type === "bearer") return { type, env };
    const name = this.string(table.name, ["auth", "name"]);
    if (name === undefined)
      this.fail("rules_missing_key", ["auth", "name"], `${type} auth names its ${type === "header" ? "header" : "query parameter"}`);
    return { type, name, env };
  }
}
