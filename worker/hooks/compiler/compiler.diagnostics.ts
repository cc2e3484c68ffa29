/**
 * Compiler diagnostics: one stable machine code per rejection reason, plus the
 * source position (1-based line and column, from esbuild's own locations) or the
 * JSON pointer inside `publicContract` when one exists.
 */
export type DiagnosticCode =
  | "source_too_large"
  | "config_too_large"
  | "config_not_object"
  | "syntax_error"
  | "nesting_too_deep"
  | "import_forbidden"
  | "require_forbidden"
  | "dynamic_import_forbidden"
  | "top_level_await_forbidden"
  | "commonjs_forbidden"
  | "export_forbidden"
  | "default_export_missing"
  | "default_export_not_adapter"
  | "api_version_unsupported"
  | "no_stages"
  | "invalid_public_contract"
  | "schema_pattern_forbidden"
  | "schema_too_complex"
  | "top_level_timeout"
  | "top_level_memory"
  | "top_level_stack_overflow"
  | "top_level_exception"
  | "compiled_too_large";

export interface Diagnostic {
  code: DiagnosticCode;
  message: string;
  /** 1-based line in the hook source. */
  line?: number;
  /** 1-based column, in UTF-16 code units, as editors count. */
  column?: number;
  /** JSON pointer into `publicContract`, e.g. `/inputSchema/$defs/a/pattern`. */
  pointer?: string;
}

/** Codes that mean "too big to look at" (HTTP 413, under the code itself); everything else is 422. */
export type OversizeCode = "source_too_large" | "config_too_large" | "compiled_too_large";
const OVERSIZE_CODES: ReadonlySet<DiagnosticCode> = new Set<OversizeCode>(["source_too_large", "config_too_large", "compiled_too_large"]);

export const isOversize = (diagnostic: Diagnostic): diagnostic is Diagnostic & { code: OversizeCode } =>
  OVERSIZE_CODES.has(diagnostic.code);

export function statusFor(diagnostics: readonly Diagnostic[]): 413 | 422 {
  return diagnostics.some(isOversize) ? 413 : 422;
}
