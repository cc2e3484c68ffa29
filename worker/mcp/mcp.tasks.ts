import {
  CallToolResultSchema,
  CancelTaskResultSchema,
  ErrorCode,
  GetTaskResultSchema,
  McpError,
  RELATED_TASK_META_KEY,
  type CallToolResult,
  type CancelTaskResult,
  type CreateTaskResult,
  type GetTaskResult,
  type ServerRequest,
} from "@modelcontextprotocol/sdk/types.js";
import type { JsonObject } from "../../schema/hooks/contract.ts";
import type { Catalog } from "../calls/catalog.ts";
import type { CallOutcome } from "../calls/outcome.ts";
import { GATEWAY_META_PREFIX } from "../lib/gateway-meta.ts";
import { newId, nowIso } from "../lib/ids.ts";
import { endTaskSession, upstreamTaskRequest, UpstreamFailure, type UpstreamTarget } from "../services/upstream.ts";
import { MAX_CALL_DURATION_MS, type UpstreamCallOptions } from "../services/upstream.call.ts";
import { withUpstreamAuthorization } from "../upstream-auth/authorization.ts";
import type { GatewayCore } from "./mcp.caller.ts";
import { ProtocolError } from "./mcp.hygiene.ts";
import { refusal } from "./mcp.results.ts";

/**
 * Task-augmented tool calls, passed through to upstreams that offer them (the
 * 2025-11-25 experimental tasks); a 2026-07-28 client asks for them with the
 * tasks extension (mcp.tasks.modern.ts), which this module serves the same way. The client never sees the upstream's
 * task id: it gets one of the gateway's, whose row (gateway_tasks) names the
 * workspace and credential that created it, the upstream task and session,
 * and what the `after` stage needs once the result is fetched. A task id is
 * found only by that workspace and credential; to anyone else it does not
 * exist. For a 2025-era client, once its result is delivered or it is
 * cancelled, the row goes and the upstream session it lived in is ended
 * (DELETE). A 2026-07-28 client polls `tasks/get` and may poll again after the
 * task ended: the row keeps the task's final state (`outcome`) until it expires,
 * and the upstream session is ended as soon as that state is known.
 */

/** What `initialize` advertises: task-augmented tools/call, and tasks/get, tasks/result and tasks/cancel. */
export const TASK_CAPABILITIES = { cancel: {}, requests: { tools: { call: {} } } };

/** Tasks one workspace may have open at once; past it a task-augmented call is refused `task_limit`. */
export const MAX_OPEN_TASKS_PER_WORKSPACE = 1000;
/** The arguments a task row keeps for its `after` stage, as JSON. */
export const MAX_TASK_ARGUMENTS_BYTES = 256 * 1024;
/** How long a task row is kept at most, whatever `ttl` the upstream gives it (and when it gives none). */
export const MAX_TASK_TTL_MS = 24 * 60 * 60 * 1000;
/** A task's final state kept for tasks/get (its result, as JSON); a larger result fails the task `task_limit`. */
export const MAX_TASK_OUTCOME_BYTES = 1024 * 1024;
/** tasks/get and tasks/cancel: one plain answer. */
const TASK_REQUEST_TIMEOUT_MS = 30_000;

interface TaskRow {
  id: string;
  service_id: string;
  public_name: string;
  upstream_task_id: string;
  upstream_session: string | null;
  arguments: string;
  upstream_arguments: string;
  revision_id: string | null;
  created_at: string;
  expires_at: string;
  outcome: string | null;
  ended_at: string | null;
  input_token: string | null;
  input_until: string | null;
  input_requests: string | null;
}

/** How a task ended, as the tasks extension (2026-07-28) reports it: kept in the row once known. */
export type TaskOutcome =
  | { status: "completed"; result: CallToolResult }
  | { status: "failed"; error: { code: number; message: string; data?: Record<string, unknown> } }
  | { status: "cancelled" };

/** What a task's result needs to go through the pipeline's step 5. */
export interface StoredTask {
  id: string;
  serviceId: string;
  publicName: string;
  arguments: JsonObject;
  upstreamArguments: JsonObject;
  revisionId: string | null;
}

const bytesOf = (value: unknown) => new TextEncoder().encode(JSON.stringify(value)).byteLength;

/** The refusal for a task-augmented call past a bound, before the upstream is asked for anything; null within them. */
export async function taskBoundRefusal(core: GatewayCore, name: string, args: JsonObject): Promise<CallToolResult | null> {
  const bytes = bytesOf(args);
  if (bytes > MAX_TASK_ARGUMENTS_BYTES) {
    return refusal("task_limit", `A task's arguments are kept until its result is fetched, and these are too large (${bytes} bytes)`, {
      tool: name,
      limit: "task_arguments_bytes",
      bytes,
      max: MAX_TASK_ARGUMENTS_BYTES,
    });
  }
  const { env, caller } = core;
  await env.DB.prepare("DELETE FROM gateway_tasks WHERE workspace_id = ? AND expires_at < ?").bind(caller.workspaceId, nowIso()).run();
  const open = await env.DB.prepare("SELECT COUNT(*) AS n FROM gateway_tasks WHERE workspace_id = ?")
    .bind(caller.workspaceId)
    .first<{ n: number }>();
  if ((open?.n ?? 0) >= MAX_OPEN_TASKS_PER_WORKSPACE) {
    return refusal("task_limit", `The workspace already has ${MAX_OPEN_TASKS_PER_WORKSPACE} tasks open; fetch or cancel some first`, {
      tool: name,
      limit: "open_tasks",
      max: MAX_OPEN_TASKS_PER_WORKSPACE,
    });
  }
  return null;
}

/** Stores a task the upstream created and answers the client with it under the gateway's own id. */
export async function recordTask(
  core: GatewayCore,
  call: { name: string; serviceId: string; arguments: JsonObject; revisionId: string | null },
  outcome: Extract<CallOutcome, { kind: "task" }>,
): Promise<CreateTaskResult | CallToolResult> {
  const { env, caller } = core;
  const upstreamTask = outcome.created.task;
  if (bytesOf(outcome.upstreamArguments) > MAX_TASK_ARGUMENTS_BYTES) {
    return refusal("task_limit", "The hook's arguments for this task are too large to keep until its result is fetched", {
      tool: call.name,
      limit: "task_arguments_bytes",
      max: MAX_TASK_ARGUMENTS_BYTES,
    });
  }
  const id = newId("tsk", 32);
  const createdAt = Date.now();
  const ttl = Math.min(typeof upstreamTask.ttl === "number" ? upstreamTask.ttl : MAX_TASK_TTL_MS, MAX_TASK_TTL_MS);
  await env.DB.prepare(
    `INSERT INTO gateway_tasks (id, workspace_id, credential, service_id, public_name, upstream_task_id, upstream_session,
       arguments, upstream_arguments, revision_id, created_at, expires_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  )
    .bind(
      id,
      caller.workspaceId,
      caller.credential,
      call.serviceId,
      call.name,
      upstreamTask.taskId,
      outcome.session ?? null,
      JSON.stringify(call.arguments),
      JSON.stringify(outcome.upstreamArguments),
      call.revisionId,
      new Date(createdAt).toISOString(),
      new Date(createdAt + ttl).toISOString(),
    )
    .run();
  return { ...asGatewayTask(outcome.created), task: { ...upstreamTask, taskId: id } };
}

/**
 * An upstream's task answer (creation, status, cancellation) as the gateway passes it on under its own task id: its
 * `_meta` may neither speak for the gateway (`dev.rayrun/…`, such as a forged refusal) nor name the upstream's own
 * task (`related-task`), whose id never leaves the gateway. The rest of its `_meta` is the upstream's to send.
 */
function asGatewayTask<T extends { _meta?: Record<string, unknown> }>(answer: T): T {
  const meta = answer._meta;
  if (!meta) return answer;
  const kept = Object.entries(meta).filter(([key]) => key !== RELATED_TASK_META_KEY && !key.startsWith(GATEWAY_META_PREFIX));
  const { _meta: _upstreamMeta, ...rest } = answer;
  return (kept.length ? { ...rest, _meta: Object.fromEntries(kept) } : rest) as T;
}

const taskNotFound = () => new ProtocolError(ErrorCode.InvalidParams, "Task not found");

/** The caller's task, or the error a task that does not exist gets (another workspace's or credential's included). */
export async function findTask(core: GatewayCore, taskId: string): Promise<FoundTask> {
  const row = await core.env.DB.prepare(
    `SELECT id, service_id, public_name, upstream_task_id, upstream_session, arguments, upstream_arguments, revision_id,
       created_at, expires_at, outcome, ended_at, input_token, input_until, input_requests
     FROM gateway_tasks WHERE id = ? AND workspace_id = ? AND credential = ? AND expires_at >= ?`,
  )
    .bind(taskId, core.caller.workspaceId, core.caller.credential, nowIso())
    .first<TaskRow>();
  if (!row) throw taskNotFound();
  return {
    id: row.id,
    serviceId: row.service_id,
    publicName: row.public_name,
    arguments: JSON.parse(row.arguments) as JsonObject,
    upstreamArguments: JSON.parse(row.upstream_arguments) as JsonObject,
    revisionId: row.revision_id,
    upstreamTaskId: row.upstream_task_id,
    session: row.upstream_session ?? undefined,
    createdAt: row.created_at,
    expiresAt: row.expires_at,
    outcome: row.outcome === null ? null : (JSON.parse(row.outcome) as TaskOutcome),
    endedAt: row.ended_at,
    input:
      row.input_token && row.input_until
        ? {
            token: row.input_token,
            until: row.input_until,
            requests: row.input_requests ? (JSON.parse(row.input_requests) as TaskInputRequests) : {},
          }
        : null,
  };
}

/** Requests an upstream's task waits on the client for, by the key the gateway gave each (`r1`, `r2`, …). */
export type TaskInputRequests = Record<string, { method: string; params?: Record<string, unknown> }>;

/** A task the caller may see, as its row holds it. */
export interface FoundTask extends StoredTask {
  upstreamTaskId: string;
  session: string | undefined;
  createdAt: string;
  expiresAt: string;
  /** How it ended, once the gateway saw it end (2026-07-28 tasks only); null while it runs. */
  outcome: TaskOutcome | null;
  endedAt: string | null;
  /** The input the task's upstream waits for, while an isolate holds its `tasks/result` (mcp.tasks.input.ts). */
  input: { token: string; until: string; requests: TaskInputRequests } | null;
}

/** A relay for the upstream's requests during a task, and the cancellation of the request that waits on them. */
export type TaskRelay = Pick<UpstreamCallOptions, "relay" | "signal">;

/** One request about the task to its upstream, with the service's credentials; failures as the client sees them. */
async function toUpstream<T>(
  core: GatewayCore,
  catalog: Catalog,
  task: FoundTask,
  timeoutMs: number,
  send: Parameters<typeof upstreamTaskRequest<T>>[3],
  relayed: TaskRelay = {},
): Promise<T> {
  const { target, authorization } = serviceOf(core, catalog, task.serviceId);
  try {
    const sent = await withUpstreamAuthorization(authorization, target, (authorized) =>
      upstreamTaskRequest(authorized, task.session, timeoutMs, send, relayed),
    );
    if (!sent.ok) throw new ProtocolError(ErrorCode.InternalError, sent.refusal.message, { code: sent.refusal.code });
    return sent.value;
  } catch (error) {
    if (error instanceof McpError) throw new ProtocolError(error.code, error.message.replace(/^MCP error -?\d+: /, ""), { upstream: true });
    if (error instanceof UpstreamFailure) throw new ProtocolError(ErrorCode.InternalError, error.message, { code: error.code });
    throw error;
  }
}

function serviceOf(core: GatewayCore, catalog: Catalog, serviceId: string) {
  const service = catalog.servicesById.get(serviceId);
  const target = catalog.targets.get(serviceId);
  // A service deleted since: its tasks are gone with it.
  if (!service || !target) throw taskNotFound();
  const authorization = {
    env: core.env,
    workspaceId: core.caller.workspaceId,
    serviceId,
    serviceSlug: service.slug,
    oauth: service.oauth,
    callerSubject: core.caller.grantSubject,
  };
  return { target, authorization };
}

/**
 * `tasks/get`: the upstream task's status, under the gateway's id. While the upstream's task waits for input,
 * `relayInput` (a client that answers requests) passes its requests on first, and the status is read after.
 */
export async function getTask(
  core: GatewayCore,
  catalog: Catalog,
  taskId: string,
  relayInput?: (task: FoundTask) => Promise<void>,
): Promise<GetTaskResult> {
  const task = await findTask(core, taskId);
  const status = await upstreamTaskStatus(core, catalog, task);
  if (status.status !== "input_required" || !relayInput) return { ...asGatewayTask(status), taskId: task.id };
  await relayInput(task);
  return { ...asGatewayTask(await upstreamTaskStatus(core, catalog, task)), taskId: task.id };
}

/** The upstream task's own status (its id, not the gateway's). */
export function upstreamTaskStatus(core: GatewayCore, catalog: Catalog, task: FoundTask): Promise<GetTaskResult> {
  return toUpstream(core, catalog, task, TASK_REQUEST_TIMEOUT_MS, (client, options) =>
    client.request({ method: "tasks/get", params: { taskId: task.upstreamTaskId } }, GetTaskResultSchema, options),
  );
}

/**
 * The upstream task's result (`tasks/result` waits for it), then the task is done with. So is a task the upstream
 * answers with an error; one whose upstream could not be reached (or timed out) is kept, to be asked again.
 */
export async function upstreamTaskResult(core: GatewayCore, catalog: Catalog, task: FoundTask, relayed: TaskRelay = {}) {
  try {
    const result = await fetchUpstreamTaskResult(core, catalog, task, relayed);
    forgetTask(core, catalog, task);
    return result;
  } catch (error) {
    if (error instanceof ProtocolError && error.data?.upstream === true) forgetTask(core, catalog, task);
    throw error;
  }
}

/**
 * The upstream task's result (`tasks/result`, which waits for it). An upstream's JSON-RPC error (the task failed)
 * is a ProtocolError marked `upstream: true`; a failure to reach the upstream is one with the gateway's code. The
 * requests the task makes of the client meanwhile come on this request's stream: they go to `relayed.relay`.
 */
export async function fetchUpstreamTaskResult(
  core: GatewayCore,
  catalog: Catalog,
  task: FoundTask,
  relayed: TaskRelay = {},
): Promise<CallToolResult> {
  return (await toUpstream(
    core,
    catalog,
    task,
    MAX_CALL_DURATION_MS,
    (client, options) => client.request({ method: "tasks/result", params: { taskId: task.upstreamTaskId } }, CallToolResultSchema, options),
    relayed,
  )) as CallToolResult;
}

/**
 * A relay for a task's upstream requests, which name the upstream's own task (`related-task`): passed on, they name
 * the gateway's task instead (`taskId`), or no task at all (null: for a client that asked for none), so the upstream's
 * id never leaves the gateway.
 */
export function relayForTask(
  relay: NonNullable<UpstreamCallOptions["relay"]>,
  taskId: string | null,
): NonNullable<UpstreamCallOptions["relay"]> {
  return { ...relay, forward: (request, signal) => relay.forward(namingTask(request, taskId), signal) };
}

function namingTask(request: ServerRequest, taskId: string | null): ServerRequest {
  const meta = request.params?._meta;
  if (!meta || !(RELATED_TASK_META_KEY in meta)) return request;
  const { [RELATED_TASK_META_KEY]: _upstreamTask, ...rest } = meta;
  const { _meta: _upstreamMeta, ...params } = request.params!;
  const named = taskId === null ? rest : { ...rest, [RELATED_TASK_META_KEY]: { taskId } };
  return { ...request, params: { ...params, ...(Object.keys(named).length ? { _meta: named } : {}) } } as ServerRequest;
}

/**
 * Keeps how a task ended, then ends the upstream session it lived in (after the response). The first to record an
 * outcome wins: a concurrent tasks/get that also saw the task end gets the kept one, so every poll answers alike.
 */
export async function keepTaskOutcome(core: GatewayCore, catalog: Catalog, task: FoundTask, outcome: TaskOutcome): Promise<TaskOutcome> {
  let json = JSON.stringify(outcome);
  const bytes = new TextEncoder().encode(json).byteLength;
  if (bytes > MAX_TASK_OUTCOME_BYTES) {
    json = JSON.stringify({
      status: "failed",
      error: {
        code: ErrorCode.InternalError,
        message: `The task's result is ${bytes} bytes, over the ${MAX_TASK_OUTCOME_BYTES} the gateway keeps for tasks/get`,
        data: { code: "task_limit", limit: "task_result_bytes", bytes, max: MAX_TASK_OUTCOME_BYTES },
      },
    } satisfies TaskOutcome);
  }
  const kept = await core.env.DB.prepare("UPDATE gateway_tasks SET outcome = ?, ended_at = ? WHERE id = ? AND outcome IS NULL")
    .bind(json, nowIso(), task.id)
    .run();
  const target = catalog.targets.get(task.serviceId);
  if (kept.meta.changes && target) {
    core.waitUntil(endTaskSession(target, task.session).catch((error: unknown) => console.error("task session not ended", error)));
  }
  if (kept.meta.changes) return JSON.parse(json) as TaskOutcome;
  const row = await core.env.DB.prepare("SELECT outcome FROM gateway_tasks WHERE id = ?").bind(task.id).first<{ outcome: string | null }>();
  return row?.outcome ? (JSON.parse(row.outcome) as TaskOutcome) : (JSON.parse(json) as TaskOutcome);
}

/**
 * A 2026-07-28 `tasks/cancel`: passed on to the upstream while the task runs, and the row kept, so the next
 * tasks/get shows how it ended (cancelled, or done first). Cancelling an ended task is acknowledged as it is.
 */
export async function requestTaskCancel(core: GatewayCore, catalog: Catalog, task: FoundTask): Promise<void> {
  if (task.outcome) return;
  try {
    await toUpstream(core, catalog, task, TASK_REQUEST_TIMEOUT_MS, (client, options) =>
      client.request({ method: "tasks/cancel", params: { taskId: task.upstreamTaskId } }, CancelTaskResultSchema, options),
    );
  } catch (error) {
    // The upstream refuses to cancel a task that has already ended; tasks/get then shows how it ended.
    if (!(error instanceof ProtocolError && error.data?.upstream === true)) throw error;
  }
}

/** `tasks/cancel`: passed on, then the task is done with. */
export async function cancelTask(core: GatewayCore, catalog: Catalog, taskId: string): Promise<CancelTaskResult> {
  const task = await findTask(core, taskId);
  try {
    const cancelled = await toUpstream(core, catalog, task, TASK_REQUEST_TIMEOUT_MS, (client, options) =>
      client.request({ method: "tasks/cancel", params: { taskId: task.upstreamTaskId } }, CancelTaskResultSchema, options),
    );
    return { ...asGatewayTask(cancelled), taskId: task.id };
  } finally {
    forgetTask(core, catalog, task);
  }
}

/** The row goes, and the upstream session the task lived in is ended, after the response. */
function forgetTask(core: GatewayCore, catalog: Catalog, task: FoundTask): void {
  const target: UpstreamTarget | undefined = catalog.targets.get(task.serviceId);
  core.waitUntil(
    Promise.all([
      core.env.DB.prepare("DELETE FROM gateway_tasks WHERE id = ?").bind(task.id).run(),
      target ? endTaskSession(target, task.session) : Promise.resolve(),
    ]).catch((error: unknown) => console.error("task cleanup failed", error)),
  );
}

/**
 * The hourly job's share: rows of tasks past their expiry, whose result nobody fetched. (Their upstream sessions
 * end when the upstream expires them; the gateway no longer has a call to end them from.)
 */
export async function forgetExpiredTasks(db: D1Database, now = Date.now()): Promise<number> {
  const deleted = await db.prepare("DELETE FROM gateway_tasks WHERE expires_at < ?").bind(new Date(now).toISOString()).run();
  return deleted.meta.changes;
}
