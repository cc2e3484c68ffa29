import { describe, it } from "vitest";
import { anyOfChainSchema } from "../../lib/schema-bounds.fixtures.ts";
import { validatePublicContract } from "./compiler.contract.ts";

const objectSchema = (extra: Record<string, unknown> = {}) => ({ type: "object", ...extra });

function codesAndPointers(value: unknown) {
  const result = validatePublicContract(value);
  return result.ok ? [] : result.diagnostics.map(({ code, pointer }) => ({ code, pointer }));
}

describe("validatePublicContract", () => {
  it("accepts no contract as null, and each part alone", ({ expect }) => {
    expect(validatePublicContract(undefined)).toEqual({ ok: true, contract: null });
    expect(validatePublicContract({})).toEqual({ ok: true, contract: {} });
    expect(validatePublicContract({ description: "d" })).toMatchObject({ ok: true });
    expect(validatePublicContract({ outputSchema: objectSchema({ properties: { a: { type: "string" } } }) })).toMatchObject({ ok: true });
  });

  it("accepts a property *named* pattern and pattern-like data", ({ expect }) => {
    const inputSchema = objectSchema({
      properties: { pattern: { type: "string", default: "a*", examples: ["b+"] }, mode: { const: { pattern: "x" } } },
      required: ["pattern"],
    });
    expect(validatePublicContract({ inputSchema })).toMatchObject({ ok: true });
  });

  it("accepts local $refs that resolve, including recursive ones", ({ expect }) => {
    const inputSchema = objectSchema({
      properties: { node: { $ref: "#/$defs/node" } },
      $defs: { node: { type: "object", properties: { children: { type: "array", items: { $ref: "#/$defs/node" } } } } },
    });
    expect(validatePublicContract({ inputSchema })).toMatchObject({ ok: true });
  });

  it("rejects a schema past a validation bound: a 22-level anyOf chain through $defs", ({ expect }) => {
    expect(codesAndPointers({ inputSchema: anyOfChainSchema(22) })).toEqual([{ code: "schema_too_complex", pointer: "/inputSchema" }]);
    expect(codesAndPointers({ outputSchema: anyOfChainSchema(7) })).toEqual([]);
  });

  it("rejects shapes that are not a contract", ({ expect }) => {
    expect(codesAndPointers([])).toEqual([{ code: "invalid_public_contract", pointer: "" }]);
    expect(codesAndPointers({ title: "x" })).toEqual([{ code: "invalid_public_contract", pointer: "/title" }]);
    expect(codesAndPointers({ description: 5 })).toEqual([{ code: "invalid_public_contract", pointer: "/description" }]);
    expect(codesAndPointers({ inputSchema: true })).toEqual([{ code: "invalid_public_contract", pointer: "/inputSchema" }]);
    expect(codesAndPointers({ outputSchema: { type: ["object", "null"] } })).toEqual([
      { code: "invalid_public_contract", pointer: "/outputSchema" },
    ]);
  });

  it("rejects schemas invalid under 2020-12, pointing into them", ({ expect }) => {
    expect(codesAndPointers({ inputSchema: objectSchema({ properties: { a: { type: "text" } } }) })).toEqual([
      { code: "invalid_public_contract", pointer: "/inputSchema/properties/a/type" },
    ]);
    expect(codesAndPointers({ inputSchema: objectSchema({ required: "a" }) })).toEqual([
      { code: "invalid_public_contract", pointer: "/inputSchema/required" },
    ]);
    expect(codesAndPointers({ inputSchema: objectSchema({ minProperties: -1 }) })).toEqual([
      { code: "invalid_public_contract", pointer: "/inputSchema/minProperties" },
    ]);
  });

  it("rejects $refs that do not resolve inside the schema", ({ expect }) => {
    expect(codesAndPointers({ inputSchema: objectSchema({ properties: { a: { $ref: "#/$defs/missing" } } }) })).toEqual([
      { code: "invalid_public_contract", pointer: "/inputSchema/properties/a/$ref" },
    ]);
    expect(codesAndPointers({ inputSchema: objectSchema({ properties: { a: { $ref: "https://example.com/s.json" } } }) })).toEqual([
      { code: "invalid_public_contract", pointer: "/inputSchema/properties/a/$ref" },
    ]);
  });

  it("rejects pattern and patternProperties at every depth, with escaped pointers", ({ expect }) => {
    const inputSchema = objectSchema({
      properties: { "a/b": { anyOf: [{ type: "string" }, { type: "array", prefixItems: [{ pattern: "x" }] }] } },
      $defs: { "t~": { not: { patternProperties: {} } } },
    });
    expect(codesAndPointers({ inputSchema, outputSchema: objectSchema({ propertyNames: { pattern: "^a" } }) })).toEqual([
      { code: "schema_pattern_forbidden", pointer: "/inputSchema/properties/a~1b/anyOf/1/prefixItems/0/pattern" },
      { code: "schema_pattern_forbidden", pointer: "/inputSchema/$defs/t~0/not/patternProperties" },
      { code: "schema_pattern_forbidden", pointer: "/outputSchema/propertyNames/pattern" },
    ]);
  });

  it("treats unknown keywords as possible subschemas", ({ expect }) => {
    expect(codesAndPointers({ inputSchema: objectSchema({ "x-extension": { deeper: { pattern: "x" } } }) })).toEqual([
      { code: "schema_pattern_forbidden", pointer: "/inputSchema/x-extension/deeper/pattern" },
    ]);
  });
});
