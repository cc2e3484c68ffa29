import { describe, it } from "vitest";
import { checkAgainstSchema } from "./json-schema.ts";
import { anyOfChainSchema, EVIL_PATTERN } from "./schema-bounds.fixtures.ts";
import { analyseSchema, SCHEMA_LIMITS, VALUE_LIMITS } from "./schema-bounds.ts";

const boundOf = (schema: Record<string, unknown>) => analyseSchema(schema).breach?.bound ?? null;

describe("schema bounds", () => {
  it("accepts recursive schemas whose cost per value stays flat, and refuses ones that grow with depth", ({ expect }) => {
    const tree = {
      $defs: { node: { type: "object", properties: { left: { $ref: "#/$defs/node" }, right: { $ref: "#/$defs/node" } } } },
      $ref: "#/$defs/node",
    };
    expect(boundOf(tree)).toBeNull();
    const list = { type: "object", properties: { children: { type: "array", items: { $ref: "#" } } } };
    expect(boundOf(list)).toBeNull();
    // Two branches that both descend into `x`: 2^depth checks of the deepest value.
    const doubling = { anyOf: [{ properties: { x: { $ref: "#" } } }, { properties: { x: { $ref: "#" } } }] };
    expect(boundOf(doubling)).toBe("branching");
    // A reference cycle on the same value never ends.
    expect(boundOf({ $defs: { a: { allOf: [{ $ref: "#/$defs/a" }] } }, $ref: "#/$defs/a" })).toBe("branching");
  });

  it("counts the anyOf chain by reference, so 7 levels pass and 8 do not", ({ expect }) => {
    expect(analyseSchema(anyOfChainSchema(7)).applicationsPerValue).toBeLessThanOrEqual(SCHEMA_LIMITS.branching);
    expect(boundOf(anyOfChainSchema(8))).toBe("branching");
    expect(boundOf(anyOfChainSchema(22))).toBe("branching");
  });

  it("refuses deep and large schemas before walking their references", ({ expect }) => {
    let deep: Record<string, unknown> = { type: "string" };
    for (let i = 0; i < 40; i++) deep = { type: "object", properties: { a: deep } };
    expect(boundOf(deep)).toBe("depth");
    const properties = Object.fromEntries(Array.from({ length: SCHEMA_LIMITS.subschemas }, (_, i) => [`p${i}`, { type: "string" }]));
    expect(boundOf({ type: "object", properties })).toBe("subschemas");
  });

  it("refuses patterns the linear matcher cannot run, and patternProperties", ({ expect }) => {
    expect(boundOf({ type: "string", pattern: EVIL_PATTERN })).toBeNull();
    for (const pattern of ["(a)\\1", "(?=a)b", "(?<!a)b", "\\bword"]) expect(boundOf({ type: "string", pattern })).toBe("pattern");
    expect(boundOf({ type: "object", patternProperties: { "^a$": { type: "string" } } })).toBe("pattern");
  });

  it("matches patterns as JavaScript does, next to a format of the node's own", ({ expect }) => {
    const schema = { type: "string", format: "email", pattern: "^[a-z]+@example\\.com$" };
    expect(checkAgainstSchema(schema, "ada@example.com")).toEqual({ valid: true });
    expect(checkAgainstSchema(schema, "ada@example.org").valid).toBe(false);
    expect(checkAgainstSchema(schema, "ad a@example.com").valid).toBe(false);
    expect(checkAgainstSchema({ type: "string", pattern: "\\p{Lu}{2}" }, "xÉÀy")).toEqual({ valid: true });
  });

  it("refuses a value whose size × the schema's fan-out passes the work bound", ({ expect }) => {
    const fanOut = { type: "array", items: { $ref: "#/$defs/l0" }, $defs: (anyOfChainSchema(7) as { $defs: unknown }).$defs };
    const perValue = analyseSchema(fanOut).applicationsPerValue;
    const tooMany = Array.from({ length: Math.ceil(VALUE_LIMITS.validationWork / perValue) + 1 }, () => "x");
    expect(checkAgainstSchema(fanOut, tooMany)).toMatchObject({ valid: false, breach: { bound: "validation_work" } });
    expect(checkAgainstSchema(fanOut, ["x", "y"])).toEqual({ valid: true });
  });
});

describe("value nesting", () => {
  it("counts objects and arrays alike, and refuses the 65th level whatever the schema allows", ({ expect }) => {
    const levels = (count: number): unknown => (count === 0 ? 1 : count % 2 ? [levels(count - 1)] : { a: levels(count - 1) });
    expect(checkAgainstSchema({}, levels(64))).toEqual({ valid: true });
    expect(checkAgainstSchema({}, levels(65))).toEqual({
      valid: false,
      violations: [{ pointer: "", message: "nests objects and arrays deeper than 64 levels" }],
    });
    // Wide is not deep: a thousand siblings at one level are fine.
    expect(checkAgainstSchema({}, { items: Array.from({ length: 1000 }, () => ({ a: [1] })) })).toEqual({ valid: true });
  });
});
