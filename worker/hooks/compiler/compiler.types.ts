/**
 * Generates TypeScript declarations from a tool's upstream JSON Schemas, for
 * the editor and for a local `tsc` check. A small converter rather than
 * json-schema-to-typescript, which needs `fs` and code evaluation. Everything
 * it does not model (pattern, formats, numeric bounds, `not`, …) widens to the
 * JSON shape it constrains, never narrows it: declarations may accept a value
 * the schema rejects (the runtime validates), never the reverse.
 *
 * Kept free of Worker-only imports so Node can run it (test/tsc/typecheck.mjs).
 */

import { assembleToolDeclarations } from "../../../schema/hooks/declarations.ts";

type JsonObject = { [key: string]: unknown };

/** Deeper schemas are typed `unknown`: upstream schemas are not trusted to be small. */
const MAX_DEPTH = 32;
const INDENT = "  ";

/**
 * The most text one tool's upstream declarations may take (UTF-16 code
 * units, about bytes for schema text): generation stops as soon as it is spent.
 */
export const DECLARATIONS_MAX_CHARS = 1024 * 1024;

/** The upstream declarations would exceed DECLARATIONS_MAX_CHARS. */
export class DeclarationsTooLargeError extends Error {
  override name = "DeclarationsTooLargeError";
}

interface AliasDefinition {
  alias: string;
  schema: unknown;
}

interface Scope {
  root: unknown;
  rootName: string;
  /** Pointer ("#/$defs/a", "#/properties/b") → generated alias name. */
  aliases: Map<string, string>;
  /** Names already taken by an alias (or the root). */
  used: Set<string>;
  /** Aliases still to declare, in order: each `$defs` entry, then every other pointer a `$ref` reaches. */
  pending: AliasDefinition[];
  /** Characters of output still allowed. */
  budget: number;
}

/**
 * Declarations for one schema: `type <name> = …;` plus one alias per `$defs`
 * (and legacy `definitions`) entry, each with its description as JSDoc, and
 * one per other local pointer a `$ref` reaches. Every reference is a name, so
 * the output grows with the schema, not with the paths through its reference
 * graph; `budget` bounds it all the same.
 */
export function schemaToDeclarations(schema: unknown, name: string, budget = DECLARATIONS_MAX_CHARS): string {
  const scope = newScope(schema, name, budget);
  collectDefinitions(schema, scope);
  const out = [declare(name, schema, scope)];
  // Declaring an alias may queue more: the loop ends when every reached pointer is declared.
  for (let index = 0; index < scope.pending.length; index++) {
    const { alias, schema: definition } = scope.pending[index]!;
    out.push(declare(alias, definition, scope));
  }
  return out.join("\n");
}

/** The TypeScript type expression for one schema (exported for tests). */
export function schemaToType(schema: unknown): string {
  return typeOf(schema, newScope(schema, "unknown", DECLARATIONS_MAX_CHARS), TOP);
}

function newScope(root: unknown, rootName: string, budget: number): Scope {
  return { root, rootName, aliases: new Map(), used: new Set([rootName]), pending: [], budget };
}

function declare(alias: string, schema: unknown, scope: Scope): string {
  const head = `${jsDoc(schema, "")}type ${alias} = `;
  spend(scope, head.length + 1);
  return `${head}${typeOf(schema, scope, TOP)};`;
}

/** Charges output against the budget; every piece of text is charged once, where it is written. */
function spend(scope: Scope, chars: number): void {
  scope.budget -= chars;
  if (scope.budget < 0) throw new DeclarationsTooLargeError("the generated declarations are over the size limit");
}

const spent = (scope: Scope, text: string) => {
  spend(scope, text.length);
  return text;
};

function aliasFor(pointer: string, name: string, schema: unknown, scope: Scope): string {
  let alias = `${scope.rootName}_${identifierPart(name)}`;
  while (scope.used.has(alias)) alias += "_";
  scope.used.add(alias);
  scope.aliases.set(pointer, alias);
  scope.pending.push({ alias, schema });
  return alias;
}

function collectDefinitions(schema: unknown, scope: Scope): void {
  if (!isObject(schema)) return;
  for (const keyword of ["$defs", "definitions"]) {
    const defs = schema[keyword];
    if (!isObject(defs)) continue;
    for (const [defName, definition] of Object.entries(defs))
      aliasFor(`#/${keyword}/${escapePointer(defName)}`, defName, definition, scope);
  }
}

/** How deep the walk is (bounded by MAX_DEPTH) and how far the output is indented. */
interface Level {
  depth: number;
  indent: number;
}

const TOP: Level = { depth: 0, indent: 0 };
/** A subschema printed in place: a combinator member, array items, a followed $ref. */
const deeper = (at: Level): Level => ({ depth: at.depth + 1, indent: at.indent });
/** A subschema printed inside an object's braces. */
const nested = (at: Level): Level => ({ depth: at.depth + 1, indent: at.indent + 1 });

function typeOf(schema: unknown, scope: Scope, at: Level): string {
  // Every subschema visited costs at least a character, so the walk is bounded even where it writes little.
  spend(scope, 1);
  if (schema === true || schema === undefined) return "unknown";
  if (schema === false) return "never";
  if (!isObject(schema) || at.depth > MAX_DEPTH) return "unknown";

  const parts: string[] = [];
  if (typeof schema.$ref === "string") parts.push(refType(schema.$ref, scope));
  const own = ownType(schema, scope, at);
  if (own !== undefined) parts.push(own);
  for (const member of arrayOf(schema.allOf)) parts.push(typeOf(member, scope, deeper(at)));
  for (const keyword of ["anyOf", "oneOf"]) {
    const members = arrayOf(schema[keyword]);
    if (members.length > 0) parts.push(union(members.map((member) => typeOf(member, scope, deeper(at)))));
  }
  const known = parts.filter((part) => part !== "unknown");
  let type = known.length === 0 ? "unknown" : known.length === 1 ? known[0]! : known.map(parenthesize).join(" & ");
  // OpenAPI 3.0's `nullable`, still common in MCP servers generated from OpenAPI.
  if (schema.nullable === true && type !== "unknown") type = union([type, "null"]);
  return type;
}

/** The type from `const`, `enum` or `type` (with the keywords that refine it). */
function ownType(schema: JsonObject, scope: Scope, at: Level): string | undefined {
  if ("const" in schema) return spent(scope, literal(schema.const));
  if (Array.isArray(schema.enum)) return union(schema.enum.map((value) => spent(scope, literal(value))));
  const types = Array.isArray(schema.type) ? schema.type : typeof schema.type === "string" ? [schema.type] : undefined;
  if (types) return union(types.map((type) => typeFor(String(type), schema, scope, at)));
  if ("properties" in schema || "additionalProperties" in schema || "required" in schema) return objectType(schema, scope, at);
  if ("items" in schema || "prefixItems" in schema) return arrayType(schema, scope, at);
  return undefined;
}

function typeFor(type: string, schema: JsonObject, scope: Scope, at: Level): string {
  switch (type) {
    case "string":
      return "string";
    case "number":
    case "integer":
      return "number";
    case "boolean":
      return "boolean";
    case "null":
      return "null";
    case "array":
      return arrayType(schema, scope, at);
    case "object":
      return objectType(schema, scope, at);
    default:
      return "unknown";
  }
}

function arrayType(schema: JsonObject, scope: Scope, at: Level): string {
  const prefix = arrayOf(schema.prefixItems);
  if (prefix.length === 0) return `${parenthesize(typeOf(schema.items, scope, deeper(at)))}[]`;
  const members = prefix.map((item) => typeOf(item, scope, deeper(at)));
  // After the prefix, `items` types the rest; `items: false` closes the tuple.
  if (schema.items !== false) members.push(`...${parenthesize(typeOf(schema.items, scope, deeper(at)))}[]`);
  return `[${members.join(", ")}]`;
}

function objectType(schema: JsonObject, scope: Scope, at: Level): string {
  const properties = isObject(schema.properties) ? schema.properties : {};
  const required = new Set(arrayOf(schema.required).filter((name): name is string => typeof name === "string"));
  const pad = INDENT.repeat(at.indent + 1);
  const lines: string[] = [];
  const propertyTypes: string[] = [];
  for (const [name, propertySchema] of Object.entries(properties)) {
    const type = typeOf(propertySchema, scope, nested(at));
    const optional = !required.has(name);
    propertyTypes.push(type);
    if (optional) propertyTypes.push("undefined");
    const doc = jsDoc(propertySchema, pad);
    const key = propertyKey(name);
    spend(scope, doc.length + pad.length + key.length + 4);
    lines.push(`${doc}${pad}${key}${optional ? "?" : ""}: ${type};`);
  }
  // Required names without a property schema still exist on the object.
  for (const name of required) {
    if (!(name in properties)) lines.push(`${pad}${propertyKey(name)}: unknown;`);
  }
  const indexType = indexSignatureType(schema, scope, at, propertyTypes);
  if (indexType !== undefined) lines.push(`${pad}[key: string]: ${indexType};`);
  if (lines.length === 0) return "{}";
  return `{\n${lines.join("\n")}\n${INDENT.repeat(at.indent)}}`;
}

/**
 * Extra properties: none with `additionalProperties: false` (and no
 * patternProperties), else their type. TypeScript requires every declared
 * property to fit the index signature, so it is widened by their types.
 */
function indexSignatureType(schema: JsonObject, scope: Scope, at: Level, propertyTypes: string[]): string | undefined {
  const additional = schema.additionalProperties;
  if (additional === false && !isObject(schema.patternProperties)) return undefined;
  if (additional === undefined || additional === true || isObject(schema.patternProperties)) return "unknown";
  const type = typeOf(additional, scope, nested(at));
  if (type === "unknown" || propertyTypes.length === 0) return type;
  return union([type, ...propertyTypes]);
}

/**
 * A `$ref` is always a name, never a copy of its target: inlining would repeat
 * a target once per path to it, exponential in a reference graph that fans
 * out. `$defs` entries have their aliases already; any other local pointer
 * gets one the first time it is reached. A target that is itself only a
 * `$ref` is followed instead, so `a → b → $defs/c` is simply `c`'s alias.
 */
function refType(start: string, scope: Scope): string {
  const followed = new Set<string>();
  let ref = start;
  for (;;) {
    if (ref === "#") return scope.rootName;
    const alias = scope.aliases.get(ref);
    if (alias) return alias;
    if (!ref.startsWith("#/") || followed.has(ref)) return "unknown";
    followed.add(ref);
    const target = resolvePointer(scope.root, ref.slice(1));
    if (target === undefined || target === true) return "unknown";
    if (target === false) return "never";
    if (isObject(target) && typeof target.$ref === "string" && isOnlyRef(target)) {
      ref = target.$ref;
      continue;
    }
    return aliasFor(ref, ref.slice(2).replaceAll("/", "_"), target, scope);
  }
}

/** Keywords that do not change a schema's type: a schema with only these and `$ref` is its target. */
const ANNOTATIONS = new Set(["$ref", "$comment", "title", "description", "default", "deprecated", "examples", "readOnly", "writeOnly"]);

const isOnlyRef = (schema: JsonObject) => Object.keys(schema).every((key) => ANNOTATIONS.has(key));

function resolvePointer(root: unknown, pointer: string): unknown {
  let node: unknown = root;
  for (const raw of pointer.split("/").slice(1)) {
    const segment = decodeURIComponent(raw).replaceAll("~1", "/").replaceAll("~0", "~");
    if (Array.isArray(node)) node = node[Number(segment)];
    else if (isObject(node)) node = Object.hasOwn(node, segment) ? node[segment] : undefined;
    else return undefined;
  }
  return node;
}

/** A JSON value written as a TypeScript literal type (JSON syntax is valid type syntax). */
function literal(value: unknown): string {
  return JSON.stringify(value) ?? "unknown";
}

function union(types: string[]): string {
  // Members that are unions themselves are flattened so duplicates collapse.
  const unique = [...new Set(types.flatMap(splitUnion))];
  if (unique.includes("unknown")) return "unknown";
  const withoutNever = unique.filter((type) => type !== "never");
  if (withoutNever.length === 0) return "never";
  return withoutNever.join(" | ");
}

/** The members of a top-level union, or the type itself. */
function splitUnion(type: string): string[] {
  const members: string[] = [];
  let depth = 0;
  let start = 0;
  for (let index = 0; index < type.length; index++) {
    const char = type[index];
    if (char === '"') index = skipString(type, index);
    else if (char === "/" && type[index + 1] === "*") index = skipComment(type, index);
    else if (char === "{" || char === "[" || char === "(") depth++;
    else if (char === "}" || char === "]" || char === ")") depth--;
    else if (depth === 0 && char === "|") {
      members.push(type.slice(start, index).trim());
      start = index + 1;
    }
  }
  members.push(type.slice(start).trim());
  return members.filter((member) => member !== "");
}

/** Wraps unions and intersections so they can be followed by `[]` or joined with `&`. */
function parenthesize(type: string): string {
  return isCompound(type) ? `(${type})` : type;
}

/** True when a `|` or `&` appears at the top level: outside brackets, string literals and JSDoc. */
function isCompound(type: string): boolean {
  let depth = 0;
  for (let index = 0; index < type.length; index++) {
    const char = type[index];
    if (char === '"') {
      index = skipString(type, index);
    } else if (char === "/" && type[index + 1] === "*") {
      index = skipComment(type, index);
    } else if (char === "{" || char === "[" || char === "(") depth++;
    else if (char === "}" || char === "]" || char === ")") depth--;
    else if (depth === 0 && (char === "|" || char === "&")) return true;
  }
  return false;
}

/** Index of the "/" closing the block comment opened at `start`. */
function skipComment(text: string, start: number): number {
  const end = text.indexOf("*/", start + 2);
  return end === -1 ? text.length : end + 1;
}

/** Index of the quote closing the JSON string literal opened at `start`. */
function skipString(text: string, start: number): number {
  let index = start + 1;
  while (index < text.length && text[index] !== '"') index += text[index] === "\\" ? 2 : 1;
  return index;
}

function propertyKey(name: string): string {
  return /^[A-Za-z_$][\w$]*$/.test(name) ? name : JSON.stringify(name);
}

function identifierPart(name: string): string {
  const cleaned = name.replace(/[^\w$]/g, "_");
  return /^\d/.test(cleaned) ? `_${cleaned}` : cleaned || "_";
}

function escapePointer(segment: string): string {
  return segment.replaceAll("~", "~0").replaceAll("/", "~1");
}

/** `description` (and `deprecated`, `default`) as a JSDoc block, or "" when there is none. */
function jsDoc(schema: unknown, pad: string): string {
  if (!isObject(schema)) return "";
  const lines: string[] = [];
  if (typeof schema.description === "string" && schema.description.trim() !== "") lines.push(...schema.description.trim().split(/\r?\n/));
  if (schema.default !== undefined) lines.push(`@default ${JSON.stringify(schema.default)}`);
  if (schema.deprecated === true) lines.push("@deprecated");
  if (lines.length === 0) return "";
  const safe = lines.map((line) => line.replaceAll("*/", "*\\/"));
  if (safe.length === 1) return `${pad}/** ${safe[0]} */\n`;
  return `${pad}/**\n${safe.map((line) => `${pad} * ${line}`.trimEnd()).join("\n")}\n${pad} */\n`;
}

function isObject(value: unknown): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function arrayOf(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}

/** A tool as indexed from its upstream server (`tools/list`). */
export interface UpstreamToolDefinition {
  name: string;
  description?: string;
  inputSchema: Record<string, unknown>;
  outputSchema?: Record<string, unknown>;
  annotations?: Record<string, unknown>;
}

/**
 * The `.d.ts` served for one tool: `UpstreamArguments` from its inputSchema,
 * `UpstreamResult` from its outputSchema (the result `after` receives is the
 * upstream `structuredContent`), or the MCP CallToolResult when it has none,
 * then the rayrun.hooks/v1 contract.
 */
export function generateToolDeclarations(tool: UpstreamToolDefinition): string {
  const upstream = [
    schemaToDeclarations(withToolDescription(tool.inputSchema, tool.description), "UpstreamArguments"),
    tool.outputSchema
      ? schemaToDeclarations(tool.outputSchema, "UpstreamResult")
      : "/** The tool has no outputSchema: `after` receives the whole MCP CallToolResult. */\ntype UpstreamResult = Rayrun.CallToolResult;",
  ].join("\n\n");
  return assembleToolDeclarations({ toolName: tool.name, upstreamDeclarations: upstream });
}

/** The tool's description documents its arguments type when the schema has none of its own. */
function withToolDescription(schema: Record<string, unknown>, description: string | undefined): Record<string, unknown> {
  return description && typeof schema.description !== "string" ? { ...schema, description } : schema;
}
