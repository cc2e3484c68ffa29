import { MissingRequiredClientCapabilityError, ProtocolError, type Server, type ServerContext } from "@modelcontextprotocol/server";
import type { CallToolResult, ClientCapabilities, CreateTaskResult } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import type { GatewayCore } from "./mcp.caller.ts";
import { coreCatalog, observeTask, type ObservedTask } from "./mcp.core.ts";
import { isRecord } from "./mcp.errors.ts";
import { findTask, requestTaskCancel } from "./mcp.tasks.ts";
import { answerTaskInput } from "./mcp.tasks.input.ts";

/**
 * The tasks extension of 2026-07-28 (`io.modelcontextprotocol/tasks`), served
 * over the request core's tasks (mcp.tasks.ts). The server decides: a client
 * whose request declares the extension gets a task (`resultType: "task"`, the
 * task's fields flat on the result) for every tool its upstream runs as one,
 * and polls it with `tasks/get`, whose answer inlines the result once the task
 * has one; `tasks/update` and `tasks/cancel` complete the surface, and
 * `tasks/result` and `tasks/list` do not exist in this revision (-32601). A
 * request that does not declare the extension gets no task, and any `tasks/*`
 * method answers -32021 naming the extension.
 */

export const TASKS_EXTENSION = "io.modelcontextprotocol/tasks";

/** What `server/discover` advertises under `capabilities.extensions`: the extension, with no settings. */
export const TASKS_EXTENSION_CAPABILITY = { [TASKS_EXTENSION]: {} };

/** Whether this request's capabilities declare the tasks extension. */
export function declaresTasks(capabilities: ClientCapabilities | undefined): boolean {
  const extensions = (capabilities as { extensions?: unknown } | undefined)?.extensions;
  return isRecord(extensions) && isRecord(extensions[TASKS_EXTENSION]);
}

/** A tools/call answer as the extension puts it on the wire: a created task flat on the result, anything else as is. */
export function withTaskFlattened(answer: CallToolResult | CreateTaskResult): CallToolResult | Record<string, unknown> {
  const task = (answer as CreateTaskResult).task as CreateTaskResult["task"] | undefined;
  if (!isRecord(task) || typeof task.taskId !== "string") return answer as CallToolResult;
  return {
    resultType: "task",
    taskId: task.taskId,
    status: task.status,
    ...(task.statusMessage !== undefined ? { statusMessage: task.statusMessage } : {}),
    createdAt: task.createdAt,
    lastUpdatedAt: task.lastUpdatedAt,
    ttlMs: wholeMs(task.ttl),
    ...(typeof task.pollInterval === "number" ? { pollIntervalMs: Math.max(1, Math.round(task.pollInterval)) } : {}),
  };
}

/**
 * The v2 SDK server gives every tools/call result without `content` an empty one, a created task's too (it knows
 * the 2025-11-25 `task` key, not the extension's flat task): a CreateTaskResult carries only the task's fields.
 */
export function withoutContentOnTask<Message>(message: Message): Message {
  const result = isRecord(message) ? message.result : undefined;
  if (!isRecord(result) || result.resultType !== "task" || !Array.isArray(result.content) || result.content.length) return message;
  const { content: _added, ...task } = result;
  return { ...message, result: task };
}

const wholeMs = (value: number | null | undefined) => (typeof value === "number" ? Math.max(1, Math.round(value)) : null);

/**
 * The params of `tasks/get`, `tasks/update` and `tasks/cancel` as the SDK hands them over: any object (the checks
 * below answer a malformed one with -32602 and one line, where a schema library's report would be a dump).
 */
const ANY_PARAMS = z.looseObject({});

/** `tasks/get`, `tasks/update` and `tasks/cancel` on the 2026-07-28 server. */
export function registerModernTaskHandlers(server: Server, core: GatewayCore, declared: (ctx: ServerContext) => ClientCapabilities): void {
  const taskOf = (method: string, params: Record<string, unknown>, ctx: ServerContext): string => {
    if (!declaresTasks(declared(ctx))) {
      throw new MissingRequiredClientCapabilityError(
        { requiredCapabilities: { extensions: TASKS_EXTENSION_CAPABILITY } },
        `${method} needs the ${TASKS_EXTENSION} extension in the request's client capabilities`,
      );
    }
    if (typeof params.taskId !== "string") throw new ProtocolError(-32602, `Invalid params: ${method} needs params.taskId, a string`);
    return params.taskId;
  };

  server.setRequestHandler("tasks/get", { params: ANY_PARAMS }, async (params, ctx) =>
    detailedTask(await observeTask(core, taskOf("tasks/get", params, ctx), declared(ctx))),
  );

  server.setRequestHandler("tasks/update", { params: ANY_PARAMS }, async (params, ctx) => {
    const task = await findTask(core, taskOf("tasks/update", params, ctx));
    // Its `inputResponses` were checked raw at the endpoint (mcp.params.ts), and the SDK lifts them off the params.
    await answerTaskInput(core, task, ctx.mcpReq.inputResponses ?? {});
    return {};
  });

  server.setRequestHandler("tasks/cancel", { params: ANY_PARAMS }, async (params, ctx) => {
    const task = await findTask(core, taskOf("tasks/cancel", params, ctx));
    await requestTaskCancel(core, await coreCatalog(core), task);
    return {};
  });
}

/** A `tasks/get` answer: the task's fields, and its result, error or nothing as its status says. */
function detailedTask({ task, running, outcome }: ObservedTask): Record<string, unknown> {
  const createdAt = task.createdAt;
  const ttlMs = Math.max(1, Date.parse(task.expiresAt) - Date.parse(createdAt));
  if (outcome) {
    const ended = { taskId: task.id, createdAt, lastUpdatedAt: task.endedAt ?? new Date().toISOString(), ttlMs };
    // The inlined result is the tools/call result this revision would have answered: a complete one.
    if (outcome.status === "completed") return { ...ended, status: "completed", result: { ...outcome.result, resultType: "complete" } };
    return { ...ended, ...outcome };
  }
  return {
    taskId: task.id,
    status: running?.status ?? "working",
    ...(running?.statusMessage !== undefined ? { statusMessage: running.statusMessage } : {}),
    createdAt,
    lastUpdatedAt: running?.lastUpdatedAt ?? createdAt,
    ttlMs,
    ...(typeof running?.pollInterval === "number" ? { pollIntervalMs: Math.max(1, Math.round(running.pollInterval)) } : {}),
    ...(running?.inputRequests ? { inputRequests: running.inputRequests } : {}),
  };
}
