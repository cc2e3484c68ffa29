import { CallToolResultSchema, McpError, type CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import type { AfterReturn, BeforeReturn, JsonObject, JsonValue } from "../../schema/hooks/contract.ts";
import { runStage, type StageRun } from "../hooks/isolate/index.ts";
import type { CallLogEntry } from "../logs/logs.store.ts";
import { refusal } from "../mcp/mcp.results.ts";
import { afterResponse } from "../lib/after-response.ts";
import { canonicalJson, sha256Hex } from "../lib/crypto.ts";
import { callUpstreamTool, UpstreamFailure } from "../services/upstream.ts";
import { workspaceClient } from "../workspaces/workspace.client.ts";
import { decideAccess } from "./access.ts";
import type { Catalog, CatalogTool } from "./catalog.ts";
import { readPointers, withBundle, type DeployedRevision, type ToolDeployments } from "./deployment.ts";
import { projectResult } from "./projection.ts";
import { runShadow } from "./shadow.ts";
import { checkAgainstSchema } from "./validation.ts";

export interface CallRequest {
  env: Env;
  waitUntil: (promise: Promise<unknown>) => void;
  catalog: Catalog;
  tool: CatalogTool;
  workspaceId: string;
  keyId: string;
  profileId: string | null;
  arguments: JsonObject;
  requestId: string;
  /** Where an approver acts on approvals, shown to the agent. */
  approvalsUrl: string;
  /** Receives every log entry of the active path; the endpoint writes them after the response. */
  log: (entry: CallLogEntry) => void;
  /** Writes log entries now (the shadow run, already off the live path, uses it). */
  record: (entries: CallLogEntry[]) => Promise<void>;
}

/** What the active path saw, so a shadow revision can be run on the same inputs afterwards. */
export interface CallTrace {
  context: ReturnType<typeof stageContext>;
  shadow: DeployedRevision | null;
  before?: { input: JsonObject; run: StageRun | null };
  after?: { arguments: JsonObject; result: JsonValue; run: StageRun | null };
}

/**
 * The five steps of a tools/call, in order. Each step can only narrow what the
 * previous allowed; a refusal or failure before step 4 never contacts the upstream.
 * A shadow revision runs afterwards, in waitUntil, on the inputs the active path saw.
 */
export async function runToolCall(call: CallRequest): Promise<CallToolResult> {
  const trace: CallTrace = { context: stageContext(call, new Date().toISOString()), shadow: null };
  try {
    return await runSteps(call, trace);
  } finally {
    const shadow = trace.shadow;
    if (shadow && (trace.before || trace.after)) {
      // QuickJS runs synchronously: starting at once would hold the thread while the live response is written.
      afterResponse(call.waitUntil, "shadow run", () => runShadow(call, shadow, trace));
    }
  }
}

async function runSteps(call: CallRequest, trace: CallTrace): Promise<CallToolResult> {
  const tool = call.tool;
  const context = trace.context;
  const refuse: Refuse = (code: string, message: string, revisionId: string | null, details?: Record<string, unknown>) => {
    call.log(preDispatch(call, code, revisionId, message));
    return refusal(code, message, { tool: tool.publicName, ...details });
  };

  // 1. Access policy on the public tool: a refusal here ends the call, no hook runs.
  const access = decideAccess(call.catalog, call.profileId, tool);
  if (!access.allowed) return refuse(access.code, access.message, null);

  // 2–3 run the snapshot's revision; step 4 verifies it is still the active one.
  let pointers: ToolDeployments = call.catalog.deployments.get(tool.uid) ?? {};
  let prepared: Prepared;
  for (let attempt = 0; ; attempt++) {
    const outcome = await prepare(call, trace, pointers, refuse);
    if ("content" in outcome) return outcome;
    prepared = outcome;
    if (!call.catalog.deployments.has(tool.uid)) break;
    // 4. The revision that ran must still be the active one.
    let current: ToolDeployments;
    try {
      current = await readPointers(call.env, call.workspaceId, tool.uid);
    } catch (error) {
      console.error("hook deployment unreadable", error);
      return refuse("hook_unavailable", "The tool's hook could not be loaded, so the call was stopped", null);
    }
    trace.shadow = await withBundle(call.env, current.shadow).catch(() => null);
    if (current.active?.revisionId === prepared.active?.revisionId) break;
    // The snapshot was stale: run once more on the revision that is active now, then give up.
    if (attempt > 0)
      return refuse(
        "revision_changed",
        "The tool's active hook changed during the call; repeat the call",
        prepared.active?.revisionId ?? null,
      );
    pointers = current;
  }
  const { active, upstreamArguments, hookApproval } = prepared;

  // Approvals bind the verified active revision and the exact transformed call; a claim is single-use.
  if (access.needsApproval || hookApproval) {
    const reason = hookApproval?.reason ?? "policy_approval";
    const claim = await claimApproval(call, active, upstreamArguments, hookApproval ? "hook" : "policy", reason);
    if (!claim.claimed) {
      return refuse(
        "approval_required",
        `This call needs a human approval (${reason}). Ask an approver, then repeat the identical call.`,
        active?.revisionId ?? null,
        {
          approvalId: claim.approval.id,
          reason,
          expiresAt: claim.approval.expiresAt,
          approveAt: `${call.approvalsUrl}/${claim.approval.id}/approve`,
        },
      );
    }
  }

  // Exactly one upstream call.
  const target = call.catalog.targets.get(tool.serviceId);
  if (!target) return refuse("upstream_unreachable", "The tool's service is not available", active?.revisionId ?? null);
  let upstreamResult: CallToolResult;
  try {
    upstreamResult = await callUpstreamTool(target, tool.name, upstreamArguments);
  } catch (error) {
    if (error instanceof UpstreamFailure) {
      call.log(upstreamLog(call, "upstream_failed", error.code, active));
      return refusal(error.code, error.message, { tool: tool.publicName });
    }
    if (error instanceof McpError) call.log(upstreamLog(call, "upstream_error", String(error.code), active));
    throw error;
  }
  if (upstreamResult.isError) {
    // Upstream errors go back as the upstream's own, and `after` never sees them.
    call.log(upstreamLog(call, "upstream_error", null, active));
    return upstreamResult;
  }

  // 5. Active `after`, public output validation, projection.
  let result = upstreamResult;
  const afterInput = (tool.definition.outputSchema ? (upstreamResult.structuredContent ?? null) : upstreamResult) as JsonValue;
  trace.after = { arguments: upstreamArguments, result: afterInput, run: null };
  if (active?.stages.includes("after")) {
    const afterRun = await runStage({
      bundle: active.bundle,
      stage: "after",
      input: { arguments: upstreamArguments, result: afterInput },
      context: { ...context, config: active.config },
    });
    trace.after.run = afterRun;
    call.log(stageLog(call, "after", active, afterRun));
    const value = afterRun.value as AfterReturn | undefined;
    if (afterRun.outcome === "error" || !value) return hookFailed(call, afterRun);
    if (value.action === "fail") return refusal(value.reason, value.message, { tool: tool.publicName, source: "hook" });
    const rebuilt = rebuildResult(tool, value.result);
    if (!rebuilt) return hookFailed(call, { ...afterRun, error: { code: "invalid_return", message: "`result` is not a tool result" } });
    result = rebuilt;
  }
  const publicOutput = active?.contract?.outputSchema ?? tool.definition.outputSchema;
  if (publicOutput) {
    const outputCheck = checkAgainstSchema(publicOutput, result.structuredContent);
    if (!outputCheck.valid) {
      call.log(preDispatch(call, "invalid_output", active?.revisionId ?? null, "output failed the public output schema", "after"));
      return refusal("invalid_output", "The tool's result does not match its output schema", {
        tool: tool.publicName,
        violations: outputCheck.violations,
      });
    }
  }
  return projectResult(result, tool.projection);
}

/** The outcome of steps 2–3 for one revision: what to send upstream, and whether it needs approval. */
interface Prepared {
  active: DeployedRevision | null;
  upstreamArguments: JsonObject;
  hookApproval: { reason: string } | null;
}

type Refuse = (code: string, message: string, revisionId: string | null, details?: Record<string, unknown>) => CallToolResult;

/**
 * Steps 2 and 3 against the given pointers: public arguments against the public
 * schema (the hook's, if it replaces it), the active `before`, then the
 * transformed arguments against the upstream schema.
 */
async function prepare(call: CallRequest, trace: CallTrace, pointers: ToolDeployments, refuse: Refuse): Promise<Prepared | CallToolResult> {
  const tool = call.tool;
  let active: DeployedRevision | null;
  try {
    active = await withBundle(call.env, pointers.active);
  } catch (error) {
    console.error("hook bundle unreadable", error);
    return refuse("hook_unavailable", "The tool's hook could not be loaded, so the call was stopped", null);
  }
  if (active && active.definitionHash !== tool.definitionHash) {
    // The hook was compiled against another upstream definition: its assumptions may no longer hold.
    return refuse("hook_outdated", "The tool's hook was built for an earlier upstream definition; redeploy it", active.revisionId);
  }
  const publicInput = active?.contract?.inputSchema ?? tool.definition.inputSchema;
  const argumentCheck = checkAgainstSchema(publicInput, call.arguments);
  if (!argumentCheck.valid) {
    return refuse("invalid_arguments", "The arguments do not match the tool's input schema", active?.revisionId ?? null, {
      violations: argumentCheck.violations,
    });
  }
  let upstreamArguments = call.arguments;
  let hookApproval: { reason: string } | null = null;
  let beforeRun: StageRun | null = null;
  if (active?.stages.includes("before")) {
    beforeRun = await runStage({
      bundle: active.bundle,
      stage: "before",
      input: { arguments: call.arguments },
      context: { ...trace.context, config: active.config },
    });
    call.log(stageLog(call, "before", active, beforeRun));
    trace.before = { input: call.arguments, run: beforeRun };
    const value = beforeRun.value as BeforeReturn | undefined;
    if (beforeRun.outcome === "error" || !value) return hookFailed(call, beforeRun);
    if (value.action === "reject") return refusal(value.reason, value.message, { tool: tool.publicName, source: "hook" });
    upstreamArguments = value.arguments;
    if (value.action === "require_approval") hookApproval = { reason: value.reason };
  }
  trace.before = { input: call.arguments, run: beforeRun };

  const upstreamCheck = checkAgainstSchema(tool.definition.inputSchema, upstreamArguments);
  if (!upstreamCheck.valid) {
    return refuse("invalid_upstream_arguments", "The hook produced arguments the upstream's schema rejects", active?.revisionId ?? null, {
      violations: upstreamCheck.violations,
    });
  }
  return { active, upstreamArguments, hookApproval };
}

function stageContext(call: CallRequest, calledAt: string) {
  return {
    calledAt,
    requestId: call.requestId,
    workspaceUid: call.workspaceId,
    connectionId: call.tool.serviceId,
    toolUid: call.tool.uid,
    toolName: call.tool.name,
  };
}

/** With an outputSchema, `after` returns the structured result; otherwise a whole CallToolResult. */
function rebuildResult(tool: CatalogTool, value: JsonValue): CallToolResult | null {
  if (tool.definition.outputSchema) {
    if (!value || typeof value !== "object" || Array.isArray(value)) return null;
    return { content: [{ type: "text", text: JSON.stringify(value) }], structuredContent: value };
  }
  const parsed = CallToolResultSchema.safeParse(value);
  return parsed.success ? (parsed.data as CallToolResult) : null;
}

function hookFailed(call: CallRequest, run: StageRun): CallToolResult {
  const code = run.error?.code ?? "invalid_return";
  // Internal detail stays out of the agent's view unless payload capture allows it.
  const details = call.tool.captureDetails ? { error: run.error } : { error: { code } };
  return refusal("hook_failed", "The tool's hook failed, so the call was stopped", { tool: call.tool.publicName, ...details });
}

async function claimApproval(
  call: CallRequest,
  active: DeployedRevision | null,
  upstreamArguments: JsonObject,
  source: "policy" | "hook",
  reason: string,
) {
  const callHash = await sha256Hex(canonicalJson({ tool: call.tool.uid, arguments: upstreamArguments }));
  return workspaceClient(call.env, call.workspaceId).claimOrRequestApproval({
    toolUid: call.tool.uid,
    publicName: call.tool.publicName,
    keyId: call.keyId,
    revisionId: active?.revisionId ?? null,
    callHash,
    argumentsJson: JSON.stringify(upstreamArguments),
    reason,
    message: null,
    source,
  });
}

function preDispatch(
  call: CallRequest,
  code: string,
  revisionId: string | null,
  message: string,
  stage: CallLogEntry["stage"] = "pre_dispatch",
): CallLogEntry {
  return {
    toolUid: call.tool.uid,
    requestId: call.requestId,
    stage,
    channel: "active",
    outcome: "refused",
    code,
    durationMs: 0,
    revisionId,
    shadowDiffered: null,
    details: { message },
  };
}

function upstreamLog(call: CallRequest, outcome: string, code: string | null, active: DeployedRevision | null): CallLogEntry {
  return {
    toolUid: call.tool.uid,
    requestId: call.requestId,
    stage: "upstream",
    channel: "active",
    outcome,
    code,
    durationMs: 0,
    revisionId: active?.revisionId ?? null,
    shadowDiffered: null,
  };
}

export function stageLog(
  call: Pick<CallRequest, "tool" | "requestId">,
  stage: "before" | "after",
  revision: DeployedRevision,
  run: StageRun,
  channel: "active" | "shadow" = "active",
  shadowDiffered: boolean | null = null,
): CallLogEntry {
  const value = run.value as { reason?: string; message?: string } | undefined;
  return {
    toolUid: call.tool.uid,
    requestId: call.requestId,
    stage,
    channel,
    outcome: run.outcome,
    code: run.error?.code ?? null,
    durationMs: run.usage.durationMs,
    revisionId: revision.revisionId,
    shadowDiffered,
    details: {
      ...(value?.reason ? { reason: value.reason } : {}),
      ...(value?.message ? { message: value.message } : {}),
      ...(run.error ? { error: run.error.message } : {}),
      ...(run.logs.length ? { logs: run.logs } : {}),
    },
  };
}
