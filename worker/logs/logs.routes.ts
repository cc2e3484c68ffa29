import { createRoute, z } from "@hono/zod-openapi";
import { errorResponses, json, WorkspaceParams } from "../../schema/api/common.ts";
import {
  CallDetailSchema,
  CallLogSchema,
  CallParams,
  CallSchema,
  CallsQuery,
  CodeRunSchema,
  CodeRunsQuery,
  ContentLogSchema,
  ContentLogsQuery,
  LogsQuery,
  MetricsQuery,
  MetricsSchema,
} from "../../schema/api/logs.ts";
import { ServiceParams } from "../../schema/api/services.ts";
import { ToolParams } from "../../schema/api/tools.ts";
import type { Actor } from "../auth/principal.ts";
import { guard } from "../auth/guard.ts";
import { createRouter } from "../http/app.ts";
import type { Context } from "hono";
import type { AppEnv } from "../http/app.ts";
import { ApiError, notFound } from "../http/errors.ts";
import { findService } from "../services/services.store.ts";
import { findTool } from "../tools/tools.store.ts";
import { callsOfRequest, queryCalls, type StoredCall } from "./calls.store.ts";
import { queryLogs, stageRowsOf } from "./logs.store.ts";
import { stagePageRows } from "./log-details.ts";
import { logDatabase } from "./log-store.ts";
import { openCursor, sealCursor, type PagedRows } from "./page-cursor.ts";
import { queryMetrics } from "./rollups.store.ts";

export const logRoutes = createRouter();

/** Captured details go to keys that can write hooks, and in the browser to admins only. */
const seesDetails = (actor: Actor) => (actor.kind === "user" ? actor.role === "admin" : actor.scopes.has("hooks:write"));

logRoutes.openapi(
  createRoute({
    method: "get",
    path: "/v1/workspaces/{ws}/tools/{toolUid}/hook/logs",
    tags: ["logs"],
    summary: "Hook stage runs and pre-dispatch refusals for a tool, newest first",
    middleware: guard("hooks:read"),
    request: { params: ToolParams, query: LogsQuery },
    responses: {
      200: {
        description: "Logs as JSON, or JSON lines with format=jsonl",
        content: {
          "application/json": { schema: z.object({ logs: z.array(CallLogSchema), nextCursor: z.string().nullable() }) },
          "application/x-ndjson": { schema: z.string() },
        },
      },
      ...errorResponses(400, 404),
    },
  }),
  async (c) => {
    const { ws, toolUid } = c.req.valid("param");
    const query = c.req.valid("query");
    if (!(await findTool(c.env.DB, ws, toolUid))) throw notFound("Tool");
    const withDetails = seesDetails(c.get("actor"));
    // With details, a page's rows are bounded further, so its bytes are too (LOG_DETAIL_PAGE_ROWS).
    const limit = stagePageRows(query.limit, withDetails);
    const { logs, resumeBelow } = await queryLogs(
      logDatabase(c.env, ws),
      ws,
      toolUid,
      { ...query, limit, before: await positionOf(c, "call_logs", query.cursor) },
      withDetails,
    );
    const nextCursor = await cursorAfter(c, "call_logs", logs, limit, resumeBelow);
    // Declared above as application/x-ndjson; Hono's typed responses only model the JSON variant.
    if (query.format === "jsonl") return c.body(...jsonLines(logs, nextCursor)) as never;
    return c.json({ logs, nextCursor }, 200);
  },
);

logRoutes.openapi(
  createRoute({
    method: "get",
    path: "/v1/workspaces/{ws}/services/{svc}/content-logs",
    tags: ["logs"],
    summary: "A service's resources/read and prompts/get through /mcp, newest first (metadata only, never content)",
    middleware: guard("hooks:read"),
    request: { params: ServiceParams, query: ContentLogsQuery },
    responses: {
      200: {
        description: "Logs as JSON, or JSON lines with format=jsonl",
        content: {
          "application/json": { schema: z.object({ logs: z.array(ContentLogSchema), nextCursor: z.string().nullable() }) },
          "application/x-ndjson": { schema: z.string() },
        },
      },
      ...errorResponses(400, 404),
    },
  }),
  async (c) => {
    const { ws, svc } = c.req.valid("param");
    const query = c.req.valid("query");
    if (!(await findService(c.env.DB, ws, svc))) throw notFound("Service");
    // The item (a URI may be a template filled with the client's values) follows the same rule as call log details.
    const withItem = seesDetails(c.get("actor"));
    const { calls, resumeBelow } = await queryCalls(
      logDatabase(c.env, ws),
      ws,
      {
        ...query,
        kind: query.method,
        kinds: ["resources/read", "prompts/get"],
        service: svc,
        outcome: query.outcome === "blocked" ? "hidden" : query.outcome,
        before: await positionOf(c, "calls", query.cursor),
      },
      withItem,
    );
    const logs = calls.map((call) => contentLog(call, withItem));
    const nextCursor = await cursorAfter(c, "calls", logs, query.limit, resumeBelow);
    if (query.format === "jsonl") return c.body(...jsonLines(logs, nextCursor)) as never;
    return c.json({ logs, nextCursor }, 200);
  },
);

logRoutes.openapi(
  createRoute({
    method: "get",
    path: "/v1/workspaces/{ws}/code-runs",
    tags: ["logs"],
    summary: "The workspace's run_code runs through /mcp, newest first (metadata only, never the program or its result)",
    middleware: guard("hooks:read"),
    request: { params: WorkspaceParams, query: CodeRunsQuery },
    responses: {
      200: {
        description: "Runs as JSON, or JSON lines with format=jsonl",
        content: {
          "application/json": { schema: z.object({ runs: z.array(CodeRunSchema), nextCursor: z.string().nullable() }) },
          "application/x-ndjson": { schema: z.string() },
        },
      },
      ...errorResponses(400),
    },
  }),
  async (c) => {
    const { ws } = c.req.valid("param");
    const query = c.req.valid("query");
    const { calls, resumeBelow } = await queryCalls(
      logDatabase(c.env, ws),
      ws,
      { ...query, kind: "run_code", before: await positionOf(c, "calls", query.cursor) },
      false,
    );
    const runs = calls.map(codeRun);
    const nextCursor = await cursorAfter(c, "calls", runs, query.limit, resumeBelow);
    if (query.format === "jsonl") return c.body(...jsonLines(runs, nextCursor)) as never;
    return c.json({ runs, nextCursor }, 200);
  },
);

logRoutes.openapi(
  createRoute({
    method: "get",
    path: "/v1/workspaces/{ws}/logs",
    tags: ["logs"],
    summary: "Every call through the gateway (tools/call, Code Mode inner calls, run_code, resources/read, prompts/get), newest first",
    middleware: guard("hooks:read"),
    request: { params: WorkspaceParams, query: CallsQuery },
    responses: {
      200: {
        description: "Calls as JSON, or JSON lines with format=jsonl (the next cursor in `x-next-cursor`)",
        content: {
          "application/json": { schema: z.object({ calls: z.array(CallSchema), nextCursor: z.string().nullable() }) },
          "application/x-ndjson": { schema: z.string() },
        },
      },
      ...errorResponses(400, 404),
    },
  }),
  async (c) => {
    const { ws } = c.req.valid("param");
    const query = c.req.valid("query");
    const { calls, resumeBelow } = await queryCalls(
      logDatabase(c.env, ws),
      ws,
      { ...query, before: await positionOf(c, "calls", query.cursor) },
      seesDetails(c.get("actor")),
    );
    const nextCursor = await cursorAfter(c, "calls", calls, query.limit, resumeBelow);
    if (query.format === "jsonl") return c.body(...jsonLines(calls, nextCursor)) as never;
    return c.json({ calls, nextCursor }, 200);
  },
);

logRoutes.openapi(
  createRoute({
    method: "get",
    path: "/v1/workspaces/{ws}/logs/{requestId}",
    tags: ["logs"],
    summary: "One call with its hook stage runs, its shadow comparison and, for detail readers, its captured details",
    middleware: guard("hooks:read"),
    request: { params: CallParams },
    responses: {
      200: json(CallDetailSchema, "The call (a run_code with its inner calls) and its stage rows"),
      ...errorResponses(400, 404),
    },
  }),
  async (c) => {
    const { ws, requestId } = c.req.valid("param");
    const withDetails = seesDetails(c.get("actor"));
    const db = logDatabase(c.env, ws);
    const [calls, stages] = await Promise.all([
      callsOfRequest(db, ws, requestId, withDetails),
      stageRowsOf(db, ws, requestId, withDetails),
    ]);
    if (!calls.length) throw notFound("Call");
    return c.json({ calls, stages }, 200);
  },
);

/** The widest window one metrics read covers, and the most points it returns. */
const METRICS_MAX_DAYS = 31;
const METRICS_MAX_POINTS = 1440;

logRoutes.openapi(
  createRoute({
    method: "get",
    path: "/v1/workspaces/{ws}/metrics",
    tags: ["logs"],
    summary: "Calls per step by outcome, p50/p99 duration and bytes, from the per-minute rollups",
    middleware: guard("hooks:read"),
    request: { params: WorkspaceParams, query: MetricsQuery },
    responses: { 200: json(MetricsSchema, "One point per step, and the totals"), ...errorResponses(400) },
  }),
  async (c) => {
    const { ws } = c.req.valid("param");
    const query = c.req.valid("query");
    const until = query.until ? Date.parse(query.until) : Date.now();
    const since = query.since ? Date.parse(query.since) : until - 3_600_000;
    const toMinute = Math.ceil(until / 60_000);
    const fromMinute = Math.floor(since / 60_000);
    if (fromMinute >= toMinute || toMinute - fromMinute > METRICS_MAX_DAYS * 1440) {
      throw new ApiError("invalid_request", {
        message: `since must be before until, at most ${METRICS_MAX_DAYS} days apart`,
        details: { issues: [{ field: "query.since", message: "out of range" }] },
      });
    }
    const points = Math.ceil((toMinute - fromMinute) / query.step);
    if (points > METRICS_MAX_POINTS) {
      throw new ApiError("invalid_request", {
        message: `That window at step ${query.step} is ${points} points; at most ${METRICS_MAX_POINTS}: widen the step`,
        details: { issues: [{ field: "query.step", message: "too many points" }] },
      });
    }
    const metrics = await queryMetrics(logDatabase(c.env, ws), ws, { ...query, fromMinute, toMinute, stepMinutes: query.step });
    return c.json(metrics, 200);
  },
);

/** A call row in the content-logs shape (that route predates call rows). */
function contentLog(call: StoredCall, withItem: boolean) {
  return {
    id: call.id,
    serviceId: call.serviceId ?? "",
    actor: call.actor,
    requestId: call.requestId,
    method: call.kind as "resources/read" | "prompts/get",
    ...(withItem ? { item: call.item ?? "" } : {}),
    outcome: call.outcome === "hidden" ? ("blocked" as const) : (call.outcome as "ok" | "upstream_error" | "upstream_failed" | "error"),
    code: call.code,
    durationMs: call.durationMs,
    createdAt: call.createdAt,
  };
}

/** A run_code call row in the code-runs shape. */
function codeRun(call: StoredCall) {
  return {
    id: call.id,
    actor: call.actor,
    requestId: call.requestId,
    outcome: call.outcome === "ok" ? ("ok" as const) : ("error" as const),
    code: call.code,
    innerCalls: call.innerCalls ?? 0,
    programSha256: call.programSha256,
    programBytes: call.programBytes,
    durationMs: call.durationMs,
    createdAt: call.createdAt,
  };
}

/** Where the page a cursor asks for starts: below that row number of the path's workspace (none: from the newest). */
async function positionOf(c: Context<AppEnv>, rows: PagedRows, cursor: string | undefined): Promise<number | undefined> {
  return cursor === undefined ? undefined : openCursor(c.env.SECRETS_KEY, c.req.param("ws")!, rows, cursor);
}

/**
 * A full page has a next one, starting below its last row's number; so does a page whose scan of the workspace's rows
 * ended before it filled (`resumeBelow`, scan-window.ts), starting below the last row it read.
 */
async function cursorAfter(
  c: Context<AppEnv>,
  rows: PagedRows,
  page: { id: number }[],
  limit: number,
  resumeBelow: number | null,
): Promise<string | null> {
  const last = page.at(-1);
  const position = page.length === limit && last ? last.id : resumeBelow;
  return position === null ? null : sealCursor(c.env.SECRETS_KEY, c.req.param("ws")!, rows, position);
}

function jsonLines(logs: unknown[], nextCursor: string | null): [string, 200, Record<string, string>] {
  const lines = logs.map((log) => `${JSON.stringify(log)}\n`).join("");
  return [lines, 200, { "content-type": "application/x-ndjson", ...(nextCursor ? { "x-next-cursor": nextCursor } : {}) }];
}
