import { createRoute, z } from "@hono/zod-openapi";
import { errorResponses, json, WorkspaceParams } from "../../schema/api/common.ts";
import { CallLogSchema, CodeRunSchema, CodeRunsQuery, ContentLogSchema, ContentLogsQuery, LogsQuery } from "../../schema/api/logs.ts";
import { ServiceParams } from "../../schema/api/services.ts";
import { ToolParams } from "../../schema/api/tools.ts";
import type { Actor } from "../auth/principal.ts";
import { guard } from "../auth/guard.ts";
import { createRouter } from "../http/app.ts";
import { notFound } from "../http/errors.ts";
import { findService } from "../services/services.store.ts";
import { findTool } from "../tools/tools.store.ts";
import { queryCodeRuns } from "./code-runs.store.ts";
import { queryContentLogs } from "./content-logs.store.ts";
import { queryLogs } from "./logs.store.ts";

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
    const logs = await queryLogs(
      c.env.DB,
      ws,
      toolUid,
      { ...query, before: query.cursor ? Number(query.cursor) : undefined },
      seesDetails(c.get("actor")),
    );
    const nextCursor = cursorAfter(logs, query.limit);
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
    const logs = await queryContentLogs(
      c.env.DB,
      ws,
      svc,
      { ...query, before: query.cursor ? Number(query.cursor) : undefined },
      seesDetails(c.get("actor")),
    );
    const nextCursor = cursorAfter(logs, query.limit);
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
    const runs = await queryCodeRuns(c.env.DB, ws, { ...query, before: query.cursor ? Number(query.cursor) : undefined });
    const nextCursor = cursorAfter(runs, query.limit);
    if (query.format === "jsonl") return c.body(...jsonLines(runs, nextCursor)) as never;
    return c.json({ runs, nextCursor }, 200);
  },
);

/** A full page has a next one, starting below its last row's id. */
function cursorAfter(logs: { id: number }[], limit: number): string | null {
  const last = logs.at(-1);
  return logs.length === limit && last ? String(last.id) : null;
}

function jsonLines(logs: unknown[], nextCursor: string | null): [string, 200, Record<string, string>] {
  const lines = logs.map((log) => `${JSON.stringify(log)}\n`).join("");
  return [lines, 200, { "content-type": "application/x-ndjson", ...(nextCursor ? { "x-next-cursor": nextCursor } : {}) }];
}
