import { CompilerUnavailableError, compileProgram, type Diagnostic } from "../hooks/compiler/index.ts";
import { sha256Hex } from "../lib/crypto.ts";
import { WeightedLru } from "../lib/lru.ts";
import type { CodeModeError } from "./codemode.errors.ts";
import { CODE_MODE_SHARE } from "./codemode.limits.ts";

/** A program ready to run, or why it cannot run. */
export type CompiledProgram = { ok: true; script: string } | { ok: false; error: CodeModeError };

/**
 * Compiled programs of this Worker isolate, keyed by workspace and SHA-256 of
 * the source: an agent that runs the same program again does not pay esbuild
 * again, and one workspace never learns from a cache hit what another ran. A
 * program that does not compile is kept too (its diagnostics); esbuild failing is not.
 */
const cache = new WeightedLru<CompiledProgram>(CODE_MODE_SHARE.cachedPrograms, CODE_MODE_SHARE.cachedProgramChars);

/** The program compiled, from the cache or by esbuild now (`compiled` says which). */
export async function compiledProgram(workspaceId: string, source: string): Promise<{ program: CompiledProgram; compiled: boolean }> {
  const key = `${workspaceId}:${await sha256Hex(source)}`;
  const hit = cache.get(key);
  if (hit) return { program: hit, compiled: false };
  let program: CompiledProgram;
  try {
    const result = await compileProgram(source);
    program = result.ok ? { ok: true, script: result.script } : { ok: false, error: compileFailure(result.diagnostics) };
  } catch (error) {
    if (!(error instanceof CompilerUnavailableError)) throw error;
    // esbuild itself failed, not the program; a fresh service is started for the next run.
    console.error("code mode compiler unavailable", error);
    const message = "The compiler failed and is being restarted, not because of the program; run it again";
    return { program: { ok: false, error: { code: "compiler_unavailable", message, details: { retryAfterSeconds: 1 } } }, compiled: true };
  }
  cache.set(key, program, program.ok ? program.script.length : JSON.stringify(program.error).length);
  return { program, compiled: true };
}

function compileFailure(diagnostics: Diagnostic[]): CodeModeError {
  const first = diagnostics[0];
  const where = first?.line !== undefined ? ` (line ${first.line}, column ${first.column})` : "";
  return {
    code: "compile_failed",
    message: `The program does not compile: ${first?.message ?? "unknown error"}${where}`,
    details: { diagnostics },
  };
}
