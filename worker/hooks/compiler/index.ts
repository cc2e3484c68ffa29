/** The hook compiler: what routes and the hook lifecycle call. */
export { compileHook, type CompileFailure, type CompileInput, type CompileResult, type CompileSuccess } from "./compiler.compile.ts";
export { compileProgram, type ProgramCompileResult } from "./compiler.program.ts";
export { isOversize, type Diagnostic, type DiagnosticCode } from "./compiler.diagnostics.ts";
export { CompilerUnavailableError } from "./compiler.esbuild.ts";
export { formatHookSource, type FormatOutcome, type FormatSkipped } from "./compiler.format.ts";
export { COMPILED_MAX_BYTES, CONFIG_MAX_BYTES, FORMAT_MAX_BYTES, SOURCE_MAX_BYTES } from "./compiler.limits.ts";
export type { PublicContract } from "./compiler.contract.ts";
export {
  DECLARATIONS_MAX_CHARS,
  DeclarationsTooLargeError,
  generateToolDeclarations,
  type UpstreamToolDefinition,
} from "./compiler.types.ts";
