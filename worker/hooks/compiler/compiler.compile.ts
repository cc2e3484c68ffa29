import { deepCompareStrict } from "@cfworker/json-schema";
import { HOOK_API_VERSION, type HookStage } from "../../../schema/hooks/contract.ts";
import { evaluateAdapter } from "../isolate/index.ts";
import { checkSource, locateExport, toClassicScript } from "./compiler.checks.ts";
import { type PublicContract, validatePublicContract } from "./compiler.contract.ts";
import { type Diagnostic, type DiagnosticCode, statusFor } from "./compiler.diagnostics.ts";
import { CompilerUnavailableError } from "./compiler.esbuild.ts";
import { checkConfig, checkSourceShape, checkSourceSize, utf8Length } from "./compiler.inputs.ts";
import { COMPILED_MAX_BYTES } from "./compiler.limits.ts";
import type { UpstreamToolDefinition } from "./compiler.types.ts";
import { SHAPE_MESSAGES } from "../../../schema/hooks/shape-rules.ts";

export interface CompileInput {
  source: string;
  config: unknown;
  upstreamDefinition: UpstreamToolDefinition;
}

export interface CompileSuccess {
  ok: true;
  /** "rayrun bundle v1": a classic script that leaves the adapter at `globalThis.__rayrun.default`. */
  bundle: string;
  compiledBytes: number;
  stages: HookStage[];
  contract: PublicContract | null;
  /** Which parts of the upstream definition the public contract changes. */
  replaces: { description: boolean; inputSchema: boolean; outputSchema: boolean };
  /** SHA-256 (hex) of the source as compiled. */
  sourceHash: string;
}

export interface CompileFailure {
  ok: false;
  status: 413 | 422;
  diagnostics: Diagnostic[];
}

export type CompileResult = CompileSuccess | CompileFailure;

/**
 * Compiles a hook: sizes first (nothing parses an oversized input), then its
 * nesting on the text (nothing recursive sees a too deeply nested one), then
 * esbuild's transpile and static checks, then one bounded evaluation of the
 * module's top level in QuickJS to read the adapter's apiVersion, stages and
 * publicContract. The contract is fixed here, with the revision: a hook cannot
 * change its public definition per request. Throws `CompilerUnavailableError`
 * when esbuild itself failed, or no QuickJS instance could be had for the
 * evaluation (not the source): the caller answers 503.
 */
export async function compileHook({ source, config, upstreamDefinition }: CompileInput): Promise<CompileResult> {
  const inputProblems = [...checkSourceSize(source), ...checkConfig(config)];
  if (inputProblems.length > 0) return failure(inputProblems);
  const shapeProblems = checkSourceShape(source);
  if (shapeProblems.length > 0) return failure(shapeProblems);

  const checked = await checkSource(source);
  if (!checked.ok) return failure(checked.diagnostics);

  const bundle = await toClassicScript(checked.esm);
  const compiledBytes = utf8Length(bundle);
  if (compiledBytes > COMPILED_MAX_BYTES) {
    return failure([{ code: "compiled_too_large", message: `the compiled hook is ${compiledBytes} bytes, over ${COMPILED_MAX_BYTES}` }]);
  }

  const evaluated = await evaluateAdapter({ bundle });
  if (!evaluated.ok && evaluated.unavailable) throw new CompilerUnavailableError(evaluated.error.message);
  if (!evaluated.ok) return failure([topLevelFailure(evaluated.error)]);
  if (!evaluated.adapter.builtByDefineToolAdapter) {
    const position = await locateExport(source, "default");
    return failure([{ code: "default_export_not_adapter", message: SHAPE_MESSAGES.defaultExportNotAdapter, ...position }]);
  }
  const { adapter } = evaluated;

  const problems: Diagnostic[] = [];
  if (adapter.apiVersion !== HOOK_API_VERSION) {
    problems.push({
      code: "api_version_unsupported",
      message: `apiVersion must be "${HOOK_API_VERSION}", not ${JSON.stringify(adapter.apiVersion) ?? "undefined"}`,
    });
  }
  if (adapter.stages.length === 0) {
    problems.push({ code: "no_stages", message: "the adapter defines neither before nor after" });
  }
  const contract = validatePublicContract(adapter.publicContract);
  if (!contract.ok) problems.push(...contract.diagnostics);
  if (problems.length > 0 || !contract.ok) return failure(problems);

  return {
    ok: true,
    bundle,
    compiledBytes,
    stages: adapter.stages,
    contract: contract.contract,
    replaces: replacedParts(contract.contract, upstreamDefinition),
    sourceHash: await sha256Hex(source),
  };
}

function failure(diagnostics: Diagnostic[]): CompileFailure {
  return { ok: false, status: statusFor(diagnostics), diagnostics };
}

/**
 * The isolate reports a default export that is not an object at all (e.g.
 * `export default 42`) as an exception from its own driver, after the top
 * level ran; its message is the only way to tell it from a throwing top level.
 */
/** The isolate's error codes for the top-level run, under the compiler's names. */
const TOP_LEVEL_CODES: Record<string, DiagnosticCode> = {
  timeout: "top_level_timeout",
  memory_exceeded: "top_level_memory",
  stack_overflow: "top_level_stack_overflow",
};

function topLevelFailure(error: { code: string; message: string }): Diagnostic {
  const code = TOP_LEVEL_CODES[error.code] ?? "top_level_exception";
  return { code, message: `evaluating the hook's top level failed: ${error.message}` };
}

/** A part is replaced when the contract sets it to something other than the upstream's. */
function replacedParts(contract: PublicContract | null, upstream: UpstreamToolDefinition): CompileSuccess["replaces"] {
  const differs = (mine: unknown, theirs: unknown) => mine !== undefined && !deepCompareStrict(mine, theirs);
  return {
    description: differs(contract?.description, upstream.description),
    inputSchema: differs(contract?.inputSchema, upstream.inputSchema),
    outputSchema: differs(contract?.outputSchema, upstream.outputSchema),
  };
}

async function sha256Hex(text: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
  return [...new Uint8Array(digest)].map((byte) => byte.toString(16).padStart(2, "0")).join("");
}
