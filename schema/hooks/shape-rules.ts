/**
 * What the compiler says when a hook's source breaks the module shape of `rayrun.hooks/v1`: one
 * self-contained file whose only export is `export default defineToolAdapter({ ... })`. The compiler
 * (worker/hooks/compiler) and the console's check as you type (console/src/hooks/shape.ts) both say it
 * with these words, so the two never disagree. Pure: usable in the Worker, the console and Node.
 */
export const SHAPE_MESSAGES = {
  /** Why any module reference is refused. */
  selfContained: "a hook is a single self-contained file",
  importForbidden: (what: "import" | "require()" | "import()", specifier: string, why: string) =>
    `${what} of "${specifier}" is not allowed: ${why}`,
  exportForbidden: (name: string) => `export "${name}" is not allowed: a hook exports only \`default\` (its defineToolAdapter(...))`,
  defaultExportMissing: "a hook must `export default defineToolAdapter({ ... })`",
  defaultExportNotAdapter: "the default export must be the value of defineToolAdapter({ ... })",
  commonjsForbidden: "CommonJS (`module`, `exports`, top-level `return`) is not allowed: use `export default defineToolAdapter(...)`",
} as const;
