import { Validator, type Schema, type SchemaDraft } from "@cfworker/json-schema";

export interface SchemaViolation {
  pointer: string;
  message: string;
}

export type SchemaCheck = { valid: true } | { valid: false; violations: SchemaViolation[] };

const MAX_VIOLATIONS = 10;
const MAX_CACHED_VALIDATORS = 500;

/** Upstream schemas name their draft in `$schema` (the MCP SDK emits draft-07); default to 2020-12. */
function draftOf(schema: Schema): SchemaDraft {
  const declared = typeof schema.$schema === "string" ? schema.$schema : "";
  if (declared.includes("draft-04")) return "4";
  if (declared.includes("draft-07") || declared.includes("draft-06")) return "7";
  if (declared.includes("2019-09")) return "2019-09";
  return "2020-12";
}

/**
 * Compiled validators keyed by the schema's own JSON: the same definition is
 * validated on every call, and a changed definition is simply a new key.
 */
const validators = new Map<string, Validator>();
/**
 * The same validators by schema object: a catalog snapshot passes the same
 * objects on every call, so most calls skip serialising the schema for the key.
 */
const bySchemaObject = new WeakMap<Schema, Validator>();

function validatorFor(schema: Schema): Validator {
  const known = bySchemaObject.get(schema);
  if (known) return known;
  const key = JSON.stringify(schema);
  let validator = validators.get(key);
  if (!validator) {
    if (validators.size >= MAX_CACHED_VALIDATORS) validators.clear();
    validator = new Validator(schema, draftOf(schema), false);
    validators.set(key, validator);
  }
  bySchemaObject.set(schema, validator);
  return validator;
}

export function checkAgainstSchema(schema: Record<string, unknown>, value: unknown): SchemaCheck {
  const result = validatorFor(schema as Schema).validate(value);
  if (result.valid) return { valid: true };
  // cfworker reports the failing keyword at every level; the deepest entries say what is actually wrong.
  const violations = result.errors
    .filter((error) => error.keyword !== "properties" && error.keyword !== "items" && error.keyword !== "$ref")
    .slice(0, MAX_VIOLATIONS)
    .map((error) => ({ pointer: error.instanceLocation.replace(/^#/, ""), message: error.error }));
  return { valid: false, violations: violations.length ? violations : [{ pointer: "", message: "does not match the schema" }] };
}
