// The console checks a hook's module shape as the author types (console/src/hooks/shape.ts). Here each of
// its findings is held against the real compiler on the same source: same code, same message, same line,
// and nothing it flags compiles. Where it cannot be sure (a default export of a variable) it stays quiet
// and leaves the verdict to the compiler.
import { describe, it } from "vitest";
import { checkHookShape } from "../../../console/src/hooks/shape.ts";
import { compileHook } from "./compiler.compile.ts";
import { SEARCH_TOOL } from "./compiler.fixtures.ts";

const GOOD = `export default defineToolAdapter({
  apiVersion: "rayrun.hooks/v1",
  before({ arguments: args }) {
    // export const not_really = 1; import "nothing" — only a comment
    const text = \`export function \${"x"}() {} import("y")\`;
    const re = /export default \\{/;
    return { action: "continue", arguments: { ...args, text, re: String(re) } };
  },
});
`;

const CASES: { name: string; source: string; codes: string[] }[] = [
  { name: "a named export", source: `${GOOD}export function before() {}\n`, codes: ["export_forbidden"] },
  { name: "an exported const", source: `${GOOD}export const limit = 3;\n`, codes: ["export_forbidden"] },
  { name: "an export list", source: `const a = 1;\n${GOOD}export { a };\n`, codes: ["export_forbidden"] },
  {
    name: "no default export",
    source: "export function before(input: unknown) {\n  return input;\n}\n",
    codes: ["export_forbidden", "default_export_missing"],
  },
  {
    name: "a plain object as the default",
    source: 'export default { apiVersion: "rayrun.hooks/v1" };\n',
    codes: ["default_export_not_adapter"],
  },
  { name: "an import", source: `import x from "lodash";\n${GOOD}`, codes: ["import_forbidden"] },
  { name: "a re-export", source: `${GOOD}export * from "./other";\n`, codes: ["import_forbidden"] },
  { name: "require", source: `const fs = require("fs");\n${GOOD}`, codes: ["require_forbidden"] },
  { name: "a dynamic import", source: `${GOOD}const later = import("./x");\n`, codes: ["dynamic_import_forbidden"] },
];

describe("the console's shape check as you type", () => {
  it("finds nothing in a hook the compiler accepts, whatever its strings, comments and regular expressions say", async ({ expect }) => {
    const compiled = await compileHook({ source: GOOD, config: {}, upstreamDefinition: SEARCH_TOOL });
    expect(compiled.ok).toBe(true);
    expect(checkHookShape(GOOD)).toEqual([]);
    // A default export of a variable may be an adapter: the console leaves it to the compiler.
    expect(checkHookShape("const adapter = defineToolAdapter({ apiVersion: 'rayrun.hooks/v1' });\nexport default adapter;\n")).toEqual([]);
  });

  for (const { name, source, codes } of CASES) {
    it(`reports ${name} as the compiler does`, async ({ expect }) => {
      const live = checkHookShape(source);
      expect(live.map((problem) => /\[(\w+)\]$/.exec(problem.message)?.[1])).toEqual(codes);
      const compiled = await compileHook({ source, config: {}, upstreamDefinition: SEARCH_TOOL });
      if (compiled.ok) throw new Error(`the compiler accepted ${name}`);
      for (const problem of live) {
        const code = /\[(\w+)\]$/.exec(problem.message)![1];
        const same = compiled.diagnostics.find((diagnostic) => diagnostic.code === code);
        expect(same, `${name}: the compiler says ${JSON.stringify(compiled.diagnostics)}`).toBeDefined();
        expect(problem.message).toBe(`${same!.message} [${code}]`);
        if (same!.line !== undefined) expect(problem.line).toBe(same!.line);
      }
    });
  }
});
