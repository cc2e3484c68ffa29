import { rejectImports, toClassicScript, toDiagnostic, WARNINGS_AS_ERRORS } from "./compiler.checks.ts";
import type { Diagnostic } from "./compiler.diagnostics.ts";
import { EsbuildStackOverflowError, isBuildFailure, withEsbuild, type esbuild } from "./compiler.esbuild.ts";
import { checkSourceShape, checkSourceSize, utf8Length } from "./compiler.inputs.ts";
import { COMPILED_MAX_BYTES } from "./compiler.limits.ts";

/** Name esbuild gives a Code Mode program in its messages. */
const PROGRAM_FILE = "program.ts";
/** The program is the body of this function; its one line comes before the program's first. */
const PROGRAM_HEAD = "export default async function __rayrun_program(tools, console) {\n";
const PROGRAM_TAIL = "\n}\n";

export type ProgramCompileResult = { ok: true; script: string } | { ok: false; diagnostics: Diagnostic[] };

/**
 * Compiles a Code Mode program, an async function body in TypeScript or
 * JavaScript, with the hook compiler's checks: the same size and nesting
 * bounds before parsing, esbuild's transpile, and every module reference
 * refused. The result is a "rayrun bundle v1" classic script whose default
 * export is `async (tools, console) => value`. Positions are the program's own
 * (1-based line and column). Throws `CompilerUnavailableError` when esbuild
 * itself failed.
 */
export async function compileProgram(source: string): Promise<ProgramCompileResult> {
  const sizeProblems = checkSourceSize(source);
  if (sizeProblems.length > 0) return { ok: false, diagnostics: sizeProblems };
  const shapeProblems = checkSourceShape(source);
  if (shapeProblems.length > 0) return { ok: false, diagnostics: shapeProblems };

  const lines = source.split("\n").length;
  let result: esbuild.BuildResult<{ metafile: true; write: false }>;
  try {
    result = await withEsbuild((esbuild) =>
      esbuild.build({
        stdin: { contents: PROGRAM_HEAD + source + PROGRAM_TAIL, loader: "ts", sourcefile: PROGRAM_FILE },
        bundle: true,
        write: false,
        metafile: true,
        format: "esm",
        platform: "neutral",
        target: "es2022",
        tsconfigRaw: { compilerOptions: { verbatimModuleSyntax: true } },
        logLevel: "silent",
        logOverride: Object.fromEntries(Object.keys(WARNINGS_AS_ERRORS).map((id) => [id, "error" as const])),
        plugins: [rejectImports("a program is one self-contained function body; reach tools through `tools`")],
      }),
    );
  } catch (error) {
    if (isBuildFailure(error)) return { ok: false, diagnostics: error.errors.map((message) => programDiagnostic(message, lines)) };
    if (error instanceof EsbuildStackOverflowError) {
      return { ok: false, diagnostics: [{ code: "nesting_too_deep", message: "the program is nested too deeply to compile" }] };
    }
    throw error;
  }
  const exports = Object.values(result.metafile.outputs)[0]?.exports ?? [];
  const extra = exports.filter((name) => name !== "default");
  if (extra.length > 0) {
    return {
      ok: false,
      diagnostics: extra.map((name) => ({
        code: "export_forbidden",
        message: `export "${name}" is not allowed: a program exports nothing`,
      })),
    };
  }
  const output = result.outputFiles[0];
  if (!output) throw new Error("esbuild produced no output");
  const script = await toClassicScript(output.text);
  const bytes = utf8Length(script);
  if (bytes > COMPILED_MAX_BYTES) {
    return {
      ok: false,
      diagnostics: [{ code: "compiled_too_large", message: `the compiled program is ${bytes} bytes, over ${COMPILED_MAX_BYTES}` }],
    };
  }
  return { ok: true, script };
}

/** A statement-level `import` or `export`: legal in a module, a syntax error inside a function body. */
const MODULE_STATEMENT = /^(\s*)(import|export)\b(?!\s*[(.])/;

/**
 * esbuild's diagnostic in the program's own coordinates. Inside the wrapping
 * function an `import` declaration is only a syntax error, so an error on a
 * line that starts one is reported as what it is, at the keyword.
 */
function programDiagnostic(message: esbuild.Message, lines: number): Diagnostic {
  const diagnostic = toDiagnostic(message);
  if (diagnostic.line === undefined) return diagnostic;
  const line = Math.min(Math.max(diagnostic.line - 1, 1), lines);
  const statement = MODULE_STATEMENT.exec(message.location?.lineText ?? "");
  if (diagnostic.code === "syntax_error" && statement && line === diagnostic.line - 1) {
    const keyword = statement[2] as "import" | "export";
    return {
      code: keyword === "import" ? "import_forbidden" : "export_forbidden",
      message: `${keyword} declarations are not allowed: a program is one self-contained function body; reach tools through \`tools\``,
      line,
      column: (statement[1]?.length ?? 0) + 1,
    };
  }
  return { ...diagnostic, line };
}
