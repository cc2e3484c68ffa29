// A declared tool's input: the `type[?][: description]` shorthand or a JSON schema
// table, checked on every call (before any request), and the tool's definition in
// the shapes agent loops send to a model (OpenAI's function tool, Anthropic's tool).
import { Validator, type OutputUnit } from "@cfworker/json-schema";
import type { ToolInput } from "../events.ts";
import { LiveToolError } from "./errors.ts";

export type JsonSchema = Record<string, unknown>;

/** The schema of a tool's input: always an object schema. */
export interface InputSchema extends JsonSchema {
  type: "object";
  properties: Record<string, JsonSchema>;
  required?: string[];
}

const SHORTHAND = /^\s*([a-z]+)(\[\])?(\?)?\s*(?::\s*([\s\S]*?))?\s*$/;
export const SHORTHAND_TYPES = ["string", "integer", "number", "boolean", "object", "array"] as const;

/** One field's shorthand (`"integer?: At most this many."`) as a property schema; undefined when it is not one. */
export function shorthandProperty(text: string): { schema: JsonSchema; optional: boolean } | undefined {
  const match = SHORTHAND.exec(text);
  if (!match) return undefined;
  const [, type, list, optional, description] = match;
  if (!(SHORTHAND_TYPES as readonly string[]).includes(type!) || (list && (type === "array" || type === "object"))) return undefined;
  const item: JsonSchema = { type };
  const schema: JsonSchema = list ? { type: "array", items: item } : item;
  if (description) schema.description = description;
  return { schema, optional: optional === "?" };
}

/** The fields a schema names (its top-level properties). */
export const fieldsOf = (schema: InputSchema): string[] => Object.keys(schema.properties);

/** Checks a call's input against the tool's schema (compiled once per tool). */
export class InputChecker {
  readonly #validator: Validator;
  readonly #plain: PlainSchema | undefined;
  constructor(
    readonly tool: string,
    schema: InputSchema,
  ) {
    this.#validator = new Validator(schema, "2020-12", false);
    this.#plain = plainSchema(schema);
  }

  /** Throws live_input_invalid naming every field that is missing or wrong. */
  check(input: ToolInput): void {
    // The validator builds its whole report even for a valid input; a shorthand schema's valid input is told
    // without it, and anything else (or anything it refuses) goes to the validator, which says why.
    if (this.#plain && fitsPlain(input, this.#plain)) return;
    const result = this.#validator.validate(input);
    if (result.valid) return;
    const problems = [...new Set(result.errors.filter(isLeaf).map(describe))];
    throw new LiveToolError("live_input_invalid", `${this.tool}: the input is refused before any request: ${problems.join("; ")}`);
  }
}

/** A schema of the shorthand's kind: an object of fields of a primitive type (or lists of one), some required. */
interface PlainSchema {
  fields: Map<string, { type: string; list: boolean }>;
  required: readonly string[];
}

const PLAIN_TYPES = new Set(["string", "integer", "number", "boolean"]);
const onlyKeys = (value: object, keys: readonly string[]) => Object.keys(value).every((key) => keys.includes(key));

/** The schema as a PlainSchema, when it says no more than one (no other keyword anywhere); else undefined. */
function plainSchema(schema: InputSchema): PlainSchema | undefined {
  if (schema.type !== "object" || !onlyKeys(schema, ["type", "properties", "required", "description"])) return undefined;
  const fields = new Map<string, { type: string; list: boolean }>();
  for (const [name, property] of Object.entries(schema.properties)) {
    if (!onlyKeys(property, ["type", "items", "description"])) return undefined;
    const items = property.items as JsonSchema | undefined;
    if (property.type === "array" && items && onlyKeys(items, ["type"]) && PLAIN_TYPES.has(items.type as string))
      fields.set(name, { type: items.type as string, list: true });
    else if (items === undefined && PLAIN_TYPES.has(property.type as string))
      fields.set(name, { type: property.type as string, list: false });
    else return undefined;
  }
  return { fields, required: schema.required ?? [] };
}

const isOfType = (value: unknown, type: string) =>
  type === "string"
    ? typeof value === "string"
    : type === "boolean"
      ? typeof value === "boolean"
      : type === "integer"
        ? Number.isInteger(value)
        : Number.isFinite(value);

/** Whether the input certainly satisfies the schema: each required field present, each field of its type. */
function fitsPlain(input: ToolInput, schema: PlainSchema): boolean {
  if (input === null || typeof input !== "object" || Array.isArray(input)) return false;
  for (const name of schema.required) if (!Object.hasOwn(input, name)) return false;
  for (const name of Object.keys(input)) {
    const field = schema.fields.get(name);
    if (!field) continue;
    const value = input[name];
    if (!field.list) {
      if (!isOfType(value, field.type)) return false;
      continue;
    }
    if (!Array.isArray(value)) return false;
    // Every index, holes too (the validator reads each item, and refuses an absent one).
    for (let index = 0; index < value.length; index++) if (!isOfType(value[index], field.type)) return false;
  }
  return true;
}

/** Errors that say what is wrong, not that a parent schema failed because a child did. */
const isLeaf = (unit: OutputUnit) => !["properties", "items", "prefixItems", "allOf", "anyOf", "oneOf", "$ref"].includes(unit.keyword);

function describe(unit: OutputUnit): string {
  const required = /required property "(.+)"/.exec(unit.error);
  if (unit.keyword === "required" && required) return `missing required field "${fieldPath(unit.instanceLocation, required[1]!)}"`;
  return `${fieldPath(unit.instanceLocation) || "the input"}: ${unit.error.replace(/^Instance /, "")}`;
}

function fieldPath(location: string, child?: string): string {
  const parts = location.replace(/^#\/?/, "").split("/").filter(Boolean).map(decodeURIComponent);
  if (child !== undefined) parts.push(child);
  return parts.join(".");
}

/** The input with each absent field that has a default given that default (a default never replaces a value). */
export function withDefaults(input: ToolInput, defaults: Readonly<Record<string, unknown>>): ToolInput {
  const filled: ToolInput = { ...input };
  for (const [field, value] of Object.entries(defaults)) {
    if (filled[field] === undefined) filled[field] = structuredClone(value);
  }
  return filled;
}

export type DefinitionShape = "openai" | "anthropic";

export interface OpenAiToolDefinition {
  type: "function";
  function: { name: string; description?: string; parameters: InputSchema };
}

export interface AnthropicToolDefinition {
  name: string;
  description?: string;
  input_schema: InputSchema;
}

/** A tool as a model is told of it: OpenAI's function tool (the default) or Anthropic's Messages tool. */
export function toolDefinition(
  tool: { name: string; description?: string; input: InputSchema },
  shape: DefinitionShape,
): OpenAiToolDefinition | AnthropicToolDefinition {
  const description = tool.description === undefined ? {} : { description: tool.description };
  const schema = structuredClone(tool.input);
  if (shape === "anthropic") return { name: tool.name, ...description, input_schema: schema };
  if (shape === "openai") return { type: "function", function: { name: tool.name, ...description, parameters: schema } };
  throw new TypeError(`toolDefinitions: unknown shape ${JSON.stringify(shape)} (openai or anthropic)`);
}
