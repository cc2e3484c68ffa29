import { describe, it } from "vitest";
import { HOOK_DECLARATIONS } from "../../../schema/hooks/declarations.ts";
import { exponentialRefTool } from "./compiler.attacks.fixtures.ts";
import { DeclarationsTooLargeError, generateToolDeclarations, schemaToDeclarations, schemaToType } from "./compiler.types.ts";
import { SEARCH_TOOL } from "./compiler.fixtures.ts";

describe("schemaToType", () => {
  const cases: [string, unknown, string][] = [
    ["true schema", true, "unknown"],
    ["false schema", false, "never"],
    ["empty schema", {}, "unknown"],
    ["string", { type: "string" }, "string"],
    ["integer", { type: "integer" }, "number"],
    ["type list", { type: ["string", "null"] }, "string | null"],
    ["nullable (OpenAPI)", { type: "string", nullable: true }, "string | null"],
    ["enum", { enum: ["a", 1, null, true] }, '"a" | 1 | null | true'],
    ["const object", { const: { a: [1] } }, '{"a":[1]}'],
    ["array", { type: "array", items: { type: "string" } }, "string[]"],
    ["array of a union", { type: "array", items: { type: ["string", "number"] } }, "(string | number)[]"],
    ["array without items", { type: "array" }, "unknown[]"],
    ["closed tuple", { type: "array", prefixItems: [{ type: "string" }, { type: "number" }], items: false }, "[string, number]"],
    ["open tuple", { type: "array", prefixItems: [{ type: "string" }] }, "[string, ...unknown[]]"],
    ["anyOf", { anyOf: [{ type: "string" }, { type: "number" }] }, "string | number"],
    ["oneOf with a duplicate", { oneOf: [{ type: "string" }, { type: "string" }] }, "string"],
    [
      "allOf",
      {
        allOf: [
          { type: "object", properties: { a: { type: "string" } }, required: ["a"], additionalProperties: false },
          { type: "object", properties: { b: { type: "number" } }, required: ["b"], additionalProperties: false },
        ],
      },
      "{\n  a: string;\n} & {\n  b: number;\n}",
    ],
    ["union inside an intersection", { type: "string", anyOf: [{ const: "a" }, { const: "b" }] }, 'string & ("a" | "b")'],
    ["unknown type name", { type: "decimal" }, "unknown"],
    ["empty closed object", { type: "object", additionalProperties: false }, "{}"],
    ["map", { type: "object", additionalProperties: { type: "number" } }, "{\n  [key: string]: number;\n}"],
    ["open object", { type: "object" }, "{\n  [key: string]: unknown;\n}"],
  ];
  for (const [name, schema, expected] of cases) {
    it(name, ({ expect }) => expect(schemaToType(schema)).toBe(expected));
  }

  it("objects: required vs optional, quoted keys, JSDoc, index signature widened by properties", ({ expect }) => {
    const schema = {
      type: "object",
      properties: {
        id: { type: "string", description: "The id.\nStable across renames. Never */ closes the comment." },
        "x-count": { type: "integer", default: 1, deprecated: true },
      },
      required: ["id", "extra"],
      additionalProperties: { type: "boolean" },
    };
    expect(schemaToType(schema)).toBe(`{
  /**
   * The id.
   * Stable across renames. Never *\\/ closes the comment.
   */
  id: string;
  /**
   * @default 1
   * @deprecated
   */
  "x-count"?: number;
  extra: unknown;
  [key: string]: boolean | string | number | undefined;
}`);
  });

  it("nested objects are indented", ({ expect }) => {
    const schema = {
      type: "object",
      properties: { a: { type: "object", properties: { b: { type: "string" } }, additionalProperties: false } },
      additionalProperties: false,
    };
    expect(schemaToType(schema)).toBe("{\n  a?: {\n    b?: string;\n  };\n}");
  });

  it("stops at a depth limit instead of recursing without bound", ({ expect }) => {
    let schema: unknown = { type: "string" };
    for (let i = 0; i < 1000; i++) schema = { type: "array", items: schema };
    expect(schemaToType(schema)).toContain("unknown");
  });
});

describe("schemaToDeclarations", () => {
  it("emits one alias per $defs entry and resolves $ref to them (recursion included)", ({ expect }) => {
    const schema = {
      type: "object",
      description: "A tree.",
      properties: { root: { $ref: "#/$defs/node" }, self: { $ref: "#" }, inline: { $ref: "#/properties/root" } },
      additionalProperties: false,
      $defs: {
        node: { type: "object", properties: { children: { type: "array", items: { $ref: "#/$defs/node" } } }, additionalProperties: false },
        "9-lives": { const: 9 },
      },
    };
    expect(schemaToDeclarations(schema, "Args")).toBe(`/** A tree. */
type Args = {
  root?: Args_node;
  self?: Args;
  inline?: Args_node;
};
type Args_node = {
  children?: Args_node[];
};
type Args__9_lives = 9;`);
  });

  it("declares other local pointers a $ref reaches once, as aliases, so a fanning reference graph stays linear", ({ expect }) => {
    const tool = exponentialRefTool(25);
    const text = schemaToDeclarations(tool.inputSchema, "Args");
    expect(text).toContain(
      "type Args_properties_l1 = {\n  left?: Args_properties_l2;\n  right?: Args_properties_l2;\n  [key: string]: unknown;\n};",
    );
    expect(text).toContain("type Args_properties_l25 = string;");
    expect(text.length).toBeLessThan(10_000);
  });

  it("follows a chain of bare $refs, and types a cycle of them as unknown", ({ expect }) => {
    const schema = {
      type: "object",
      properties: { a: { $ref: "#/properties/b" }, b: { $ref: "#/properties/c" }, c: { $ref: "#/properties/a" } },
      additionalProperties: false,
    };
    expect(schemaToDeclarations(schema, "Args")).toBe("type Args = {\n  a?: unknown;\n  b?: unknown;\n  c?: unknown;\n};");
  });

  it("stops with DeclarationsTooLargeError when the output would pass its budget", ({ expect }) => {
    const properties = Object.fromEntries(
      Array.from({ length: 200 }, (_, n) => [`p${n}`, { description: "x".repeat(100), type: "string" }]),
    );
    const schema = { type: "object", properties };
    expect(() => schemaToDeclarations(schema, "Args", 10_000)).toThrow(DeclarationsTooLargeError);
    expect(schemaToDeclarations(schema, "Args", 40_000)).toContain("p199?: string;");
    const enumOfLongStrings = { enum: Array.from({ length: 20_000 }, (_, n) => `${n}`.padEnd(60, "x")) };
    expect(() => generateToolDeclarations({ name: "t", inputSchema: enumOfLongStrings })).toThrow(DeclarationsTooLargeError);
  });

  it("types refs it cannot follow as unknown", ({ expect }) => {
    expect(schemaToType({ $ref: "https://example.com/x.json" })).toBe("unknown");
    expect(schemaToType({ $ref: "#/$defs/missing" })).toBe("unknown");
  });
});

describe("generateToolDeclarations", () => {
  it("declares UpstreamArguments and UpstreamResult from the schemas, then the contract", ({ expect }) => {
    const text = generateToolDeclarations(SEARCH_TOOL);
    expect(text).toContain('for tool "search_release_notes"');
    expect(text).toContain(
      "/** Full-text search over release notes */\ntype UpstreamArguments = {\n  /** Query text */\n  q: string;\n  limit?: number;",
    );
    expect(text).toContain("type UpstreamResult = {\n  items: {\n    [key: string]: unknown;\n  }[];");
    expect(text.endsWith(HOOK_DECLARATIONS)).toBe(true);
  });

  it("uses the MCP CallToolResult when the tool has no outputSchema", ({ expect }) => {
    const text = generateToolDeclarations({ name: "t", inputSchema: { type: "object" } });
    expect(text).toContain("type UpstreamResult = Rayrun.CallToolResult;");
  });

  it("keeps a hostile tool name inside its comment line", ({ expect }) => {
    const text = generateToolDeclarations({ name: "x\u2028declare const pwned: 1;\n", inputSchema: { type: "object" } });
    expect(text.split("\n")[0]).toBe('// Rayrun hook declarations (rayrun.hooks/v1) for tool "x\\u2028declare const pwned: 1;\\n".');
  });

  it("contract declarations carry the contract's constants", ({ expect }) => {
    expect(HOOK_DECLARATIONS).toContain('apiVersion: "rayrun.hooks/v1";');
    expect(HOOK_DECLARATIONS).toContain("`^[a-z][a-z0-9_]{0,63}$`");
    expect(HOOK_DECLARATIONS).toContain('type LogLevel = "debug" | "info" | "warn" | "error";');
  });
});
