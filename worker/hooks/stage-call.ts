import type { JsonObject, JsonValue } from "../../schema/hooks/contract.ts";
import type { StageContextInput, StageInput } from "./isolate/index.ts";

/** The tool a stage runs for, as the call path and the hook test route both know it. */
export interface StageTool {
  uid: string;
  /** `{serviceSlug}__{upstreamName}`: what clients call and what logs show. */
  publicName: string;
  serviceId: string;
}

/** The call a stage belongs to: fixed once, before any stage runs. */
export interface StageCall {
  calledAt: string;
  requestId: string;
  workspaceId: string;
  tool: StageTool;
}

/**
 * The hook's `context` for one stage run. Live calls, shadow runs and hook tests
 * all build it here, so a hook that branches on it behaves the same in a test
 * as live. `toolName` is the public name (`{service}__{tool}`), the one name
 * clients, logs and Code Mode use; the upstream's own name is part of it.
 */
export function stageContext(call: StageCall, config: JsonObject): StageContextInput {
  return {
    calledAt: call.calledAt,
    requestId: call.requestId,
    workspaceUid: call.workspaceId,
    connectionId: call.tool.serviceId,
    toolUid: call.tool.uid,
    toolName: call.tool.publicName,
    config,
  };
}

/** What `before` receives: the client's arguments, already checked against the public input schema. */
export function beforeInput(publicArguments: JsonObject): StageInput {
  return { arguments: publicArguments };
}

/**
 * What `after` receives: the client's own arguments (typed by the public
 * contract), the arguments that went upstream after `before` rewrote them
 * (typed by the upstream schema), and the upstream result.
 */
export function afterInput(publicArguments: JsonObject, upstreamArguments: JsonObject, result: JsonValue): StageInput {
  return { arguments: publicArguments, upstreamArguments, result };
}

/** The rule of `result` in `after`: the upstream `structuredContent` when the tool has an outputSchema, else the whole result. */
export function afterResult(
  definition: { outputSchema?: Record<string, unknown> },
  upstream: { structuredContent?: Record<string, unknown> },
): JsonValue {
  return (definition.outputSchema ? (upstream.structuredContent ?? null) : upstream) as JsonValue;
}
