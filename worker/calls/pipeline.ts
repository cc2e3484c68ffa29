import { CallToolResultSchema, McpError, type CallToolResult, type ClientCapabilities } from "@modelcontextprotocol/sdk/types.js";
import type { AfterReturn, BeforeReturn, JsonObject } from "../../schema/hooks/contract.ts";
import { MAX_APPROVAL_ARGUMENTS_BYTES, MAX_PENDING_APPROVALS } from "../approvals/approvals.do.ts";
import { linksFor, type ApprovalLinks } from "../approvals/approval-links.ts";
import { runStage, type StageRun } from "../hooks/isolate/index.ts";
import { afterInput, afterResult, beforeInput, stageContext, type StageCall } from "../hooks/stage-call.ts";
import { canonicalJson, sha256Hex } from "../lib/crypto.ts";
import { checkAgainstSchema } from "../lib/json-schema.ts";
import type { SchemaBoundBreach } from "../lib/schema-bounds.ts";
import type { CallLogEntry } from "../logs/logs.store.ts";
import { callUpstreamTool, UpstreamFailure } from "../services/upstream.ts";
import { CallCancelled, declaresAll, UpstreamTimeout, type UpstreamCallOptions } from "../services/upstream.call.ts";
import { RawResultCapture } from "../services/upstream.passthrough.ts";
import { workspaceClient } from "../workspaces/workspace.client.ts";
import { decideAccess } from "./access.ts";
import type { Catalog, CatalogTool } from "./catalog.ts";
import { readPointers, withBundle, type DeployedRevision, type ToolDeployments } from "./deployment.ts";
import { logEntry, type CallOutcome, type GatewayRefusalCode, type ToolCallRun } from "./outcome.ts";
import { GATEWAY_META_PREFIX } from "./outcome.ts";
import { projectResult } from "./projection.ts";
import type { ShadowWork } from "./shadow.ts";
import { stageRunLog } from "./stage-log.ts";

export interface ToolCallInput {
  env: Env;
  catalog: Catalog;
  /** The name the client called: `{serviceSlug}__{upstreamName}`. */
  publicName: string;
  workspaceId: string;
  keyId: string;
  profileId: string | null;
  arguments: JsonObject;
  requestId: string;
  /** Where an approver acts on approvals, shown to the agent. */
  approvalLinks: ApprovalLinks;
  /** Progress, cancellation and server-to-client relaying for the upstream request, when the client streams. */
  upstream?: UpstreamCallOptions;
  /** What the client declared in its session's `initialize` (none without a session). */
  clientCapabilities?: ClientCapabilities;
}

/** One call in progress: its input, the tool, the stage metadata, and what it has produced so far. */
interface CallState {
  input: ToolCallInput;
  tool: CatalogTool;
  stageCall: StageCall;
  logs: CallLogEntry[];
  /** The shadow revision read at step 4, and the stages as active ran them, for the run after the response. */
  shadow: DeployedRevision | null;
  observed: Pick<ShadowWork, "before" | "after">;
}

/**
 * The five steps of a tools/call, in order. Each step can only narrow what the
 * previous allowed; a refusal or failure before step 4 never contacts the
 * upstream. Returns data only: the caller shapes the wire answer, writes the
 * log rows and starts the shadow run, both after the response.
 */
export async function runToolCall(input: ToolCallInput): Promise<ToolCallRun> {
  const tool = input.catalog.tools.get(input.publicName);
  // A tool listed only to clients with a capability this one lacks is as unknown to it as no tool at all.
  if (!tool || !declaresAll(input.clientCapabilities, tool.clientCapabilities)) {
    return { outcome: { kind: "hidden" }, logs: [], shadow: null, captureDetails: false };
  }
  const state: CallState = {
    input,
    tool,
    stageCall: { calledAt: new Date().toISOString(), requestId: input.requestId, workspaceId: input.workspaceId, tool },
    logs: [],
    shadow: null,
    observed: {},
  };
  const outcome = await runSteps(state);
  const { shadow, observed } = state;
  const shadowRun =
    shadow && (observed.before || observed.after)
      ? { call: state.stageCall, revision: shadow, definitionHash: tool.definitionHash, ...observed }
      : null;
  return { outcome, logs: state.logs, shadow: shadowRun, captureDetails: tool.captureDetails };
}

async function runSteps(state: CallState): Promise<CallOutcome> {
  const { input, tool } = state;

  // 1. Access policy on the public tool: a refusal here ends the call, no hook runs.
  const access = decideAccess(input.catalog, input.profileId, tool);
  if (!access.allowed) {
    if (access.code === "tool_blocked" || access.code === "no_access_profile") {
      // Still a refusal worth an admin's eye, though the client only sees an unknown tool.
      state.logs.push(refusalLog(state, access.code, access.message, null));
      return { kind: "hidden" };
    }
    return refuse(state, access.code, access.message, null, access.details);
  }

  // 2–3 run the snapshot's revision; step 4 verifies it is still the active one.
  let pointers: ToolDeployments = input.catalog.deployments.get(tool.uid) ?? {};
  let prepared: Prepared;
  for (let attempt = 0; ; attempt++) {
    const outcome = await prepare(state, pointers);
    if ("kind" in outcome) return outcome;
    prepared = outcome;
    if (!input.catalog.deployments.has(tool.uid)) break;
    // 4. The revision that ran must still be the active one.
    let current: ToolDeployments;
    try {
      current = await readPointers(input.env, input.workspaceId, tool.uid);
    } catch (error) {
      console.error("hook deployment unreadable", error);
      return refuse(state, "hook_unavailable", "The tool's hook could not be loaded, so the call was stopped", null);
    }
    state.shadow = await shadowRevision(state, current);
    if (current.active?.revisionId === prepared.active?.revisionId) break;
    // The snapshot was stale: run once more on the revision that is active now, then give up.
    if (attempt > 0) {
      return refuse(
        state,
        "revision_changed",
        "The tool's active hook changed during the call; repeat the call",
        prepared.active?.revisionId ?? null,
      );
    }
    pointers = current;
  }
  const { active, upstreamArguments, hookApproval } = prepared;
  const revisionId = active?.revisionId ?? null;

  // Approvals bind the verified active revision and the exact transformed call; a claim is single-use.
  // A policy approval holds even when the hook asks for none, and the hook's holds under an allowing policy.
  if (access.needsApproval || hookApproval) {
    const reason = hookApproval?.reason ?? (access.needsApproval ? access.approvalReason : "policy_approval");
    const argumentsJson = JSON.stringify(upstreamArguments);
    const argumentsBytes = new TextEncoder().encode(argumentsJson).byteLength;
    if (argumentsBytes > MAX_APPROVAL_ARGUMENTS_BYTES) {
      return refuse(
        state,
        "approval_limit",
        `This call needs a human approval (${reason}), but its arguments are too large to hold for an approver (${argumentsBytes} bytes, at most ${MAX_APPROVAL_ARGUMENTS_BYTES})`,
        revisionId,
        { reason, limit: "approval_arguments_bytes", bytes: argumentsBytes, max: MAX_APPROVAL_ARGUMENTS_BYTES },
      );
    }
    const claim = await claimApproval(
      state,
      active,
      upstreamArguments,
      argumentsJson,
      hookApproval ? "hook" : "policy",
      reason,
      hookApproval?.message ?? null,
    );
    if ("pendingFull" in claim) {
      return refuse(
        state,
        "approval_limit",
        `This call needs a human approval (${reason}), but the workspace already has ${MAX_PENDING_APPROVALS} approvals waiting; ask an approver to decide them, or retry after they expire`,
        revisionId,
        { reason, limit: "pending_approvals", max: MAX_PENDING_APPROVALS },
      );
    }
    if (!claim.claimed) {
      return refuse(
        state,
        "approval_required",
        `This call needs a human approval (${reason}). Ask an approver, then repeat the identical call.`,
        revisionId,
        {
          approvalId: claim.approval.id,
          reason,
          ...(hookApproval?.message ? { message: hookApproval.message } : {}),
          expiresAt: claim.approval.expiresAt,
          ...linksFor(input.approvalLinks, claim.approval.id),
        },
      );
    }
  }

  // Exactly one upstream call.
  const target = input.catalog.targets.get(tool.serviceId);
  if (!target) return refuse(state, "upstream_unreachable", "The tool's service is not available", revisionId);
  const publicOutput = active?.contract?.outputSchema ?? tool.definition.outputSchema;
  // Nothing below would read or change the result: its bytes may go to the client as the upstream sent them.
  const rawResult =
    !active?.stages.includes("after") && !state.shadow?.stages.includes("after") && !publicOutput && !tool.projection
      ? new RawResultCapture()
      : undefined;
  let upstreamResult: CallToolResult;
  try {
    upstreamResult = await callUpstreamTool(
      target,
      tool.name,
      upstreamArguments,
      rawResult ? { ...input.upstream, rawResult } : input.upstream,
    );
  } catch (error) {
    if (error instanceof UpstreamTimeout) {
      state.logs.push(logEntry(logKey(state), { stage: "upstream", outcome: "upstream_failed", code: "upstream_timeout", revisionId }));
      return refused(state, "upstream_timeout", error.message, { bound: error.bound });
    }
    if (error instanceof CallCancelled) {
      // The upstream was told; `after` does not run on a call nobody waits for.
      state.logs.push(logEntry(logKey(state), { stage: "upstream", outcome: "cancelled", code: "cancelled", revisionId }));
      return refused(state, "cancelled", `The call was cancelled: ${error.message}`);
    }
    if (error instanceof UpstreamFailure) {
      // The tool-list bounds belong to indexing; a tools/call cannot hit them.
      const code = error.code === "too_many_tools" || error.code === "tool_list_too_large" ? "upstream_protocol_error" : error.code;
      state.logs.push(logEntry(logKey(state), { stage: "upstream", outcome: "upstream_failed", code, revisionId }));
      return refused(state, code, error.message);
    }
    if (error instanceof McpError) {
      state.logs.push(logEntry(logKey(state), { stage: "upstream", outcome: "upstream_error", code: String(error.code), revisionId }));
      return { kind: "upstream_rpc_error", error };
    }
    throw error;
  }
  // Diverted only when it holds no `dev.rayrun` metadata, no isError and no resource URI to map, and
  // answered with only when the SDK client took its stub (not an earlier result for the same id).
  const raw = rawResult?.taken(upstreamResult);
  if (raw) return { kind: "raw_result", raw };
  // The upstream never speaks for the gateway: its own `dev.rayrun/*` metadata is dropped.
  upstreamResult = withoutGatewayMeta(upstreamResult);
  if (upstreamResult.isError) {
    // Upstream errors go back as the upstream's own, and `after` never sees them; projection still holds.
    state.logs.push(logEntry(logKey(state), { stage: "upstream", outcome: "upstream_error", revisionId }));
    return { kind: "result", result: projectResult(upstreamResult, tool.projection) };
  }

  // 5. Active `after`, public output validation, projection.
  let result = upstreamResult;
  const stageInput = afterInput(input.arguments, upstreamArguments, afterResult(tool.definition, upstreamResult));
  let afterRun: StageRun | null = null;
  if (active?.stages.includes("after")) {
    afterRun = await runStage({
      bundle: active.bundle,
      stage: "after",
      input: stageInput,
      context: stageContext(state.stageCall, active.config),
    });
    state.logs.push(stageRunLog(state.stageCall, "after", active, afterRun));
  }
  state.observed.after = { input: stageInput, active: afterRun };
  if (active && afterRun) {
    const value = afterRun.value as AfterReturn | undefined;
    if (afterRun.outcome === "error" || !value) return hookFailed(state, afterRun);
    if (value.action === "fail") return hookRefused(state, value.reason, value.message);
    const rebuilt = rebuildResult(tool, value.result);
    if (!rebuilt) return hookFailed(state, { ...afterRun, error: { code: "invalid_return", message: "`result` is not a tool result" } });
    result = rebuilt;
  }
  if (publicOutput) {
    const outputCheck = checkAgainstSchema(publicOutput, result.structuredContent);
    if ("breach" in outputCheck) {
      state.logs.push(refusalLog(state, "schema_too_complex", outputCheck.breach.message, revisionId, "after"));
      return refused(state, "schema_too_complex", tooComplexMessage("result"), breachDetails(outputCheck.breach));
    }
    if (!outputCheck.valid) {
      state.logs.push(refusalLog(state, "invalid_output", "output failed the public output schema", revisionId, "after"));
      return refused(state, "invalid_output", "The tool's result does not match its output schema", { violations: outputCheck.violations });
    }
  }
  return { kind: "result", result: projectResult(result, tool.projection) };
}

/** The outcome of steps 2–3 for one revision: what to send upstream, and whether it needs approval. */
interface Prepared {
  active: DeployedRevision | null;
  upstreamArguments: JsonObject;
  hookApproval: { reason: string; message?: string } | null;
}

/**
 * Steps 2 and 3 against the given pointers: public arguments against the public
 * schema (the hook's, if it replaces it), the active `before`, then the
 * transformed arguments against the upstream schema.
 */
async function prepare(state: CallState, pointers: ToolDeployments): Promise<Prepared | CallOutcome> {
  const { input, tool } = state;
  let active: DeployedRevision | null;
  try {
    active = await withBundle(input.env, pointers.active);
  } catch (error) {
    console.error("hook bundle unreadable", error);
    return refuse(state, "hook_unavailable", "The tool's hook could not be loaded, so the call was stopped", null);
  }
  if (active && active.definitionHash !== tool.definitionHash) {
    // The hook was compiled against another upstream definition: its assumptions may no longer hold.
    return refuse(state, "hook_outdated", "The tool's hook was built for an earlier upstream definition; redeploy it", active.revisionId);
  }
  const revisionId = active?.revisionId ?? null;
  const publicInput = active?.contract?.inputSchema ?? tool.definition.inputSchema;
  const argumentCheck = checkAgainstSchema(publicInput, input.arguments);
  if ("breach" in argumentCheck) {
    return refuse(state, "schema_too_complex", tooComplexMessage("arguments"), revisionId, breachDetails(argumentCheck.breach));
  }
  if (!argumentCheck.valid) {
    return refuse(state, "invalid_arguments", "The arguments do not match the tool's input schema", revisionId, {
      violations: argumentCheck.violations,
    });
  }
  let upstreamArguments = input.arguments;
  let hookApproval: Prepared["hookApproval"] = null;
  let beforeRun: StageRun | null = null;
  const stageInput = beforeInput(input.arguments);
  if (active?.stages.includes("before")) {
    beforeRun = await runStage({
      bundle: active.bundle,
      stage: "before",
      input: stageInput,
      context: stageContext(state.stageCall, active.config),
    });
    state.logs.push(stageRunLog(state.stageCall, "before", active, beforeRun));
  }
  state.observed.before = { input: stageInput, active: beforeRun };
  if (beforeRun) {
    const value = beforeRun.value as BeforeReturn | undefined;
    if (beforeRun.outcome === "error" || !value) return hookFailed(state, beforeRun);
    if (value.action === "reject") return hookRefused(state, value.reason, value.message);
    upstreamArguments = value.arguments;
    if (value.action === "require_approval") hookApproval = { reason: value.reason, message: value.message };
  }

  const upstreamCheck = checkAgainstSchema(tool.definition.inputSchema, upstreamArguments);
  if ("breach" in upstreamCheck) {
    return refuse(state, "schema_too_complex", tooComplexMessage("arguments"), revisionId, breachDetails(upstreamCheck.breach));
  }
  if (!upstreamCheck.valid) {
    return refuse(state, "invalid_upstream_arguments", "The hook produced arguments the upstream's schema rejects", revisionId, {
      violations: upstreamCheck.violations,
    });
  }
  return { active, upstreamArguments, hookApproval };
}

const tooComplexMessage = (what: "arguments" | "result") =>
  `Checking the ${what} against the tool's schema would exceed a validation bound, so the call was stopped`;

/** Which bound was passed, and how far it goes, for the agent and the admin. */
const breachDetails = (breach: SchemaBoundBreach) => ({
  bound: breach.bound,
  ...(breach.limit !== undefined ? { limit: breach.limit } : {}),
  reason: breach.message,
});

/** The shadow revision to run after the response, if one is deployed and loads. */
async function shadowRevision(state: CallState, pointers: ToolDeployments): Promise<DeployedRevision | null> {
  if (!pointers.shadow) return null;
  try {
    return await withBundle(state.input.env, pointers.shadow);
  } catch (error) {
    // Shadow is best-effort: the live call goes on, and the row says why shadow did not run.
    console.error("shadow bundle unreadable", error);
    state.logs.push(
      logEntry(logKey(state), {
        stage: "pre_dispatch",
        channel: "shadow",
        outcome: "refused",
        code: "hook_unavailable",
        revisionId: pointers.shadow.revisionId,
      }),
    );
    return null;
  }
}

/** The result without any `_meta` key in the gateway's own `dev.rayrun/` namespace. */
function withoutGatewayMeta(result: CallToolResult): CallToolResult {
  const meta = result._meta;
  if (!meta || !Object.keys(meta).some((key) => key.startsWith(GATEWAY_META_PREFIX))) return result;
  return { ...result, _meta: Object.fromEntries(Object.entries(meta).filter(([key]) => !key.startsWith(GATEWAY_META_PREFIX))) };
}

/** With an outputSchema, `after` returns the structured result; otherwise a whole CallToolResult. */
function rebuildResult(tool: CatalogTool, value: unknown): CallToolResult | null {
  if (tool.definition.outputSchema) {
    if (!value || typeof value !== "object" || Array.isArray(value)) return null;
    return { content: [{ type: "text", text: JSON.stringify(value) }], structuredContent: value as Record<string, unknown> };
  }
  const parsed = CallToolResultSchema.safeParse(value);
  // A hook does not speak for the gateway either.
  return parsed.success ? withoutGatewayMeta(parsed.data as CallToolResult) : null;
}

async function claimApproval(
  state: CallState,
  active: DeployedRevision | null,
  upstreamArguments: JsonObject,
  argumentsJson: string,
  source: "policy" | "hook",
  reason: string,
  message: string | null,
) {
  const { input, tool } = state;
  const callHash = await sha256Hex(canonicalJson({ tool: tool.uid, arguments: upstreamArguments }));
  return workspaceClient(input.env, input.workspaceId).claimOrRequestApproval({
    toolUid: tool.uid,
    publicName: tool.publicName,
    keyId: input.keyId,
    revisionId: active?.revisionId ?? null,
    callHash,
    argumentsJson,
    reason,
    message,
    source,
  });
}

const logKey = (state: CallState) => ({ toolUid: state.tool.uid, requestId: state.input.requestId });

function refusalLog(
  state: CallState,
  code: string,
  message: string,
  revisionId: string | null,
  stage: CallLogEntry["stage"] = "pre_dispatch",
): CallLogEntry {
  return logEntry(logKey(state), { stage, outcome: "refused", code, revisionId, details: { message } });
}

/** A gateway refusal before dispatch: logged as a pre-dispatch row, answered with the code. */
function refuse(
  state: CallState,
  code: GatewayRefusalCode,
  message: string,
  revisionId: string | null,
  details?: Record<string, unknown>,
): CallOutcome {
  state.logs.push(refusalLog(state, code, message, revisionId));
  return refused(state, code, message, details);
}

/** A gateway refusal whose row, if any, the caller already logged. */
function refused(state: CallState, code: GatewayRefusalCode, message: string, details?: Record<string, unknown>): CallOutcome {
  return { kind: "refused", source: "gateway", code, message, details: { tool: state.tool.publicName, ...details } };
}

/** The hook rejected (`before`) or failed (`after`) the call with its own reason; its stage row is logged already. */
function hookRefused(state: CallState, reason: string, message: string): CallOutcome {
  return { kind: "refused", source: "hook", code: reason, message, details: { tool: state.tool.publicName, source: "hook" } };
}

function hookFailed(state: CallState, run: StageRun): CallOutcome {
  const code = run.error?.code ?? "invalid_return";
  // Internal detail stays out of the agent's view unless payload capture allows it.
  const error = state.tool.captureDetails ? run.error : { code };
  return refused(state, "hook_failed", "The tool's hook failed, so the call was stopped", { error });
}
