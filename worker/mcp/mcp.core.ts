import {
  ErrorCode,
  RELATED_TASK_META_KEY,
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
import { callLogMessage, gatewayCallRow, jsonBytes, recordToolCall, type CallActor } from "../calls/call-rows.ts";
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
import {
  fetchUpstreamTaskResult,
  findTask,
  keepTaskOutcome,
  recordTask,
  relayForTask,
  taskBoundRefusal,
  upstreamTaskResult,
  upstreamTaskStatus,
  type FoundTask,
  type TaskInputRequests,
  type TaskOutcome,
  type TaskRelay,
} from "./mcp.tasks.ts";
import { taskInputRequests } from "./mcp.tasks.input.ts";
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
  /**
   * The client takes a task for an answer (2026-07-28's tasks extension, where the server decides): the call
   * becomes a task whenever the tool's upstream runs it as one.
   */
  acceptsTask?: boolean;
}

/**
 * `tools/call`: a Code Mode tool or one direct call through the pipeline, as the MCP result the client gets.
 * Every call gets its row, sent after the response: one that ends before or outside the pipeline (Code Mode's
 * own tools, a profile without direct tools, no lease, a gateway failure) as the gateway's.
 */
export function callTool(core: GatewayCore, call: ToolCallRequest & { task?: undefined; acceptsTask?: false }): Promise<CallToolResult>;
export function callTool(core: GatewayCore, call: ToolCallRequest): Promise<CallToolResult | CreateTaskResult>;
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
            bytesIn: jsonBytes(args),
            bytesOut: jsonBytes(answer),
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
    const taskSupport = upstreamTaskSupport(catalog, name);
    // A client of the tasks extension gets a task whenever the upstream runs the tool as one.
    if (!call.task && call.acceptsTask && (taskSupport === "optional" || taskSupport === "required")) {
      return callTool(core, { ...call, task: {} });
    }
    // A tool the upstream runs only as a task, called by a client that takes no task: the gateway asks for the task
    // itself and answers with its result, so every client can call it.
    if (!call.task && taskSupport === "required") {
      const created = await callTool(core, { ...call, task: {} });
      return isCreatedTask(created) ? await taskResult(core, created.task.taskId, call.upstream, "plain call") : created;
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
      stillAuthorized: caller.stillAuthorized,
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
      afterResponse(waitUntil, "call log", async () =>
        sendCallLogs(env, [await toolCallMessage(actor, recordToolCall(recorded, finished))]),
      );
    }
  } catch (error) {
    // The pipeline itself broke (not a refusal: those are outcomes); the client gets the SDK's internal error.
    if (!run && !(error instanceof ProtocolError)) gatewayCall(null, "error", "internal_error");
    throw error;
  }
}

/**
 * `tasks/result`: the upstream task's result (waited for), through the pipeline's step 5 under the revision that
 * ran `before` at creation, as the result of the call that created it. It gets its own call row. The requests the
 * task makes of the client while it is waited for go to `relayed.relay`, naming the gateway's task (or, for a call
 * that asked for no task, none).
 */
export async function taskResult(
  core: GatewayCore,
  taskId: string,
  relayed: TaskRelay = {},
  asked: "task" | "plain call" = "task",
): Promise<CallToolResult> {
  const catalog = await coreCatalog(core);
  const task = await findTask(core, taskId);
  const relay = relayed.relay && relayForTask(relayed.relay, asked === "task" ? task.id : null);
  const result = await finishedTask(core, catalog, task, await upstreamTaskResult(core, catalog, task, { relay, signal: relayed.signal }));
  // 2025-11-25 names the task a result belongs to in its `_meta`: here, the gateway's id.
  return { ...result, _meta: { ...result._meta, [RELATED_TASK_META_KEY]: { taskId: task.id } } };
}

/** What a 2026-07-28 `tasks/get` reports: the task, and how it ended or, while it runs, the upstream's status. */
export interface ObservedTask {
  task: FoundTask;
  /** While it runs: the upstream's status, message and poll interval, and the requests it waits on the requester for. */
  running?: {
    status: "working" | "input_required";
    statusMessage?: string;
    pollInterval?: number;
    lastUpdatedAt?: string;
    inputRequests?: TaskInputRequests;
  };
  outcome?: TaskOutcome;
}

/**
 * A 2026-07-28 `tasks/get`: the task's state, its result inlined once it has one. The first poll that sees the
 * upstream's task end fetches its result, runs it through step 5 (`after`, under the revision that ran `before`,
 * with its own call row) and keeps it in the row, so later polls answer the same without the upstream. While the
 * upstream's task waits for input, the poll shows the requests it may answer (`capabilities`: what it declares),
 * held for it as mcp.tasks.input.ts says; until the first is in hand the task is `working`.
 */
export async function observeTask(core: GatewayCore, taskId: string, capabilities: ClientCapabilities): Promise<ObservedTask> {
  const catalog = await coreCatalog(core);
  const task = await findTask(core, taskId);
  if (task.outcome) return { task, outcome: task.outcome };
  const upstream = await upstreamTaskStatus(core, catalog, task);
  if (upstream.status === "working" || upstream.status === "input_required") {
    const { statusMessage, pollInterval, lastUpdatedAt } = upstream;
    const inputRequests = upstream.status === "input_required" ? await taskInputRequests(core, catalog, task, capabilities) : null;
    const status = inputRequests ? "input_required" : "working";
    return { task, running: { status, statusMessage, pollInterval, lastUpdatedAt, ...(inputRequests ? { inputRequests } : {}) } };
  }
  let outcome: TaskOutcome;
  if (upstream.status === "cancelled") outcome = { status: "cancelled" };
  else {
    try {
      const result = await fetchUpstreamTaskResult(core, catalog, task);
      // A failed task's result (what a 2025-11-25 SDK server keeps for one) is no tool result: the task failed.
      outcome =
        upstream.status === "failed"
          ? { status: "failed", error: { code: ErrorCode.InternalError, message: upstream.statusMessage ?? "The upstream's task failed" } }
          : { status: "completed", result: await finishedTask(core, catalog, task, result) };
    } catch (error) {
      if (!(error instanceof ProtocolError && error.data?.upstream === true)) throw error;
      outcome = { status: "failed", error: { code: error.code, message: error.message, data: error.data } };
    }
  }
  return { task, outcome: await keepTaskOutcome(core, catalog, task, outcome) };
}

/** An upstream task's result through step 5, as the client gets it, with its own call row. */
async function finishedTask(core: GatewayCore, catalog: Catalog, task: FoundTask, upstreamResult: CallToolResult): Promise<CallToolResult> {
  const { env, caller, waitUntil } = core;
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
      stillAuthorized: caller.stillAuthorized,
    },
    task,
    withoutUpstreamTaskId(upstreamResult),
  );
  let wire: CallToolResult | null = null;
  try {
    wire = withGatewayLinks(toWire(run.outcome, task.publicName, TASK_RESULT_WIRE), task.publicName);
    return wire;
  } finally {
    const recorded = { requestId, callIndex: null, name: task.publicName, arguments: task.arguments, answer: wire };
    afterResponse(waitUntil, "call log", async () =>
      sendCallLogs(env, [await toolCallMessage(callActor(caller), recordToolCall(recorded, run))]),
    );
  }
}

/**
 * A 2025-11-25 upstream names its own task in its result's `_meta` (`related-task`): that id never leaves the
 * gateway, and the hook's `after` never sees it either.
 */
function withoutUpstreamTaskId(result: CallToolResult): CallToolResult {
  if (!result._meta || !(RELATED_TASK_META_KEY in result._meta)) return result;
  const { [RELATED_TASK_META_KEY]: _upstreamTask, ...meta } = result._meta;
  return { ...result, _meta: meta };
}

/** How a task's result is put on the wire: always parsed (it never passes through as bytes), no URL-mode error. */
const TASK_RESULT_WIRE: Pick<ToolCallRequest, "passThroughs" | "urlElicitationError" | "clientCapabilities"> = {
  passThroughs: PassThroughs.parsing(),
  urlElicitationError: false,
  clientCapabilities: undefined,
};

/**
 * How the tool's upstream runs it as a task (`execution.taskSupport`), when the gateway can pass its tasks on: a
 * 2025-era upstream's experimental tasks. A 2026-07-28 upstream's tasks extension is not spoken to upstreams.
 */
function upstreamTaskSupport(catalog: Catalog, name: string): "optional" | "required" | undefined {
  const tool = catalog.tools.get(name);
  if (!tool || catalog.targets.get(tool.serviceId)?.discover) return undefined;
  const support = tool.definition.execution?.taskSupport;
  return support === "optional" || support === "required" ? support : undefined;
}

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
