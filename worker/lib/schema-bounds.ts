import { dereference, type Schema } from "@cfworker/json-schema";
import { compileLinearPattern } from "../../cli/src/rules/core/linear-regex.ts";

/**
 * Static bounds on a JSON Schema the gateway validates on every call. An
 * upstream writes its tools' schemas, so validating them must cost a bounded
 * amount of work whatever they say. Checked when a service is indexed (the tool
 * is then refused, see docs/limits.md) and when a hook's public contract compiles.
 */
export const SCHEMA_LIMITS = {
  /** Nesting of objects and arrays inside the schema document. */
  depth: 64,
  /** Subschemas in the document, `$defs` included. */
  subschemas: 10_000,
  /**
   * Schema applications any one value of an instance can receive: anyOf/oneOf/allOf,
   * `not`, if/then/else and `$ref` fan out on the same value, and the fan-out
   * multiplies down properties and items (recursion included).
   */
  branching: 1_000,
} as const;

/** Bounds checked on each validated value, against what the schema analysis found. */
export const VALUE_LIMITS = {
  /** Values in the instance × `branching`: the total schema applications one validation may do. */
  validationWork: 1_000_000,
  /** Array length when the schema uses `uniqueItems`, which compares every pair. */
  uniqueItems: 1_000,
  /** Steps of the linear pattern matcher per validation (about a character × a pattern state). */
  patternWork: 1_000_000,
} as const;

/** Which bound a schema or a value broke; the stable `details.bound` of `schema_too_complex`. */
export type SchemaBound = "depth" | "subschemas" | "branching" | "pattern" | "validation_work" | "unique_items" | "pattern_work";

export interface SchemaBoundBreach {
  bound: SchemaBound;
  /** The number the bound allows; absent for `pattern`, which is a kind, not a size. */
  limit?: number;
  message: string;
}

export interface SchemaAnalysis {
  breach: SchemaBoundBreach | null;
  /** The most schema applications one value of an instance can receive. */
  applicationsPerValue: number;
  usesUniqueItems: boolean;
}

/** Keywords whose values are data, never subschemas. */
const DATA_KEYWORDS: ReadonlySet<string> = new Set(["const", "enum", "default", "examples", "required", "dependentRequired"]);
/** Keywords that apply a subschema to the same value. */
const IN_PLACE_LISTS = ["allOf", "anyOf", "oneOf"] as const;
const IN_PLACE_SINGLE = ["not", "if", "then", "else"] as const;
const IN_PLACE_MAPS = ["dependentSchemas", "dependencies"] as const;
/** Keywords that apply a subschema to some or every child of the value. */
const DESCENT_SINGLE = [
  "additionalProperties",
  "unevaluatedProperties",
  "propertyNames",
  "additionalItems",
  "unevaluatedItems",
  "contains",
];

export function analyseSchema(schema: Record<string, unknown>): SchemaAnalysis {
  const shape = measureShape(schema);
  if (shape.breach) return { breach: shape.breach, applicationsPerValue: 0, usesUniqueItems: shape.usesUniqueItems };
  const patternBreach = checkPatterns(shape.patterns, shape.usesPatternProperties);
  if (patternBreach) return { breach: patternBreach, applicationsPerValue: 0, usesUniqueItems: shape.usesUniqueItems };
  const applications = applicationsPerValue(schema);
  const breach: SchemaBoundBreach | null =
    applications > SCHEMA_LIMITS.branching
      ? {
          bound: "branching",
          limit: SCHEMA_LIMITS.branching,
          message: `one value would be checked against more than ${SCHEMA_LIMITS.branching} subschemas (anyOf/oneOf/allOf/$ref fan-out)`,
        }
      : null;
  return { breach, applicationsPerValue: applications, usesUniqueItems: shape.usesUniqueItems };
}

interface Shape {
  breach: SchemaBoundBreach | null;
  patterns: string[];
  usesPatternProperties: boolean;
  usesUniqueItems: boolean;
}

/** Depth and size first, with an explicit stack: nothing here recurses on the upstream's nesting. */
function measureShape(schema: unknown): Shape {
  const shape: Shape = { breach: null, patterns: [], usesPatternProperties: false, usesUniqueItems: false };
  const stack: { node: unknown; depth: number }[] = [{ node: schema, depth: 1 }];
  let subschemas = 0;
  while (stack.length > 0) {
    const { node, depth } = stack.pop()!;
    if (typeof node !== "object" || node === null) continue;
    if (depth > SCHEMA_LIMITS.depth) {
      shape.breach = { bound: "depth", limit: SCHEMA_LIMITS.depth, message: `the schema nests deeper than ${SCHEMA_LIMITS.depth} levels` };
      return shape;
    }
    if (Array.isArray(node)) {
      for (const item of node) stack.push({ node: item, depth: depth + 1 });
      continue;
    }
    if (++subschemas > SCHEMA_LIMITS.subschemas) {
      shape.breach = {
        bound: "subschemas",
        limit: SCHEMA_LIMITS.subschemas,
        message: `the schema has more than ${SCHEMA_LIMITS.subschemas} subschemas`,
      };
      return shape;
    }
    for (const [key, child] of Object.entries(node)) {
      if (DATA_KEYWORDS.has(key)) continue;
      if (key === "pattern" && typeof child === "string") shape.patterns.push(child);
      if (key === "patternProperties") shape.usesPatternProperties = true;
      if (key === "uniqueItems" && child === true) shape.usesUniqueItems = true;
      stack.push({ node: child, depth: depth + 1 });
    }
  }
  return shape;
}

/**
 * `pattern` runs on the linear matcher, so it only has to compile there.
 * `patternProperties` is matched by the validator with JavaScript's own
 * backtracking RegExp, which cannot be bounded: it is refused.
 */
function checkPatterns(patterns: string[], usesPatternProperties: boolean): SchemaBoundBreach | null {
  if (usesPatternProperties) {
    return { bound: "pattern", message: "patternProperties is not supported: its regular expressions cannot be matched in bounded time" };
  }
  for (const pattern of patterns) {
    const compiled = compileLinearPattern(pattern);
    if (!compiled.ok) {
      return {
        bound: "pattern",
        message: `pattern ${JSON.stringify(pattern.slice(0, 80))} ${compiled.reason}, so it cannot be matched in bounded time`,
      };
    }
  }
  return null;
}

/** A subschema with its edges resolved: what applies to the same value, and what applies to its children. */
interface SchemaNode {
  inPlace: SchemaNode[];
  /** Subschemas applied to the child with this property name. */
  named: Map<string, SchemaNode[]>;
  /** Subschemas applied to (possibly) every child: items, additionalProperties, … */
  wildcard: SchemaNode[];
}

/** Saturates far above every bound, so sums never overflow and comparisons stay exact below it. */
const SATURATED = SCHEMA_LIMITS.branching + 1;
const add = (a: number, b: number) => Math.min(SATURATED, a + b);
/** Past this many instance levels, a schema whose cost still grows grows without end. */
const MAX_UNROLL = 64;

/**
 * The most schema applications one value of an instance can receive, computed
 * on the graph of subschemas with `$ref` resolved (each subschema once, so the
 * count is cheap however much the references fan out):
 * - in place, `I(s)` = 1 + the `I` of every subschema applied to the same value;
 *   a cycle of in-place references never ends and counts as unbounded;
 * - one level down, `M(s)` = max(`I(s)`, for the worst child name, the sum of
 *   `M` over every subschema reached for that child through `s`'s in-place set).
 * `M` is iterated level by level: a recursive schema whose cost stops growing
 * is bounded for instances of any depth; one that keeps growing is not.
 */
function applicationsPerValue(schema: Record<string, unknown>): number {
  const { root, all } = buildGraph(schema);
  if (!root) return 1;
  const inPlace = new Map<SchemaNode, number>();
  const visiting = new Set<SchemaNode>();
  const countInPlace = (node: SchemaNode): number => {
    const known = inPlace.get(node);
    if (known !== undefined) return known;
    if (visiting.has(node)) return SATURATED;
    visiting.add(node);
    const total = node.inPlace.reduce((sum, child) => add(sum, countInPlace(child)), 1);
    visiting.delete(node);
    inPlace.set(node, total);
    return total;
  };
  for (const node of all) if (countInPlace(node) >= SATURATED) return SATURATED;

  let levels = new Map(all.map((node) => [node, inPlace.get(node)!]));
  for (let level = 0; level < MAX_UNROLL; level++) {
    const previous = levels;
    const totals = new Map<SchemaNode, { named: Map<string, number>; wildcard: number }>();
    const childTotals = (node: SchemaNode) => {
      const known = totals.get(node);
      if (known) return known;
      const sum = (list: SchemaNode[]) => list.reduce((acc, child) => add(acc, previous.get(child)!), 0);
      let wildcard = sum(node.wildcard);
      const named = new Map<string, number>();
      for (const [name, list] of node.named) named.set(name, sum(list));
      for (const child of node.inPlace) {
        const inner = childTotals(child);
        wildcard = add(wildcard, inner.wildcard);
        for (const [name, count] of inner.named) named.set(name, add(named.get(name) ?? 0, count));
      }
      const result = { named, wildcard };
      totals.set(node, result);
      return result;
    };
    levels = new Map();
    let changed = false;
    for (const node of all) {
      const { named, wildcard } = childTotals(node);
      const worstChild = add(wildcard, Math.max(0, ...named.values()));
      const value = Math.max(inPlace.get(node)!, worstChild);
      levels.set(node, value);
      if (value !== previous.get(node)) changed = true;
    }
    if (!changed || levels.get(root)! >= SATURATED) return levels.get(root)!;
  }
  return SATURATED;
}

/** Every subschema object as a node, `$ref` edges resolved as the validator resolves them. */
function buildGraph(schema: Record<string, unknown>): { root: SchemaNode | null; all: SchemaNode[] } {
  // dereference() annotates what it walks, so it gets a copy.
  const copy = structuredClone(schema);
  const lookup = dereference(copy as Schema) as Record<string, unknown>;
  const nodes = new Map<object, SchemaNode>();
  const nodeOf = (value: unknown): SchemaNode | null => {
    if (typeof value !== "object" || value === null || Array.isArray(value)) return null;
    let node = nodes.get(value);
    if (!node) {
      node = { inPlace: [], named: new Map(), wildcard: [] };
      nodes.set(value, node);
    }
    return node;
  };
  const stack: unknown[] = [copy];
  const seen = new Set<object>();
  while (stack.length > 0) {
    const value = stack.pop();
    const node = nodeOf(value);
    if (!node || seen.has(value as object)) continue;
    seen.add(value as object);
    const record = value as Record<string, unknown>;
    const link = (list: SchemaNode[], child: unknown) => {
      const target = nodeOf(child);
      if (!target) return;
      list.push(target);
      stack.push(child);
    };
    if (typeof record.$ref === "string" || record.$recursiveRef === "#") {
      const uri = typeof record.$ref === "string" ? (record.__absolute_ref__ ?? record.$ref) : record.__absolute_recursive_ref__;
      if (typeof uri === "string") link(node.inPlace, lookup[uri]);
    }
    for (const key of IN_PLACE_LISTS) if (Array.isArray(record[key])) for (const child of record[key]) link(node.inPlace, child);
    for (const key of IN_PLACE_SINGLE) link(node.inPlace, record[key]);
    for (const key of IN_PLACE_MAPS) {
      const map = record[key];
      if (map && typeof map === "object") for (const child of Object.values(map)) link(node.inPlace, child);
    }
    const properties = record.properties;
    if (properties && typeof properties === "object" && !Array.isArray(properties)) {
      for (const [name, child] of Object.entries(properties)) {
        const list = node.named.get(name) ?? [];
        link(list, child);
        node.named.set(name, list);
      }
    }
    for (const key of DESCENT_SINGLE) link(node.wildcard, record[key]);
    const items = [record.items, record.prefixItems].flat();
    for (const child of items) link(node.wildcard, child);
    // Definitions are not applied by themselves, but references land in them.
    for (const key of ["$defs", "definitions"]) {
      const map = record[key];
      if (map && typeof map === "object") for (const child of Object.values(map)) stack.push(child);
    }
  }
  return { root: nodeOf(copy), all: [...nodes.values()] };
}
