import type { JsonObject } from "../../../schema/hooks/contract.ts";
import type { StageContextInput } from "./isolate.types.ts";

export type PreparedContext = { ok: true; json: string; calledAtMs: number } | { ok: false; message: string };

const CONTEXT_STRING_FIELDS = ["calledAt", "requestId", "workspaceUid", "connectionId", "toolUid", "toolName"] as const;

function isJsonObject(value: unknown): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * Checks the host-side call metadata and turns it into the JSON the prelude
 * builds `context` from. Only the listed fields cross into the isolate.
 */
export function prepareContext(context: StageContextInput): PreparedContext {
  for (const field of CONTEXT_STRING_FIELDS) {
    if (typeof context[field] !== "string") return { ok: false, message: `context.${field} must be a string` };
  }
  const calledAtMs = Date.parse(context.calledAt);
  if (!Number.isFinite(calledAtMs)) return { ok: false, message: "context.calledAt must be an ISO-8601 time" };
  if (!isJsonObject(context.config)) return { ok: false, message: "context.config must be a JSON object" };
  const json = JSON.stringify({
    calledAt: context.calledAt,
    requestId: context.requestId,
    workspaceUid: context.workspaceUid,
    connectionId: context.connectionId,
    toolUid: context.toolUid,
    toolName: context.toolName,
    config: context.config,
  });
  return { ok: true, json, calledAtMs };
}

/** Context for `evaluateAdapter`: the bundle's top level sees no call, so every field is empty. */
export function inspectionContext(): { json: string; calledAtMs: number } {
  const calledAt = new Date(0).toISOString();
  return {
    json: JSON.stringify({ calledAt, requestId: "", workspaceUid: "", connectionId: "", toolUid: "", toolName: "", config: {} }),
    calledAtMs: 0,
  };
}
