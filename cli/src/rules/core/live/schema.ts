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
  constructor(
    readonly tool: string,
    schema: InputSchema,
  ) {
    this.#validator = new Validator(schema, "2020-12", false);
  }

  /** Throws live_input_invalid naming every field that is missing or wrong. */
  check(input: ToolInput): void {
    const result = this.#validator.validate(input);
    if (result.valid) return;
    const problems = [...new Set(result.errors.filter(isLeaf).map(describe))];
    throw new LiveToolError("live_input_invalid", `${this.tool}: the input is refused before any request: ${problems.join("; ")}`);
  }
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
