import {
  ErrorCode,
  UrlElicitationRequiredError,
  type CallToolResult,
  type ClientCapabilities,
  type CreateTaskResult,
  type TaskCreationParams,
  type Tool,
} from "@modelcontextprotocol/sdk/types.js";
import type { JsonObject } from "../../schema/hooks/contract.ts";
import { approvalLinks } from "../approvals/approval-links.ts";
import { toolCallMessage } from "../calls/call-record.ts";
import { callLogMessage, gatewayCallRow, type CallActor } from "../calls/call-rows.ts";
import { isolateCatalogs, loadCatalog, type Catalog } from "../calls/catalog.ts";
import type { CallOutcome, ToolCallRun } from "../calls/outcome.ts";
import { finishTaskResult, runToolCall } from "../calls/pipeline.ts";
import { codeRunMessages } from "../codemode/codemode.record.ts";
import { callCodeModeTool, isCodeModeCall, isDirectCallOffered, RUN_CODE, toolsForDiscovery } from "../codemode/codemode.tools.ts";
import { LeaseUnavailable } from "../leases/holder.ts";
import { afterResponse } from "../lib/after-response.ts";
import { newId } from "../lib/ids.ts";
import type { CallRowOutcome } from "../logs/call-log.ts";
import { sendCallLogs } from "../logs/call-log.send.ts";
import type { UpstreamCallOptions } from "../services/upstream.call.ts";
import { withGatewayLinks } from "./mcp.content.ts";
import { echoedName, UpstreamRpcError } from "./mcp.errors.ts";
import { ProtocolError } from "./mcp.hygiene.ts";
import type { Caller, GatewayCore } from "./mcp.caller.ts";
import { PassThroughs } from "./mcp.passthrough.ts";
import { findTask, recordTask, taskBoundRefusal, upstreamTaskResult } from "./mcp.tasks.ts";
import { refusal, refusalCode } from "./mcp.results.ts";

/**
 * The request core: what a tools/list or tools/call does, whatever protocol
 * revision asked. Each revision's layer (mcp.legacy.ts for 2025-era traffic,
 * mcp.modern.ts for 2026-07-28) parses its wire format, builds the upstream
 * call options its transport allows, and calls these; the pipeline, its
 * policy, hooks, approvals, logs and bounds run here the same for every one.
 */

export const WORKSPACE_UNAVAILABLE =
  "The workspace's current policy could not be confirmed (its Durable Object did not answer); retry shortly";

/** The workspace's catalog under a lease; inside a request handler a missing lease is that request's JSON-RPC error. */
export async function coreCatalog(core: GatewayCore): Promise<Catalog> {
  try {
    return await loadCatalog(core.env, core.caller.workspaceId, core.waitUntil);
  } catch (error) {
    if (!(error instanceof LeaseUnavailable)) throw error;
    console.error("no lease for an MCP request", error);
    throw new ProtocolError(ErrorCode.InternalError, WORKSPACE_UNAVAILABLE);
  }
}

/** `tools/list`: what the caller's profile shows a client that declares `capabilities`. */
export async function listTools(core: GatewayCore, capabilities: ClientCapabilities | undefined): Promise<Tool[]> {
  return toolsForDiscovery(await coreCatalog(core), core.caller.profileId, capabilities);
}

/** What one revision's layer hands a tools/call besides its name and arguments. */
export interface ToolCallRequest {
  name: string;
  arguments: JsonObject;
  /** Progress, cancellation and relayed requests, as this revision's transport carries them. */
  upstream: UpstreamCallOptions;
  /** What the client declared: in its session (2025 era) or in this request's `_meta` (2026-07-28). */
  clientCapabilities: ClientCapabilities | undefined;
  /** Results this answer carries as the upstream's bytes. */
  passThroughs: PassThroughs;
  /**
   * Whether the revision lets a tools/call answer with the URL-mode elicitation error (-32042), 2025-11-25's
   * way of sending the user to a URL; 2026-07-28 asks for URLs in an input-required result instead.
   */
  urlElicitationError: boolean;
  /** A task-augmented call (2025-11-25 experimental tasks): the answer is the task, its result fetched later. */
  task?: TaskCreationParams;
}

/**
 * `tools/call`: a Code Mode tool or one direct call through the pipeline, as the MCP result the client gets.
 * Every call gets its row, sent after the response: one that ends before or outside the pipeline (Code Mode's
 * own tools, a profile without direct tools, no lease, a gateway failure) as the gateway's.
 */
export function callTool(
  core: GatewayCore,
  call: ToolCallRequest & { task: TaskCreationParams },
): Promise<CallToolResult | CreateTaskResult>;
export function callTool(core: GatewayCore, call: ToolCallRequest): Promise<CallToolResult>;
export async function callTool(core: GatewayCore, call: ToolCallRequest): Promise<CallToolResult | CreateTaskResult> {
  const { env, caller, waitUntil } = core;
  const { name, arguments: args } = call;
  const requestId = newId("req");
  const startedAt = Date.now();
  const actor = callActor(caller);
  const gatewayCall = (answer: unknown, outcome: CallRowOutcome, code: string | null) =>
    afterResponse(waitUntil, "call log", () =>
      sendCallLogs(env, [
        callLogMessage(
          gatewayCallRow(actor, {
            requestId,
            callIndex: null,
            name,
            arguments: args,
            answer,
            startedAt,
            durationMs: Date.now() - startedAt,
            outcome,
            code,
          }),
          [],
          false,
        ),
      ]),
    );
  let run: ToolCallRun | undefined;
  try {
    let catalog: Catalog;
    try {
      catalog = await loadCatalog(env, caller.workspaceId, waitUntil);
    } catch (error) {
      if (!(error instanceof LeaseUnavailable)) throw error;
      console.error("no lease for a tools/call", error);
      const refused = unavailableCall(caller.workspaceId, name);
      gatewayCall(refused, "refused", refusalCode(refused));
      return refused;
    }
    const links = approvalLinks(env, caller.origin, caller.workspaceId);
    if (isCodeModeCall(catalog, caller.profileId, name)) {
      const { result, inner } = await callCodeModeTool(
        { env, catalog, loadCatalog: () => coreCatalog(core), ...caller, requestId, approvalLinks: links, signal: call.upstream.signal },
        name,
        args,
      );
      if (name === RUN_CODE) {
        const timing = { requestId, startedAt, durationMs: Date.now() - startedAt };
        afterResponse(waitUntil, "code run log", async () => sendCallLogs(env, await codeRunMessages(actor, timing, args, result, inner)));
      } else gatewayCall(result, result.isError ? "refused" : "ok", result.isError ? refusalCode(result) : null);
      return result;
    }
    // A profile in Code Mode only reaches tools through run_code.
    if (!isDirectCallOffered(catalog, caller.profileId)) {
      gatewayCall(null, "hidden", null);
      return toWire({ kind: "hidden" }, name, call);
    }
    // A tool the upstream runs only as a task, called by a client that did not ask for one (2026-07-28 clients
    // cannot): the gateway asks for the task itself and answers with its result, so every client can call it.
    if (!call.task && catalog.tools.get(name)?.definition.execution?.taskSupport === "required") {
      const created = await callTool(core, { ...call, task: {} });
      return isCreatedTask(created) ? await taskResult(core, created.task.taskId) : created;
    }
    if (call.task) {
      const refused = await taskBoundRefusal(core, name, args);
      if (refused) {
        gatewayCall(refused, "refused", refusalCode(refused));
        return refused;
      }
    }
    run = await runToolCall({
      env,
      catalog,
      publicName: name,
      workspaceId: caller.workspaceId,
      keyId: caller.keyId,
      profileId: caller.profileId,
      arguments: args,
      requestId,
      approvalLinks: links,
      upstream: call.upstream,
      clientCapabilities: call.clientCapabilities,
      grantSubject: caller.grantSubject,
      ...(call.task ? { task: call.task } : {}),
    });
    const finished = run;
    const raw = run.outcome.kind === "raw_result" ? run.outcome.raw.bytes : null;
    let wire: CallToolResult | CreateTaskResult | null = null;
    try {
      if (run.outcome.kind === "task" && run.tool) {
        const stored = { name, serviceId: run.tool.serviceId, arguments: args, revisionId: run.revisionId };
        wire = await recordTask(core, stored, run.outcome);
        return wire;
      }
      wire = withGatewayLinks(toWire(run.outcome, name, call), name);
      return wire;
    } finally {
      // The shadow revision runs inside toolCallMessage, after the response like the rows it adds to.
      const recorded = { requestId, callIndex: null, name, arguments: args, answer: raw ?? wire };
      afterResponse(waitUntil, "call log", async () => sendCallLogs(env, [await toolCallMessage(actor, recorded, finished)]));
    }
  } catch (error) {
    // The pipeline itself broke (not a refusal: those are outcomes); the client gets the SDK's internal error.
    if (!run && !(error instanceof ProtocolError)) gatewayCall(null, "error", "internal_error");
    throw error;
  }
}

/**
 * `tasks/result`: the upstream task's result (waited for), through the pipeline's step 5 under the revision that
 * ran `before` at creation, as the result of the call that created it. It gets its own call row.
 */
export async function taskResult(core: GatewayCore, taskId: string): Promise<CallToolResult> {
  const { env, caller, waitUntil } = core;
  const catalog = await coreCatalog(core);
  const task = await findTask(core, taskId);
  const upstreamResult = await upstreamTaskResult(core, catalog, task);
  const requestId = newId("req");
  const run = await finishTaskResult(
    {
      env,
      catalog,
      publicName: task.publicName,
      workspaceId: caller.workspaceId,
      keyId: caller.keyId,
      profileId: caller.profileId,
      arguments: task.arguments,
      requestId,
      approvalLinks: approvalLinks(env, caller.origin, caller.workspaceId),
      grantSubject: caller.grantSubject,
    },
    task,
    upstreamResult,
  );
  let wire: CallToolResult | null = null;
  try {
    wire = withGatewayLinks(toWire(run.outcome, task.publicName, TASK_RESULT_WIRE), task.publicName);
    return wire;
  } finally {
    const recorded = { requestId, callIndex: null, name: task.publicName, arguments: task.arguments, answer: wire };
    afterResponse(waitUntil, "call log", async () => sendCallLogs(env, [await toolCallMessage(callActor(caller), recorded, run)]));
  }
}

/** How a task's result is put on the wire: always parsed (it never passes through as bytes), no URL-mode error. */
const TASK_RESULT_WIRE: Pick<ToolCallRequest, "passThroughs" | "urlElicitationError" | "clientCapabilities"> = {
  passThroughs: PassThroughs.parsing(),
  urlElicitationError: false,
  clientCapabilities: undefined,
};

/** Whether a task-augmented call's answer is its task (not a refusal). */
const isCreatedTask = (answer: CallToolResult | CreateTaskResult): answer is CreateTaskResult =>
  typeof (answer.task as { taskId?: unknown } | undefined)?.taskId === "string";

/** Who made a call, as its call rows record it. */
const callActor = (caller: Caller): CallActor => ({
  workspaceId: caller.workspaceId,
  actor: caller.actor,
  keyId: caller.keyId,
  grantedBy: caller.grantedBy,
  profileId: caller.profileId,
});

/**
 * A tools/call with no lease to run under: fails closed, as `hook_unavailable`
 * for a tool this isolate last knew with a hook, else `workspace_unavailable`
 * (a block or a first deployment may be pending either way).
 */
function unavailableCall(workspaceId: string, name: string): CallToolResult {
  const known = isolateCatalogs.lastRead(workspaceId);
  const uid = known?.tools.get(name)?.uid;
  if (uid && known?.deployments.get(uid)?.active) {
    return refusal("hook_unavailable", "The tool's hook could not be confirmed current, so the call was stopped", {
      tool: echoedName(name),
    });
  }
  return refusal("workspace_unavailable", "The workspace's current policy could not be confirmed, so the call was stopped", {
    tool: echoedName(name),
  });
}

/** A call's outcome as MCP puts it on the wire. */
function toWire(
  outcome: CallOutcome,
  publicName: string,
  call: Pick<ToolCallRequest, "passThroughs" | "urlElicitationError" | "clientCapabilities">,
): CallToolResult {
  switch (outcome.kind) {
    case "result":
      return outcome.result;
    case "raw_result":
      return call.passThroughs.hold(outcome.raw.bytes);
    case "refused":
      if (outcome.code === "upstream_authorization_required" && call.urlElicitationError) urlElicitation(outcome, call.clientCapabilities);
      return refusal(outcome.code, outcome.message, outcome.details);
    case "hidden":
      // Unknown and blocked look the same, so a client learns nothing about tools its profile may not use.
      throw new ProtocolError(ErrorCode.InvalidParams, `Unknown tool: ${echoedName(publicName)}`);
    case "upstream_rpc_error":
      throw new UpstreamRpcError(outcome.error);
    case "task":
      throw new Error("a task outcome has no tool result: recordTask answers it");
  }
}

/**
 * A caller who must authorize their own upstream grant, through a client that
 * declared URL-mode elicitation: the MCP spec's URLElicitationRequiredError
 * (-32042), whose URL the client shows the user. Other clients get the
 * refusal as an `isError` result with the URL in its details.
 */
function urlElicitation(outcome: Extract<CallOutcome, { kind: "refused" }>, capabilities: ClientCapabilities | undefined): void {
  const url = outcome.details.authorizationUrl;
  if (typeof url !== "string" || !capabilities?.elicitation?.url) return;
  throw new UrlElicitationRequiredError([{ mode: "url", elicitationId: newId("eli"), url, message: outcome.message }], outcome.message);
}
