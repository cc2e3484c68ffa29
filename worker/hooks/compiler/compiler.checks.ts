import { SHAPE_MESSAGES } from "../../../schema/hooks/shape-rules.ts";
import type { Diagnostic, DiagnosticCode } from "./compiler.diagnostics.ts";
import { type esbuild, EsbuildStackOverflowError, isBuildFailure, withEsbuild } from "./compiler.esbuild.ts";

/** Name esbuild gives the hook's source in its messages. */
const SOURCE_FILE = "hook.ts";
const PLUGIN_NAME = "rayrun-no-imports";

export type StaticCheckResult = { ok: true; esm: string } | { ok: false; diagnostics: Diagnostic[] };

/** Import kinds esbuild reports to resolve hooks, mapped to our codes. */
const IMPORT_KIND_CODES: Partial<Record<esbuild.ImportKind, DiagnosticCode>> = {
  "import-statement": "import_forbidden",
  "require-call": "require_forbidden",
  "require-resolve": "require_forbidden",
  "dynamic-import": "dynamic_import_forbidden",
};

/**
 * Every module reference is an error: a hook is one self-contained file. esbuild
 * calls this for `import`, `export … from`, `require("x")` and `import("x")`
 * with a string literal, and attaches the position of the specifier.
 */
export const rejectImports = (why: string): esbuild.Plugin => ({
  name: PLUGIN_NAME,
  setup(build) {
    build.onResolve({ filter: /.*/ }, (args) => {
      const code = IMPORT_KIND_CODES[args.kind] ?? "import_forbidden";
      const what = code === "require_forbidden" ? "require()" : code === "dynamic_import_forbidden" ? "import()" : "import";
      return { errors: [{ text: SHAPE_MESSAGES.importForbidden(what, args.path, why), detail: code }] };
    });
  },
});

const rejectEveryImport = rejectImports(SHAPE_MESSAGES.selfContained);

/** esbuild warnings that we turn into errors, with the code they map to. */
export const WARNINGS_AS_ERRORS: Record<string, DiagnosticCode> = {
  // require(expr) / import(expr) with a computed argument are not bundled, only warned about.
  "unsupported-require-call": "require_forbidden",
  "unsupported-dynamic-import": "dynamic_import_forbidden",
};

/**
 * Transpiles and checks the hook in one esbuild build: TypeScript syntax,
 * module references, top-level await (the bundle is a classic script), and the
 * module's format and export names from the metafile. All positions come from
 * esbuild itself.
 */
export async function checkSource(source: string): Promise<StaticCheckResult> {
  let result: esbuild.BuildResult<{ metafile: true; write: false }>;
  try {
    result = await withEsbuild((esbuild) =>
      esbuild.build({
        stdin: { contents: source, loader: "ts", sourcefile: SOURCE_FILE },
        bundle: true,
        write: false,
        metafile: true,
        format: "esm",
        platform: "neutral",
        target: "es2022",
        supported: { "top-level-await": false },
        // Keep every value import (TypeScript would drop unused ones) so each is reported.
        tsconfigRaw: { compilerOptions: { verbatimModuleSyntax: true } },
        logLevel: "silent",
        logOverride: Object.fromEntries(Object.keys(WARNINGS_AS_ERRORS).map((id) => [id, "error" as const])),
        plugins: [rejectEveryImport],
      }),
    );
  } catch (error) {
    if (isBuildFailure(error)) return { ok: false, diagnostics: error.errors.map(toDiagnostic) };
    // A shape compiler.shape.ts does not count still overflowed esbuild's stack (on a fresh service, too).
    if (error instanceof EsbuildStackOverflowError) {
      return { ok: false, diagnostics: [{ code: "nesting_too_deep", message: "the source is nested too deeply to compile" }] };
    }
    throw error;
  }
  const output = result.outputFiles[0];
  const input = result.metafile.inputs[SOURCE_FILE];
  const exportNames = Object.values(result.metafile.outputs)[0]?.exports ?? [];
  if (!output) throw new Error("esbuild produced no output");
  if (input?.format === "cjs") {
    return {
      ok: false,
      diagnostics: [{ code: "commonjs_forbidden", message: SHAPE_MESSAGES.commonjsForbidden }],
    };
  }
  const diagnostics = await checkExports(source, exportNames);
  if (diagnostics.length > 0) return { ok: false, diagnostics };
  return { ok: true, esm: output.text };
}

export function toDiagnostic(message: esbuild.Message): Diagnostic {
  const code = codeOf(message);
  const text =
    code === "top_level_await_forbidden" ? "top-level await is not allowed: a hook's top level runs synchronously" : message.text;
  return { code, message: text, ...positionOf(message.location) };
}

function codeOf(message: esbuild.Message): DiagnosticCode {
  if (message.pluginName === PLUGIN_NAME && typeof message.detail === "string") return message.detail as DiagnosticCode;
  const fromWarning = WARNINGS_AS_ERRORS[message.id];
  if (fromWarning) return fromWarning;
  // esbuild gives this error no id; its text is the only stable handle.
  if (message.text.startsWith("Top-level await")) return "top_level_await_forbidden";
  return "syntax_error";
}

function positionOf(location: esbuild.Location | null | undefined): Pick<Diagnostic, "line" | "column"> {
  return location ? toPosition(location) : {};
}

/** Only `default` may be exported; every other export is reported where it is declared. */
async function checkExports(source: string, exportNames: readonly string[]): Promise<Diagnostic[]> {
  const extra = exportNames.filter((name) => name !== "default");
  const positions = extra.length > 0 ? await locateExports(source, extra) : new Map<string, Position>();
  const diagnostics: Diagnostic[] = extra.map((name) => ({
    code: "export_forbidden",
    message: SHAPE_MESSAGES.exportForbidden(name),
    ...positions.get(name),
  }));
  if (!exportNames.includes("default")) {
    diagnostics.push({ code: "default_export_missing", message: SHAPE_MESSAGES.defaultExportMissing });
  }
  return diagnostics;
}

type Position = { line: number; column: number };

const utf8 = new TextEncoder();
const utf8Decoder = new TextDecoder();

/**
 * esbuild counts lines from 1 and columns from 0 in UTF-8 bytes; diagnostics
 * count both from 1, columns in UTF-16 code units, as editors do.
 */
function toPosition(location: esbuild.Location): Position {
  const before = utf8.encode(location.lineText).subarray(0, location.column);
  return { line: location.line, column: utf8Decoder.decode(before).length + 1 };
}

/** Positions are looked up for at most this many extra exports (each costs one esbuild parse). */
const MAX_LOCATED_EXPORTS = 10;

async function locateExports(source: string, names: readonly string[]): Promise<Map<string, Position>> {
  const positions = new Map<string, Position>();
  for (const name of names.slice(0, MAX_LOCATED_EXPORTS)) {
    const position = await locateExport(source, name);
    if (position) positions.set(name, position);
  }
  return positions;
}

/**
 * esbuild's metafile lists export names but not where they are declared. To
 * get the position from esbuild anyway, append a second export of the name:
 * esbuild rejects the duplicate, and its note points at the original export.
 * Appending keeps every original position unchanged.
 */
export async function locateExport(source: string, name: string): Promise<Position | undefined> {
  const probe = unusedIdentifier(source);
  try {
    await withEsbuild((esbuild) =>
      esbuild.transform(`${source}\n;const ${probe} = 0;\nexport { ${probe} as ${JSON.stringify(name)} };\n`, {
        loader: "ts",
        format: "esm",
        sourcefile: SOURCE_FILE,
        logLevel: "silent",
      }),
    );
  } catch (error) {
    if (!isBuildFailure(error)) throw error;
    for (const message of error.errors) {
      const original = message.notes[0]?.location;
      if (original) return toPosition(original);
    }
  }
  return undefined;
}

function unusedIdentifier(source: string): string {
  let name = "__rayrun_export_probe";
  while (source.includes(name)) name += "_";
  return name;
}

const BUNDLE_BANNER = '// rayrun bundle v1\n"use strict";';

/** How esbuild's ESM bundle ends when `default` is the only export. */
const TRAILING_DEFAULT_EXPORT = /\nexport \{\n {2}([A-Za-z_$][\w$]*) as default\n\};\n$/;

/**
 * "rayrun bundle v1": a classic script leaving the module namespace at
 * `globalThis.__rayrun`, strict as the module it came from. The checked ESM
 * bundle has no imports and, at its end, one `export { name as default }`
 * clause: wrapping it directly gives what esbuild's iife format would, without
 * a second esbuild call (a third of a warm compile). Any other shape goes
 * through esbuild.
 */
export async function toClassicScript(esm: string): Promise<string> {
  const trailing = TRAILING_DEFAULT_EXPORT.exec(esm);
  if (trailing) {
    const body = esm.slice(0, trailing.index);
    return `${BUNDLE_BANNER}\nvar __rayrun = (() => {\n${body}\nreturn { default: ${trailing[1]} };\n})();\n`;
  }
  const result = await withEsbuild((esbuild) =>
    esbuild.transform(esm, {
      loader: "js",
      format: "iife",
      globalName: "__rayrun",
      target: "es2022",
      banner: BUNDLE_BANNER,
      logLevel: "silent",
    }),
  );
  return result.code;
}
