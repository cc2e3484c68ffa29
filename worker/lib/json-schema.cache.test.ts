import { describe, it } from "vitest";
import { checkAgainstSchema, linearPatternCache, validatorCache } from "./json-schema.ts";

const MiB = 1024 * 1024;

describe("compiled schema caches (upstreams choose the schemas)", () => {
  it("holds at most 500 validators however many distinct schemas are checked, and still checks each one right", ({ expect }) => {
    for (let n = 0; n < 600; n++) {
      const schema = { type: "object", properties: { [`field${n}`]: { type: "integer" } }, required: [`field${n}`] };
      expect(checkAgainstSchema(schema, { [`field${n}`]: n })).toEqual({ valid: true });
      expect(checkAgainstSchema(schema, {})).toMatchObject({ valid: false });
    }
    expect(validatorCache.size).toBe(500);
    // The first schemas were let go; checking one again compiles it again, with the same answer.
    expect(checkAgainstSchema({ type: "object", properties: { field0: { type: "integer" } }, required: ["field0"] }, {})).toMatchObject({
      valid: false,
    });
  });

  it("holds at most 8 Mi characters of schemas: large ones push the oldest out, and one larger than that is not kept", ({ expect }) => {
    const large = (n: number, chars: number) => ({ type: "string", description: `${n}`.padEnd(chars, "x") });
    for (let n = 0; n < 12; n++) expect(checkAgainstSchema(large(n, MiB), "text")).toEqual({ valid: true });
    expect(validatorCache.weight).toBeLessThanOrEqual(8 * MiB);
    expect(validatorCache.size).toBeLessThan(12);
    const before = validatorCache.weight;
    expect(checkAgainstSchema(large(99, 9 * MiB), 7)).toMatchObject({ valid: false });
    expect(validatorCache.weight).toBeLessThanOrEqual(before);
  });

  it("holds at most 500 compiled patterns, and still matches each one right", ({ expect }) => {
    for (let n = 0; n < 520; n++) {
      const schema = { type: "string", pattern: `^id-${n}-[a-z]+$` };
      expect(checkAgainstSchema(schema, `id-${n}-abc`)).toEqual({ valid: true });
      expect(checkAgainstSchema(schema, `id-${n}-ABC`)).toMatchObject({ valid: false });
    }
    expect(linearPatternCache.size).toBe(500);
    expect(linearPatternCache.weight).toBeLessThanOrEqual(4 * MiB);
    expect(checkAgainstSchema({ type: "string", pattern: "^id-0-[a-z]+$" }, "id-0-x")).toEqual({ valid: true });
  });
});
