import { createRoute, z } from "@hono/zod-openapi";
import { errorResponses, json, jsonBody, WorkspaceParams } from "../../schema/api/common.ts";
import { HookHistoryToolSchema } from "../../schema/api/hooks.ts";
import { CreateServiceBody, IndexSummarySchema, ServiceParams, ServiceSchema, UpdateServiceBody } from "../../schema/api/services.ts";
import { guard } from "../auth/guard.ts";
import { createRouter } from "../http/app.ts";
import { toolsWithHookHistory } from "../hooks/lifecycle/events.store.ts";
import { ApiError, notFound } from "../http/errors.ts";
import { publicToolName } from "../tools/tools.store.ts";
import { indexNewService, refreshService } from "./indexing.ts";
import { findService, listServices, prepareService, slugTaken, softDeleteService, updateService } from "./services.store.ts";
import { checkUpstreamUrl, parseAllowList } from "./url-guard.ts";

export const serviceRoutes = createRouter();

function assertUrlAllowed(env: Env, url: string): void {
  const verdict = checkUpstreamUrl(url, parseAllowList(env.DEV_ALLOWED_HOSTS));
  if (!verdict.ok)
    throw new ApiError("url_not_allowed", { message: `Service URL refused: ${verdict.reason}`, details: { field: "json.url" } });
}

serviceRoutes.openapi(
  createRoute({
    method: "post",
    path: "/v1/workspaces/{ws}/services",
    tags: ["services"],
    summary: "Connect an upstream MCP server and index its tools",
    description: "Nothing is stored unless indexing (initialize + every page of tools/list) succeeds.",
    middleware: guard("admin"),
    request: { params: WorkspaceParams, body: jsonBody(CreateServiceBody) },
    responses: {
      201: json(z.object({ service: ServiceSchema, index: IndexSummarySchema }), "Connected and indexed"),
      ...errorResponses(400, 404, 409, 413, 502),
    },
  }),
  async (c) => {
    const { ws } = c.req.valid("param");
    const body = c.req.valid("json");
    assertUrlAllowed(c.env, body.url);
    if (await slugTaken(c.env.DB, ws, body.slug)) {
      throw new ApiError("conflict", { message: `A service with slug '${body.slug}' already exists`, details: { field: "json.slug" } });
    }
    const pending = await prepareService(c.env, ws, {
      slug: body.slug,
      url: body.url,
      headers: body.headers ?? {},
      requiresAuthorization: body.requiresAuthorization ?? false,
      payloadCapture: body.payloadCapture ?? false,
    });
    const index = await indexNewService(c.env, pending);
    const service = await findService(c.env.DB, ws, pending.id);
    if (!service) throw new Error("service vanished after insert");
    return c.json({ service, index }, 201);
  },
);

serviceRoutes.openapi(
  createRoute({
    method: "get",
    path: "/v1/workspaces/{ws}/services",
    tags: ["services"],
    summary: "List services",
    middleware: guard("hooks:read"),
    request: { params: WorkspaceParams, query: z.object({ includeDeleted: z.enum(["true", "false"]).optional() }) },
    responses: { 200: json(z.object({ services: z.array(ServiceSchema) }), "Services"), ...errorResponses(404) },
  }),
  async (c) => {
    const services = await listServices(c.env.DB, c.req.valid("param").ws, c.req.valid("query").includeDeleted === "true");
    return c.json({ services }, 200);
  },
);

serviceRoutes.openapi(
  createRoute({
    method: "get",
    path: "/v1/workspaces/{ws}/services/{svc}",
    tags: ["services"],
    summary: "Get a service",
    middleware: guard("hooks:read"),
    request: { params: ServiceParams },
    responses: { 200: json(ServiceSchema, "The service"), ...errorResponses(404) },
  }),
  async (c) => {
    const { ws, svc } = c.req.valid("param");
    const service = await findService(c.env.DB, ws, svc);
    if (!service) throw notFound("Service");
    return c.json(service, 200);
  },
);

serviceRoutes.openapi(
  createRoute({
    method: "patch",
    path: "/v1/workspaces/{ws}/services/{svc}",
    tags: ["services"],
    summary: "Change a service's URL, secret headers, authorization requirement or payload capture",
    description: "Changing the URL or headers does not re-index; call refresh.",
    middleware: guard("admin"),
    request: { params: ServiceParams, body: jsonBody(UpdateServiceBody) },
    responses: { 200: json(ServiceSchema, "The updated service"), ...errorResponses(400, 404) },
  }),
  async (c) => {
    const { ws, svc } = c.req.valid("param");
    const body = c.req.valid("json");
    if (body.url !== undefined) assertUrlAllowed(c.env, body.url);
    const service = await updateService(c.env, ws, svc, body);
    if (!service) throw notFound("Service");
    return c.json(service, 200);
  },
);

serviceRoutes.openapi(
  createRoute({
    method: "post",
    path: "/v1/workspaces/{ws}/services/{svc}/refresh",
    tags: ["services"],
    summary: "Re-index a service's tools",
    description: "Changed definitions go to review (calls blocked); tools no longer listed are marked removed.",
    middleware: guard("admin"),
    request: { params: ServiceParams },
    responses: { 200: json(IndexSummarySchema, "What changed"), ...errorResponses(404, 413, 502) },
  }),
  async (c) => {
    const { ws, svc } = c.req.valid("param");
    const summary = await refreshService(c.env, ws, svc);
    if (!summary) throw notFound("Service");
    return c.json(summary, 200);
  },
);

serviceRoutes.openapi(
  createRoute({
    method: "delete",
    path: "/v1/workspaces/{ws}/services/{svc}",
    tags: ["services"],
    summary: "Delete a service (its tools stop being callable; ids and history are kept)",
    middleware: guard("admin"),
    request: { params: ServiceParams },
    responses: { 204: { description: "Deleted" }, ...errorResponses(404, 409) },
  }),
  async (c) => {
    const { ws, svc } = c.req.valid("param");
    const service = await findService(c.env.DB, ws, svc);
    if (!service || service.deletedAt) throw notFound("Service");
    // Deleting would strand hook history behind a tool nobody can edit; reset those hooks first.
    const withHistory = await toolsWithHookHistory(c.env.DB, ws, svc);
    if (withHistory.length > 0) {
      throw new ApiError("hook_history_exists", {
        message: "Tools of this service have hook history; export and reset their hooks first",
        details: {
          tools: withHistory.map((tool) => tool.toolUid),
          toolNames: withHistory.map((tool) => publicToolName(service.slug, tool.name)),
        },
      });
    }
    if (!(await softDeleteService(c.env.DB, ws, svc))) throw notFound("Service");
    return c.body(null, 204);
  },
);

serviceRoutes.openapi(
  createRoute({
    method: "get",
    path: "/v1/workspaces/{ws}/services/{svc}/hook-history",
    tags: ["services", "hooks"],
    summary: "Tools of a service (deleted ones included) that still have hook history",
    description:
      "The cleanup view for services deleted before hook history blocked deletion: list here, then per tool " +
      "`GET …/tools/{toolUid}/hook/export` and `DELETE …/tools/{toolUid}/hook`. Nothing else can change those hooks.",
    middleware: guard("hooks:read"),
    request: { params: ServiceParams },
    responses: {
      200: json(z.object({ service: ServiceSchema, tools: z.array(HookHistoryToolSchema) }), "Tools with hook history"),
      ...errorResponses(404),
    },
  }),
  async (c) => {
    const { ws, svc } = c.req.valid("param");
    const service = await findService(c.env.DB, ws, svc);
    if (!service) throw notFound("Service");
    return c.json({ service, tools: await toolsWithHookHistory(c.env.DB, ws, svc) }, 200);
  },
);
