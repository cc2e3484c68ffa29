import type { HookStage, JsonObject as ContractJsonObject, JsonValue } from "../../../schema/hooks/contract.ts";
import { checkAgainstSchema } from "../../calls/validation.ts";
import type { ToolRecord } from "../../tools/tools.store.ts";
import type { PublicContract } from "../compiler/index.ts";
import { runStage, type StageRun } from "../isolate/index.ts";
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
  stage: HookStage;
  arguments: JsonObject;
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
    errors: outcome.valid ? [] : outcome.violations,
  };
}

/**
 * Runs one stage of a compiled draft as the call path would, with no upstream
 * call: `after` receives the caller's mock result. Then checks each value the
 * call path would check: the public arguments, the transformed arguments
 * against the upstream inputSchema, the mock against the upstream outputSchema,
 * and the returned result against the public (else upstream) outputSchema.
 */
export async function testStage(input: StageTestInput): Promise<StageTest> {
  const { tool, contract } = input;
  const upstream = tool.definition;
  const run = await runStage({
    bundle: input.bundle,
    stage: input.stage,
    input: {
      arguments: input.arguments as ContractJsonObject,
      ...(input.stage === "after" ? { result: input.result as JsonValue } : {}),
    },
    context: {
      calledAt: new Date().toISOString(),
      requestId: `test_${crypto.randomUUID()}`,
      workspaceUid: input.workspaceId,
      connectionId: tool.serviceId,
      toolUid: tool.uid,
      toolName: tool.publicName,
      config: input.config as ContractJsonObject,
    },
  });

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
