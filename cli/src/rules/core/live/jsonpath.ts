// JSONPath (RFC 9535) queries of declared tools, parsed once rather than on every call.
// The maintained library (jsonpath-rfc9535) parses each query; its own query() parses the
// text again on every call, which cost a declared call more than its JSONPath work. The
// shape tools use for `results` and `fields` (child segments naming members, indexing or
// taking every item: `$.items[*]`, `$.data.results[0].url`) is evaluated here on the parsed
// query, by the library's rules and in its order; any other query (descendants, slices,
// filters) is left to the library's query().
import { query, type JsonValue } from "jsonpath-rfc9535";
import parse, { type JsonPathQuery } from "jsonpath-rfc9535/parser";

/** A compiled query: the nodes it selects from a value, in document order. */
export type CompiledJsonPath = (value: unknown) => unknown[];

type Step = { kind: "name"; name: string } | { kind: "index"; index: number } | { kind: "wildcard" };

/** Compiled queries by their text. The texts come from rules files and connector files, so they are few; the bound is a guard. */
const compiled = new Map<string, CompiledJsonPath>();
const MAX_COMPILED = 256;

/** The query compiled; a text that is not a JSONPath throws as the library's query() does. */
export function compileJsonPath(expression: string): CompiledJsonPath {
  let found = compiled.get(expression);
  if (found) return found;
  const selections = simpleSelections(parse(expression));
  found = selections ? (value) => select(value, selections) : (value) => query(value as JsonValue, expression);
  if (compiled.size >= MAX_COMPILED) compiled.clear();
  compiled.set(expression, found);
  return found;
}

/** Each child segment's selectors, when every segment is a child segment of names, indices and wildcards; else undefined. */
function simpleSelections(parsed: JsonPathQuery): Step[][] | undefined {
  const selections: Step[][] = [];
  for (const segment of parsed.segments) {
    if (segment.type !== "ChildSegment") return undefined;
    const { node } = segment;
    if (node.type === "MemberNameShorthand") selections.push([{ kind: "name", name: node.value }]);
    else if (node.type === "WildcardSelector") selections.push([{ kind: "wildcard" }]);
    else {
      const steps: Step[] = [];
      for (const selector of node.selectors) {
        if (selector.type === "NameSelector") steps.push({ kind: "name", name: selector.value });
        else if (selector.type === "IndexSelector") steps.push({ kind: "index", index: selector.value });
        else if (selector.type === "WildcardSelector") steps.push({ kind: "wildcard" });
        else return undefined;
      }
      selections.push(steps);
    }
  }
  return selections;
}

/** The library's reading of a member: only a plain object (or a null-prototype one) has members. */
function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== "object") return false;
  const prototype = Object.getPrototypeOf(value);
  return prototype === null || prototype === Object.prototype;
}

/** Segment by segment, every node's selections in selector order: the library's (breadth-first) order. */
function select(value: unknown, selections: readonly Step[][]): unknown[] {
  let nodes: unknown[] = [value];
  for (const steps of selections) {
    const next: unknown[] = [];
    for (const node of nodes) {
      for (const step of steps) {
        if (step.kind === "name") {
          if (isPlainObject(node) && Object.hasOwn(node, step.name)) next.push(node[step.name]);
        } else if (step.kind === "index") {
          if (!Array.isArray(node)) continue;
          const index = step.index < 0 ? node.length + step.index : step.index;
          if (index >= 0 && index < node.length) next.push(node[index]);
        } else if (Array.isArray(node)) for (let index = 0; index < node.length; index++) next.push(node[index]);
        else if (isPlainObject(node)) for (const key of Object.keys(node)) next.push(node[key]);
      }
    }
    nodes = next;
  }
  return nodes;
}
