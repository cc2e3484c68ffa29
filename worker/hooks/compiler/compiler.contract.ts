import { type OutputUnit, type Schema, Validator, dereference } from "@cfworker/json-schema";
import type { JsonObject } from "../../../schema/hooks/contract.ts";
import type { Diagnostic } from "./compiler.diagnostics.ts";
import { analyseSchema } from "../../lib/schema-bounds.ts";
import { JSON_SCHEMA_2020_12_METASCHEMA } from "./compiler.metaschema.ts";

/** A JSON Schema whose root accepts objects: what MCP requires of input and output schemas. */
export type ObjectSchema = { type: "object" } & JsonObject;

/** What a hook may declare about its public tool: each part replaces the upstream one. */
export interface PublicContract {
  description?: string;
  inputSchema?: ObjectSchema;
  outputSchema?: ObjectSchema;
}

export type ContractValidation = { ok: true; contract: PublicContract | null } | { ok: false; diagnostics: Diagnostic[] };

const SCHEMA_KEYS = ["inputSchema", "outputSchema"] as const;
const CONTRACT_KEYS: ReadonlySet<string> = new Set(["description", ...SCHEMA_KEYS]);

/**
 * Checks the `publicContract` read from the hook's top level: its shape, each
 * schema against the JSON Schema 2020-12 meta-schema, local `$ref`s that
 * resolve, no `pattern`/`patternProperties` anywhere (regular expressions
 * are not time-bounded, and these schemas validate every call), and the
 * validation bounds of worker/lib/schema-bounds.ts (depth, size, branching).
 */
export function validatePublicContract(value: unknown): ContractValidation {
  if (value === undefined || value === null) return { ok: true, contract: null };
  if (!isPlainObject(value)) {
    return invalid([{ code: "invalid_public_contract", message: "publicContract must be an object", pointer: "" }]);
  }
  const diagnostics: Diagnostic[] = [];
  for (const key of Object.keys(value)) {
    if (!CONTRACT_KEYS.has(key)) {
      diagnostics.push({
        code: "invalid_public_contract",
        message: `publicContract has an unknown key "${key}" (allowed: description, inputSchema, outputSchema)`,
        pointer: pointerOf([key]),
      });
    }
  }
  if (value.description !== undefined && typeof value.description !== "string") {
    diagnostics.push({ code: "invalid_public_contract", message: "publicContract.description must be a string", pointer: "/description" });
  }
  for (const key of SCHEMA_KEYS) {
    if (value[key] !== undefined) diagnostics.push(...checkObjectSchema(value[key], [key]));
  }
  return diagnostics.length > 0 ? invalid(diagnostics) : { ok: true, contract: value as PublicContract };
}

function invalid(diagnostics: Diagnostic[]): ContractValidation {
  return { ok: false, diagnostics };
}

function checkObjectSchema(schema: unknown, path: string[]): Diagnostic[] {
  const where = `publicContract.${path.join(".")}`;
  if (!isPlainObject(schema) || schema.type !== "object") {
    return [
      { code: "invalid_public_contract", message: `${where} must be an object schema ({ type: "object", ... })`, pointer: pointerOf(path) },
    ];
  }
  const patterns = findPatterns(schema, path);
  if (patterns.length > 0) return patterns;
  const metaError = metaschemaError(schema);
  if (metaError) {
    const at = [...path, ...pointerSegments(metaError.instanceLocation)];
    return [
      {
        code: "invalid_public_contract",
        message: `${where} is not a valid JSON Schema (2020-12): ${metaError.error}`,
        pointer: pointerOf(at),
      },
    ];
  }
  const refs = unresolvedRefs(schema, path);
  if (refs.length > 0) return refs;
  // The same bounds an upstream schema must keep: this schema validates every call too.
  const breach = analyseSchema(schema).breach;
  if (!breach) return [];
  return [
    { code: "schema_too_complex", message: `${where} is past the ${breach.bound} bound: ${breach.message}`, pointer: pointerOf(path) },
  ];
}

/** JSON Schema keywords whose values are data, never subschemas. */
const DATA_KEYWORDS: ReadonlySet<string> = new Set(["const", "enum", "default", "examples", "required", "dependentRequired"]);
/** Keywords whose value maps names (property names, definition names) to subschemas. */
const NAME_MAP_KEYWORDS: ReadonlySet<string> = new Set(["properties", "$defs", "definitions", "dependentSchemas", "dependencies"]);

/**
 * Reports `pattern` and `patternProperties` at every depth. A property *named*
 * "pattern" is fine (name maps are walked by value), and data keywords are not
 * searched; every other object or array is treated as a possible subschema,
 * so an unknown keyword cannot hide a regex from a future validator.
 */
function findPatterns(node: unknown, path: string[]): Diagnostic[] {
  if (Array.isArray(node)) return node.flatMap((item, index) => findPatterns(item, [...path, String(index)]));
  if (!isPlainObject(node)) return [];
  const found: Diagnostic[] = [];
  for (const [key, child] of Object.entries(node)) {
    const childPath = [...path, key];
    if (key === "pattern" || key === "patternProperties") {
      found.push({
        code: "schema_pattern_forbidden",
        message: `"${key}" is not allowed in a hook's schema: regular-expression matching is not time-bounded`,
        pointer: pointerOf(childPath),
      });
    } else if (NAME_MAP_KEYWORDS.has(key) && isPlainObject(child)) {
      for (const [name, subschema] of Object.entries(child)) found.push(...findPatterns(subschema, [...childPath, name]));
    } else if (!DATA_KEYWORDS.has(key)) {
      found.push(...findPatterns(child, childPath));
    }
  }
  return found;
}

let metaValidator: Validator | undefined;

function metaschemaError(schema: Record<string, unknown>): OutputUnit | undefined {
  metaValidator ??= new Validator(structuredClone(JSON_SCHEMA_2020_12_METASCHEMA) as unknown as Schema, "2020-12", true);
  const result = metaValidator.validate(schema);
  // With short-circuiting the last unit is the innermost failure, the useful one.
  return result.valid ? undefined : result.errors[result.errors.length - 1];
}

/** Every `$ref` must point inside the same schema: there is no network, and a dangling one would throw at call time. */
function unresolvedRefs(schema: Record<string, unknown>, path: string[]): Diagnostic[] {
  const copy = structuredClone(schema) as Schema;
  const lookup = dereference(copy);
  const diagnostics: Diagnostic[] = [];
  visitSchemas(copy, path, (node, at) => {
    if (typeof node.$ref !== "string") return;
    const absolute = (node as { __absolute_ref__?: string }).__absolute_ref__ ?? node.$ref;
    if (lookup[absolute] === undefined) {
      diagnostics.push({
        code: "invalid_public_contract",
        message: `$ref "${node.$ref}" does not resolve inside this schema`,
        pointer: pointerOf([...at, "$ref"]),
      });
    }
  });
  return diagnostics;
}

function visitSchemas(node: unknown, path: string[], visit: (schema: Record<string, unknown>, path: string[]) => void): void {
  if (!isPlainObject(node)) return;
  visit(node, path);
  for (const [key, child] of Object.entries(node)) {
    if (DATA_KEYWORDS.has(key)) continue;
    if (NAME_MAP_KEYWORDS.has(key) && isPlainObject(child)) {
      for (const [name, subschema] of Object.entries(child)) visitSchemas(subschema, [...path, key, name], visit);
    } else if (Array.isArray(child)) {
      child.forEach((item, index) => visitSchemas(item, [...path, key, String(index)], visit));
    } else {
      visitSchemas(child, [...path, key], visit);
    }
  }
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** RFC 6901 JSON pointer from path segments. */
export function pointerOf(segments: readonly string[]): string {
  return segments.map((segment) => `/${segment.replaceAll("~", "~0").replaceAll("/", "~1")}`).join("");
}

/** cfworker reports locations as URI fragments ("#/a/b"); turn one back into raw segments. */
function pointerSegments(location: string): string[] {
  const pointer = decodeURIComponent(location.replace(/^#/, ""));
  if (pointer === "") return [];
  return pointer
    .slice(1)
    .split("/")
    .map((segment) => segment.replaceAll("~1", "/").replaceAll("~0", "~"));
}
