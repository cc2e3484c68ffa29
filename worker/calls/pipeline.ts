import {
  CallToolResultSchema,
  McpError,
  type CallToolResult,
  type ClientCapabilities,
  type TaskCreationParams,
} from "@modelcontextprotocol/sdk/types.js";
import type { AfterReturn, BeforeReturn, JsonObject } from "../../schema/hooks/contract.ts";
import { linksFor, type ApprovalLinks } from "../approvals/approval-links.ts";
import { MAX_APPROVAL_ARGUMENTS_BYTES, MAX_PENDING_APPROVALS, MAX_PENDING_APPROVALS_PER_KEY } from "../approvals/approvals.do.ts";
import { runStage, type StageMeter, type StageRun } from "../hooks/isolate/index.ts";
import { afterInput, afterResult, beforeInput, stageContext, type StageCall } from "../hooks/stage-call.ts";
import { canonicalJson, sha256Hex } from "../lib/crypto.ts";
import { checkAgainstSchema } from "../lib/json-schema.ts";
import type { SchemaBoundBreach } from "../lib/schema-bounds.ts";
import type { StageRow } from "../logs/call-log.ts";
import { GATEWAY_META_PREFIX, withoutProtocolMembers } from "../lib/gateway-meta.ts";
import { callUpstreamTool, createUpstreamTask, UpstreamFailure } from "../services/upstream.ts";
import { CallCancelled, declaresAll, UpstreamTimeout, type UpstreamCallOptions } from "../services/upstream.call.ts";
import { RawResultCapture } from "../services/raw-result.ts";
import { withUpstreamAuthorization } from "../upstream-auth/authorization.ts";
import { LeaseUnavailable } from "../leases/holder.ts";
import { CLOCK_TRUSTED_POLLS } from "../leases/lease.types.ts";
import { workspaceClient } from "../workspaces/workspace.client.ts";
import { decideAccess, type AccessDecision } from "./access.ts";
import type { Catalog, CatalogTool } from "./catalog.ts";
import { withBundle, type DeployedRevision, type ToolDeployments } from "./deployment.ts";
import type { CallOutcome, GatewayRefusalCode, ShadowWork, ToolCallRun } from "./outcome.ts";
import { projectResult } from "./projection.ts";
import { stageRow, stageRunRow } from "./call-rows.ts";

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
  /** The caller's own upstream grant subject (`user:…`, `key:…`, `oauth:…`), for services authorized per user. */
  grantSubject: string;
  /**
   * Whether the request's key or OAuth grant still authenticates the same caller with the same profile. The catalog
   * does not hold credentials, so a call that renews its lease onto a newer version before dispatch asks this again:
   * the change may be its own key's revocation, and a revocation's answer promises no call is sent with it afterwards.
   */
  stillAuthorized: () => Promise<boolean>;
  /**
   * The isolate's clock may lag real time by more than the lease margins when
   * the call reaches dispatch (a Code Mode program computes between its tool
   * calls without I/O), so the lease is confirmed with a round trip first.
   */
  confirmLeaseBeforeDispatch?: boolean;
  /** What the live hook stages are charged to (a Code Mode inner call's: its workspace's compute allowance). */
  stageMeter?: StageMeter;
  /**
   * A task-augmented call (2025-11-25 experimental tasks): steps 1–4 as for any call, then the upstream is asked to
   * create the task, and step 5 waits for its result (`finishTaskResult`).
   */
  task?: TaskCreationParams;
}

/** One call in progress: its input, the tool, the stage metadata, and what it has produced so far. */
interface CallState {
  input: ToolCallInput;
  /** The catalog the call runs under; replaced when a renewed lease brings a newer version. */
  catalog: Catalog;
  tool: CatalogTool;
  stageCall: StageCall;
  logs: StageRow[];
  /** performance.now() when the call started, and where its time went so far. */
  started: number;
  hooksMs: number;
  hookPolls: number;
  upstreamMs: number;
  upstreamOffsetMs: number | null;
  revisionId: string | null;
  approved: boolean;
  /** The shadow revision read at step 4, and the stages as active ran them, for the run after the response. */
  shadow: DeployedRevision | null;
  observed: Pick<ShadowWork, "before" | "after">;
  /**
   * No long stretch of CPU since the last I/O: the clock can be trusted at the
   * pre-dispatch check. Workers' clock stands still while code runs, so after a
   * `before` that used much of its work budget the lease is confirmed with a
   * round trip instead (docs/leases.md).
   */
  clockFresh: boolean;
}

/**
 * How many times one call renews its lease onto a newer version before it
 * gives up (`revision_changed`): each renewal follows a lapsed lease, so a call
 * sees this many only while the workspace keeps changing under it.
 */
const MAX_RENEWALS = 3;

/** Thrown right before the upstream request when a renewed lease brought a newer version: the call goes back to step 4. */
class LeaseLapsed extends Error {
  constructor(readonly renewed: Catalog) {
    super("the lease moved to a newer version before dispatch");
  }
}

/**
 * The five steps of a tools/call, in order. Each step can only narrow what the
 * previous allowed; a refusal or failure before step 4 never contacts the
 * upstream. Returns data only: the caller shapes the wire answer, writes the
 * log rows and starts the shadow run, both after the response.
 */
export function runToolCall(input: ToolCallInput): Promise<ToolCallRun> {
  return runCall(input, runSteps);
}

/**
 * Step 5 of a task-augmented call, once the upstream's task has its result: the tool is still one the caller may
 * use, under the same active revision that ran `before` when the task was created (else `revision_changed`), and
 * its result goes through `after`, output validation and projection as a direct call's would.
 */
export function finishTaskResult(
  input: ToolCallInput,
  task: { upstreamArguments: JsonObject; revisionId: string | null },
  upstreamResult: CallToolResult,
): Promise<ToolCallRun> {
  return runCall(input, async (state) => {
    const access = stepOne(state);
    if (!("allowed" in access)) return access;
    let active: DeployedRevision | null;
    try {
      active = await withBundle(input.env, pointersOf(state).active);
    } catch (error) {
      console.error("hook bundle unreadable", error);
      return refuse(state, "hook_unavailable", "The tool's hook could not be loaded, so the task's result was withheld", task.revisionId);
    }
    if ((active?.revisionId ?? null) !== task.revisionId || (active && active.definitionHash !== state.tool.definitionHash)) {
      return refuse(state, "revision_changed", "The tool's active hook changed while the task ran; call the tool again", task.revisionId);
    }
    state.revisionId = task.revisionId;
    const publicOutput = active?.contract?.outputSchema ?? state.tool.definition.outputSchema;
    return stepFive(state, active, task.upstreamArguments, upstreamResult, publicOutput);
  });
}

async function runCall(input: ToolCallInput, steps: (state: CallState) => Promise<CallOutcome>): Promise<ToolCallRun> {
  const startedAt = Date.now();
  const started = performance.now();
  const tool = input.catalog.tools.get(input.publicName);
  // A tool listed only to clients with a capability this one lacks is as unknown to it as no tool at all.
  if (!tool || !declaresAll(input.clientCapabilities, tool.clientCapabilities)) {
    const timing = { startedAt, durationMs: performance.now() - started, hooksMs: 0, upstreamMs: 0, upstreamOffsetMs: null };
    return {
      outcome: { kind: "hidden" },
      tool: null,
      logs: [],
      shadow: null,
      captureDetails: false,
      timing,
      hookPolls: 0,
      revisionId: null,
      approved: false,
    };
  }
  const state: CallState = {
    input,
    catalog: input.catalog,
    tool,
    stageCall: { calledAt: new Date(startedAt).toISOString(), requestId: input.requestId, workspaceId: input.workspaceId, tool },
    logs: [],
    started,
    hooksMs: 0,
    hookPolls: 0,
    upstreamMs: 0,
    upstreamOffsetMs: null,
    revisionId: null,
    approved: false,
    shadow: null,
    observed: {},
    clockFresh: !input.confirmLeaseBeforeDispatch,
  };
  const outcome = await steps(state);
  const { shadow, observed } = state;
  const shadowRun: ShadowWork | null =
    shadow && (observed.before || observed.after)
      ? { call: state.stageCall, revision: shadow, definitionHash: tool.definitionHash, ...observed }
      : null;
  return {
    outcome,
    tool: { uid: tool.uid, serviceId: tool.serviceId },
    logs: state.logs,
    shadow: shadowRun,
    captureDetails: tool.captureDetails,
    timing: {
      startedAt,
      durationMs: performance.now() - started,
      hooksMs: state.hooksMs,
      upstreamMs: state.upstreamMs,
      upstreamOffsetMs: state.upstreamOffsetMs,
    },
    hookPolls: state.hookPolls,
    revisionId: state.revisionId,
    approved: state.approved,
  };
}

/** ms since the call started: where a stage or the upstream request begins on the call's trace. */
const elapsed = (state: CallState) => performance.now() - state.started;

/** One active stage run, its time counted as the hooks' share of the call, and its row. */
async function runActiveStage(
  state: CallState,
  active: DeployedRevision,
  stage: "before" | "after",
  input: Parameters<typeof runStage>[0]["input"],
): Promise<StageRun> {
  const offsetMs = elapsed(state);
  const context = stageContext(state.stageCall, active.config);
  const run = await runStage({ bundle: active.bundle, stage, input, context, meter: state.input.stageMeter });
  if (run.busy) {
    state.logs.push(refusalLog(state, "code_mode_busy", run.busy.message, active.revisionId, stage));
    return run;
  }
  state.hooksMs += run.usage.durationMs;
  state.hookPolls += run.usage.polls;
  state.logs.push(stageRunRow(state.stageCall, stage, active, run, { offsetMs }));
  return run;
}

async function runSteps(state: CallState): Promise<CallOutcome> {
  let access = stepOne(state);
  if (!("allowed" in access)) return access;
  let prepared = await prepare(state, pointersOf(state));
  if ("kind" in prepared) return prepared;
  state.shadow = await shadowRevision(state, pointersOf(state));
  let approved = false;
  let reran = false;
  let renewals = 0;
  /** A catalog under a lease renewed since the call last decided, not yet taken on. */
  let renewed: Catalog | null = null;
  for (;;) {
    // 4. The lease the catalog was read under is the recheck: while it holds, the revision that ran is the active one
    // everywhere. Once it lapses (or the clock cannot be trusted), one round trip renews it; a newer version is decided
    // again from step 1, and a changed revision runs once more before the call gives up.
    if (!renewed && (!state.clockFresh || !state.catalog.lease.holds())) {
      try {
        renewed = await state.catalog.lease.renew(state.input.env);
      } catch (error) {
        console.error("lease renewal failed before dispatch", error);
        return unavailable(state);
      }
      state.clockFresh = true;
    }
    if (renewed && renewed !== state.catalog) {
      const ran = { revisionId: prepared.active?.revisionId ?? null, definitionHash: state.tool.definitionHash };
      // The version moved since the request authenticated: the change may be this caller's key or grant being
      // revoked, which its API answers once no call can still be sent with it (docs/leases.md).
      const revoked = await credentialsRevoked(state, ran.revisionId);
      if (revoked) return revoked;
      const tool = renewed.tools.get(state.input.publicName);
      if (!tool || !declaresAll(state.input.clientCapabilities, tool.clientCapabilities)) return { kind: "hidden" };
      state.catalog = renewed;
      state.tool = tool;
      state.stageCall.tool = tool;
      renewed = null;
      renewals += 1;
      access = stepOne(state);
      if (!("allowed" in access)) return access;
      const changed = (pointersOf(state).active?.revisionId ?? null) !== ran.revisionId || tool.definitionHash !== ran.definitionHash;
      if ((changed && reran) || renewals > MAX_RENEWALS) {
        return refuse(state, "revision_changed", "The tool's active hook changed during the call; repeat the call", ran.revisionId);
      }
      if (changed) {
        reran = true;
        approved = false;
        const again = await prepare(state, pointersOf(state));
        if ("kind" in again) return again;
        prepared = again;
      }
      state.shadow = await shadowRevision(state, pointersOf(state));
      continue;
    }
    renewed = null;
    // Approvals bind the active revision that ran and the exact transformed call; a claim is single-use.
    // A policy approval holds even when the hook asks for none, and the hook's holds under an allowing policy.
    if (!approved && (access.needsApproval || prepared.hookApproval)) {
      const refused = await approvalGate(state, access, prepared);
      if (refused) return refused;
      approved = true;
      state.clockFresh = true; // the claim was a round trip
      continue;
    }
    state.revisionId = prepared.active?.revisionId ?? null;
    const outcome = await dispatch(state, prepared);
    if (!("renewed" in outcome)) return outcome;
    renewed = outcome.renewed;
  }
}

/** The tool's pointers in the catalog the call runs under. */
const pointersOf = (state: CallState): ToolDeployments => state.catalog.deployments.get(state.tool.uid) ?? {};

type Allowed = Extract<AccessDecision, { allowed: true }>;

/** How a full approval queue is refused: the key's own share, or the whole workspace's. */
const PENDING_FULL = {
  key: { code: "approval_key_limit", holder: "this key", limit: "pending_approvals_per_key", max: MAX_PENDING_APPROVALS_PER_KEY },
  workspace: { code: "approval_limit", holder: "the workspace", limit: "pending_approvals", max: MAX_PENDING_APPROVALS },
} as const;

/** Step 1, access policy on the public tool: a refusal here ends the call, no hook runs. */
function stepOne(state: CallState): Allowed | CallOutcome {
  const access = decideAccess(state.catalog, state.input.profileId, state.tool);
  if (access.allowed) return access;
  if (access.code === "tool_blocked" || access.code === "no_access_profile") {
    // Still a refusal worth an admin's eye, though the client only sees an unknown tool.
    state.logs.push(refusalLog(state, access.code, access.message, null));
    return { kind: "hidden" };
  }
  return refuse(state, access.code, access.message, null, access.details);
}

/** No lease, and the workspace's Durable Object did not answer: a hook, a block or a first deployment may be pending. */
function unavailable(state: CallState): CallOutcome {
  if (pointersOf(state).active) {
    return refuse(state, "hook_unavailable", "The tool's hook could not be confirmed current, so the call was stopped", null);
  }
  return refuse(state, "workspace_unavailable", "The workspace's current policy could not be confirmed, so the call was stopped", null);
}

/** `unauthorized` when the caller's credentials no longer hold; `unavailable` when that cannot be confirmed. */
async function credentialsRevoked(state: CallState, revisionId: string | null): Promise<CallOutcome | null> {
  let authorized: boolean;
  try {
    authorized = await state.input.stillAuthorized();
  } catch (error) {
    console.error("credentials could not be confirmed before dispatch", error);
    return unavailable(state);
  }
  if (authorized) return null;
  return refuse(
    state,
    "unauthorized",
    "The caller's key or OAuth grant was revoked, or its access profile changed, before the call was sent",
    revisionId,
  );
}

/** A policy or hook approval: claims this exact call's approval, or refuses with how to get one. */
async function approvalGate(state: CallState, access: Allowed, prepared: Prepared): Promise<CallOutcome | null> {
  const { input } = state;
  const { active, upstreamArguments, hookApproval } = prepared;
  const revisionId = active?.revisionId ?? null;
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
    // The per-key cap sits below the workspace's, so one agent cannot fill the queue for all the others.
    const full = PENDING_FULL[claim.pendingFull];
    return refuse(
      state,
      full.code,
      `This call needs a human approval (${reason}), but ${full.holder} already has ${full.max} approvals waiting; ask an approver to decide them, or retry after they expire`,
      revisionId,
      { reason, limit: full.limit, max: full.max },
    );
  }
  if (!claim.claimed) {
    const links = linksFor(input.approvalLinks, claim.approval.id);
    // Frameworks that hand the model only a result's text must still be able to act on it: the text names both.
    return refuse(
      state,
      "approval_required",
      `This call needs a human approval (${reason}): approval ${claim.approval.id}. An approver decides it at ${links.approveAt}; once it is approved, repeat the identical call.`,
      revisionId,
      {
        approvalId: claim.approval.id,
        reason,
        ...(hookApproval?.message ? { message: hookApproval.message } : {}),
        expiresAt: claim.approval.expiresAt,
        ...links,
      },
    );
  }
  state.approved = true;
  return null;
}

/**
 * Exactly one upstream call, then step 5. The lease is checked once more
 * right before the request goes out, once the upstream session is ready
 * (which may itself take round trips): if it lapsed meanwhile it is renewed,
 * and the request goes out at once on the same version, or, on a newer one,
 * not at all and the call goes back to step 4 with the renewed catalog.
 */
async function dispatch(state: CallState, prepared: Prepared): Promise<CallOutcome | { renewed: Catalog }> {
  const { input } = state;
  const tool = state.tool;
  const { active, upstreamArguments } = prepared;
  const revisionId = active?.revisionId ?? null;
  // Exactly one upstream call (sent again only after a 401, which the upstream refused before processing it).
  const target = state.catalog.targets.get(tool.serviceId);
  const service = state.catalog.servicesById.get(tool.serviceId);
  if (!target || !service) return refuse(state, "upstream_unreachable", "The tool's service is not available", revisionId);
  const publicOutput = active?.contract?.outputSchema ?? tool.definition.outputSchema;
  // Nothing below would read or change the result: its bytes may go to the client as the upstream sent them.
  const rawResult =
    !active?.stages.includes("after") && !state.shadow?.stages.includes("after") && !publicOutput && !tool.projection
      ? new RawResultCapture()
      : undefined;
  let upstreamResult: CallToolResult;
  state.upstreamOffsetMs = elapsed(state);
  const beforeSend = async () => {
    if (state.catalog.lease.holds()) return;
    const renewed = await state.catalog.lease.renew(input.env);
    if (renewed !== state.catalog) throw new LeaseLapsed(renewed);
  };
  const call = {
    env: input.env,
    workspaceId: input.workspaceId,
    serviceId: service.id,
    serviceSlug: service.slug,
    oauth: service.oauth,
    callerSubject: input.grantSubject,
  };
  try {
    const task = input.task;
    if (task) {
      const created = await withUpstreamAuthorization(call, target, (authorized) =>
        createUpstreamTask(authorized, tool.name, upstreamArguments, task, {
          signal: input.upstream?.signal,
          beforeSend,
          // The task's session declares what the client answers, so the upstream may ask it for input during the task.
          capabilities: input.upstream?.relay?.capabilities,
        }),
      );
      state.upstreamMs = elapsed(state) - state.upstreamOffsetMs;
      if (!created.ok) return refuse(state, created.refusal.code, created.refusal.message, revisionId, created.refusal.details);
      state.logs.push(stageRow(logKey(state), { stage: "upstream", outcome: "ok", revisionId, durationMs: state.upstreamMs }));
      return { kind: "task", ...created.value, upstreamArguments };
    }
    const sent = await withUpstreamAuthorization(call, target, (authorized) =>
      callUpstreamTool(authorized, tool.name, upstreamArguments, { ...input.upstream, beforeSend, rawResult }),
    );
    state.upstreamMs = elapsed(state) - state.upstreamOffsetMs;
    if (!sent.ok) return refuse(state, sent.refusal.code, sent.refusal.message, revisionId, sent.refusal.details);
    upstreamResult = sent.value;
  } catch (error) {
    if (error instanceof LeaseLapsed) return { renewed: error.renewed };
    if (error instanceof LeaseUnavailable) {
      console.error("lease renewal failed at dispatch", error);
      return unavailable(state);
    }
    state.upstreamMs = elapsed(state) - state.upstreamOffsetMs;
    if (error instanceof UpstreamTimeout) {
      state.logs.push(stageRow(logKey(state), { stage: "upstream", outcome: "upstream_failed", code: "upstream_timeout", revisionId }));
      return refused(state, "upstream_timeout", error.message, { bound: error.bound });
    }
    if (error instanceof CallCancelled) {
      // The upstream was told; `after` does not run on a call nobody waits for.
      state.logs.push(stageRow(logKey(state), { stage: "upstream", outcome: "cancelled", code: "cancelled", revisionId }));
      return refused(state, "cancelled", `The call was cancelled: ${error.message}`);
    }
    if (error instanceof UpstreamFailure) {
      const code = callFailureCode(error.code);
      const message = error.code === "upstream_unauthorized" ? "The upstream refused the service's credentials (401)" : error.message;
      state.logs.push(stageRow(logKey(state), { stage: "upstream", outcome: "upstream_failed", code, revisionId }));
      return refused(state, code, message);
    }
    if (error instanceof McpError) {
      state.logs.push(stageRow(logKey(state), { stage: "upstream", outcome: "upstream_error", code: String(error.code), revisionId }));
      return { kind: "upstream_rpc_error", error };
    }
    throw error;
  }
  // Diverted only when it holds no `dev.rayrun` metadata, no isError and no resource URI to map, and
  // answered with only when the SDK client took its stub (not an earlier result for the same id).
  const raw = rawResult?.taken(upstreamResult);
  if (raw) return { kind: "raw_result", raw };
  return stepFive(state, active, upstreamArguments, upstreamResult, publicOutput);
}

/** 5. The upstream's result through the active `after`, public output validation and projection. */
async function stepFive(
  state: CallState,
  active: DeployedRevision | null,
  upstreamArguments: JsonObject,
  upstreamResult: CallToolResult,
  publicOutput: CatalogTool["definition"]["outputSchema"],
): Promise<CallOutcome> {
  const { input, tool } = state;
  const revisionId = active?.revisionId ?? null;
  // The upstream never speaks for the gateway: its own `dev.rayrun/*` metadata is dropped.
  upstreamResult = withoutGatewayMeta(upstreamResult);
  if (upstreamResult.isError) {
    // Upstream errors go back as the upstream's own, and `after` never sees them; projection still holds.
    state.logs.push(stageRow(logKey(state), { stage: "upstream", outcome: "upstream_error", revisionId }));
    return { kind: "result", result: projectResult(upstreamResult, tool.projection) };
  }

  let result = upstreamResult;
  const stageInput = afterInput(input.arguments, upstreamArguments, afterResult(tool.definition, upstreamResult));
  let afterRun: StageRun | null = null;
  if (active?.stages.includes("after")) afterRun = await runActiveStage(state, active, "after", stageInput);
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
  if (active?.stages.includes("before")) beforeRun = await runActiveStage(state, active, "before", stageInput);
  // The clock stood still while the stage ran; a long run leaves it too far behind to judge the lease by.
  if (beforeRun && beforeRun.usage.polls > CLOCK_TRUSTED_POLLS) state.clockFresh = false;
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

/**
 * A failure of the one upstream call as the client sees it. The tool-list bounds belong to indexing, which a
 * tools/call cannot hit; a 401 from a service without OAuth means its secret headers were refused.
 */
function callFailureCode(code: UpstreamFailure["code"]): GatewayRefusalCode {
  if (code === "too_many_tools" || code === "tool_list_too_large" || code === "upstream_unauthorized") return "upstream_protocol_error";
  return code;
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
      stageRow(logKey(state), {
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

/** The result without any `_meta` key in the gateway's own `dev.rayrun/` namespace, nor a 2026-07-28 round's members. */
function withoutGatewayMeta(upstream: CallToolResult): CallToolResult {
  const result = withoutProtocolMembers(upstream);
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
  stage: StageRow["stage"] = "pre_dispatch",
): StageRow {
  return stageRow(logKey(state), { stage, outcome: "refused", code, revisionId, offsetMs: elapsed(state), details: { message } });
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
  if (run.busy) return refused(state, "code_mode_busy", run.busy.message, { retryAfterSeconds: run.busy.retryAfterSeconds });
  if (run.unavailable)
    return refused(state, "hook_unavailable", "The tool's hook could not be run (no isolate was free for it), so the call was stopped");
  const code = run.error?.code ?? "invalid_return";
  // Internal detail stays out of the agent's view unless payload capture allows it.
  const error = state.tool.captureDetails ? run.error : { code };
  return refused(state, "hook_failed", "The tool's hook failed, so the call was stopped", { error });
}
