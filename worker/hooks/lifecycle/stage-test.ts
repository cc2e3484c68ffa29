import type { HookStage, JsonObject as ContractJsonObject, JsonValue } from "../../../schema/hooks/contract.ts";
import { checkAgainstSchema } from "../../lib/json-schema.ts";
import type { ToolRecord } from "../../tools/tools.store.ts";
import type { PublicContract } from "../compiler/index.ts";
import { runStage, type StageContextInput, type StageRun } from "../isolate/index.ts";
import { afterInput, beforeInput, stageContext } from "../stage-call.ts";
import { ApiError } from "../../http/errors.ts";
import type { JsonObject } from "./lifecycle.types.ts";

export interface SchemaCheckReport {
  target: "publicArguments" | "upstreamArguments" | "upstreamResult" | "publicResult";
  schema: "public" | "upstream";
  valid: boolean;
  errors: { pointer: string; message: string }[];
}

export interface StageTest {
  run: StageRun;
  validation: { valid: boolean; checks: SchemaCheckReport[] };
  /** What a revision requires: the stage ran without an isolate error and every check held. */
  passed: boolean;
}

export interface StageTestInput {
  workspaceId: string;
  tool: ToolRecord;
  bundle: string;
  contract: PublicContract | null;
  /** The stages the compiled draft defines. */
  stages: HookStage[];
  stage: HookStage;
  /** The client's public arguments. */
  arguments: JsonObject;
  /** For `after`: the arguments sent upstream; derived as live when absent. */
  upstreamArguments?: JsonObject;
  result: unknown;
  config: JsonObject;
}

function check(
  target: SchemaCheckReport["target"],
  publicSchema: Record<string, unknown> | undefined,
  upstreamSchema: Record<string, unknown> | undefined,
  value: unknown,
): SchemaCheckReport | null {
  const schema = publicSchema ?? upstreamSchema;
  if (!schema) return null;
  let outcome: ReturnType<typeof checkAgainstSchema>;
  try {
    outcome = checkAgainstSchema(schema, value);
  } catch (error) {
    // A schema the validator cannot apply fails the check: a test never passes on an unchecked value.
    outcome = { valid: false, violations: [{ pointer: "", message: `schema could not be applied: ${String(error)}` }] };
  }
  return {
    target,
    schema: publicSchema ? "public" : "upstream",
    valid: outcome.valid,
    errors: outcome.valid
      ? []
      : "breach" in outcome
        ? // The live call would refuse as schema_too_complex: the test fails with the same bound.
          [{ pointer: "", message: `schema_too_complex (${outcome.breach.bound}): ${outcome.breach.message}` }]
        : outcome.violations,
  };
}

/**
 * Runs one stage of a compiled draft as the call path would, with no upstream
 * call: the same context and the same stage input as live (worker/hooks/stage-call.ts).
 * `after` receives the caller's mock result, the caller's public arguments, and
 * the arguments that would go upstream: the caller's `upstreamArguments`, else
 * what the draft's own `before` returns for the public arguments (as live), else
 * the public arguments themselves. Then checks each value the call path would
 * check: the public arguments, the transformed arguments against the upstream
 * inputSchema, the mock against the upstream outputSchema, and the returned
 * result against the public (else upstream) outputSchema.
 */
export async function testStage(input: StageTestInput): Promise<StageTest> {
  const { tool, contract } = input;
  const upstream = tool.definition;
  const publicArguments = input.arguments as ContractJsonObject;
  const call = { calledAt: new Date().toISOString(), requestId: `test_${crypto.randomUUID()}`, workspaceId: input.workspaceId, tool };
  const context = stageContext(call, input.config as ContractJsonObject);
  const stageInput =
    input.stage === "before"
      ? beforeInput(publicArguments)
      : afterInput(
          publicArguments,
          (input.upstreamArguments as ContractJsonObject | undefined) ?? (await upstreamArgumentsFromBefore(input, context)),
          input.result as JsonValue,
        );
  const run = await runStage({ bundle: input.bundle, stage: input.stage, input: stageInput, context });

  const checks: (SchemaCheckReport | null)[] = [];
  const value = run.value;
  if (input.stage === "before") {
    checks.push(check("publicArguments", contract?.inputSchema, upstream.inputSchema, input.arguments));
    if (value && (value.action === "continue" || value.action === "require_approval")) {
      checks.push(check("upstreamArguments", undefined, upstream.inputSchema, value.arguments));
    }
  } else {
    // Without an outputSchema `after` receives a whole CallToolResult, which has no schema to check here.
    checks.push(check("upstreamResult", undefined, upstream.outputSchema, input.result));
    if (value && value.action === "return") checks.push(check("publicResult", contract?.outputSchema, upstream.outputSchema, value.result));
  }
  const reports = checks.filter((report): report is SchemaCheckReport => report !== null);
  const valid = reports.every((report) => report.valid);
  return { run, validation: { valid, checks: reports }, passed: run.outcome !== "error" && valid };
}

/**
 * What live `after` would get as `upstreamArguments` when the test names none:
 * the draft's `before` output for the same public arguments. A `before` that
 * would not let the call through leaves `after` nothing to test.
 */
async function upstreamArgumentsFromBefore(input: StageTestInput, context: StageContextInput): Promise<ContractJsonObject> {
  const publicArguments = input.arguments as ContractJsonObject;
  if (!input.stages.includes("before")) return publicArguments;
  const run = await runStage({ bundle: input.bundle, stage: "before", input: beforeInput(publicArguments), context });
  const value = run.value;
  if (value && (value.action === "continue" || value.action === "require_approval")) return value.arguments;
  throw new ApiError("invalid_request", {
    message: `The draft's before answers ${run.error?.code ?? run.outcome} for these arguments, so after would never run; give \`upstreamArguments\` to test after alone`,
    details: { issues: [{ field: "json.upstreamArguments", message: "Required when before does not let the call through" }] },
  });
}
