import { describe, it } from "vitest";
import { chainedTernariesSource, nestedBracketsSource, prettierPathologicalSource } from "./compiler.attacks.fixtures.ts";
import { RELEASE_NOTES_HOOK } from "./compiler.fixtures.ts";
import { COMPILE_SHAPE, FORMAT_SHAPE } from "./compiler.limits.ts";
import { findShapeProblem } from "./compiler.shape.ts";

const limits = { nesting: 4, arrowNesting: 2, expressionTokens: 12 };

describe("findShapeProblem", () => {
  it("passes ordinary hooks", ({ expect }) => {
    expect(findShapeProblem(RELEASE_NOTES_HOOK, COMPILE_SHAPE)).toBeNull();
    expect(findShapeProblem(RELEASE_NOTES_HOOK, FORMAT_SHAPE)).toBeNull();
  });

  it("reports the first bracket past the nesting bound, with its line and column", ({ expect }) => {
    expect(findShapeProblem("f([{a: (1)}]);", limits)).toBeNull();
    expect(findShapeProblem("const x = 1;\n  f([{a: [(1)]}]);", limits)).toEqual({ kind: "nesting", limit: 4, line: 2, column: 11 });
  });

  it("counts conditionals and arrows as nesting until their expression ends", ({ expect }) => {
    expect(findShapeProblem("x = a ? b : c ? d : e ? f : g ? h : i ? j : k;", { ...limits, expressionTokens: 100 })).toEqual({
      kind: "nesting",
      limit: 4,
      line: 1,
      column: 39,
    });
    expect(findShapeProblem("x = a ? b : c;\ny = a ? b : c;\nz = a ? b : c, w = a ? b : c;", limits)).toBeNull();
    expect(findShapeProblem("f(a => b => c => 1);", limits)).toEqual({ kind: "arrow_nesting", limit: 2, line: 1, column: 15 });
    expect(findShapeProblem("f(a => 1, b => 2, c => 3);", limits)).toBeNull();
  });

  it("does not count optional chaining, nullish coalescing or optional markers as conditionals", ({ expect }) => {
    expect(findShapeProblem("interface A { a?: string; b?: number }\nf(x?.y ?? z?.w, (p?: number) => p);", limits)).toBeNull();
  });

  it("ignores brackets in strings, comments, regular expressions and template text", ({ expect }) => {
    const source = `const a = "((((((", b = '[[[[[[';\n// {{{{{{\n/* (((((( */\nconst r = /[(((((]\\(\\(/g;\nconst t = \`((((((\${ (1) }((((\`;\n`;
    expect(findShapeProblem(source, limits)).toBeNull();
  });

  it("counts template literals nested through ${}", ({ expect }) => {
    // Each level is two: the literal and its `${`.
    expect(findShapeProblem("x = `${`${1}`}`;", limits)).toBeNull();
    expect(findShapeProblem("x = `${`${`1`}`}`;", limits)).toMatchObject({ kind: "nesting", column: 11 });
  });

  it("bounds the tokens of one expression, across lines that continue it", ({ expect }) => {
    expect(findShapeProblem(`x = 1${" + 1".repeat(6)};`, limits)).toMatchObject({ kind: "expression_tokens", limit: 12 });
    expect(findShapeProblem(`x = 1${"\n  + 1".repeat(6)};`, limits)).toMatchObject({ kind: "expression_tokens", line: 6 });
    expect(findShapeProblem(`x${"\n  .a()".repeat(5)}`, limits)).toMatchObject({ kind: "expression_tokens" });
    // Statements without semicolons end at the newline between two operands.
    expect(findShapeProblem("let a = 1 + 2 + 3\nlet b = 1 + 2 + 3\nlet c = 1 + 2 + 3\n", limits)).toBeNull();
  });

  it("stops the attack inputs in one linear pass", ({ expect }) => {
    expect(findShapeProblem(nestedBracketsSource(), COMPILE_SHAPE)).toMatchObject({ kind: "nesting", line: 1, column: 15 + 65 });
    expect(findShapeProblem(chainedTernariesSource(), COMPILE_SHAPE)).toMatchObject({ kind: "nesting" });
    expect(findShapeProblem(prettierPathologicalSource(), COMPILE_SHAPE)).toBeNull();
    expect(findShapeProblem(prettierPathologicalSource(), FORMAT_SHAPE)).toMatchObject({ kind: "arrow_nesting", limit: 12 });
  });
});
