import { createRoute, z } from "@hono/zod-openapi";
import { errorResponses, json } from "../../schema/api/common.ts";
import { CallLogSchema, LogsQuery } from "../../schema/api/logs.ts";
import { ToolParams } from "../../schema/api/tools.ts";
import type { Actor } from "../auth/principal.ts";
import { guard } from "../auth/guard.ts";
import { createRouter } from "../http/app.ts";
import { notFound } from "../http/errors.ts";
import { findTool } from "../tools/tools.store.ts";
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
    const last = logs.at(-1);
    const nextCursor = logs.length === query.limit && last ? String(last.id) : null;
    if (query.format === "jsonl") {
      const lines = logs.map((log) => `${JSON.stringify(log)}\n`).join("");
      const headers = { "content-type": "application/x-ndjson", ...(nextCursor ? { "x-next-cursor": nextCursor } : {}) };
      // Declared above as application/x-ndjson; Hono's typed responses only model the JSON variant.
      return c.body(lines, 200, headers) as never;
    }
    return c.json({ logs, nextCursor }, 200);
  },
);
