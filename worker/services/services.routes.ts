import { createRoute, z } from "@hono/zod-openapi";
import { errorResponses, json, jsonBody, WorkspaceParams } from "../../schema/api/common.ts";
import { HookHistoryToolSchema } from "../../schema/api/hooks.ts";
import { CreateServiceBody, IndexSummarySchema, ServiceParams, ServiceSchema, UpdateServiceBody } from "../../schema/api/services.ts";
import { guard } from "../auth/guard.ts";
import { createRouter } from "../http/app.ts";
import { changeInForce } from "../leases/change-window.ts";
import { toolsWithHookHistory } from "../hooks/lifecycle/events.store.ts";
import { ApiError, notFound } from "../http/errors.ts";
import { withUpstreamAuthorization } from "../upstream-auth/authorization.ts";
import { SHARED_SUBJECT } from "../upstream-auth/grants.do.ts";
import { changeServiceOAuth, connectOAuthService, disconnectGrants } from "../upstream-auth/lifecycle.ts";
import { resourceCovers } from "../upstream-auth/oauth.server.ts";
import { indexNewService, reindexService, tooManyServices } from "./indexing.ts";
import {
  findService,
  listServices,
  prepareService,
  servicesFull,
  slugTaken,
  softDeleteService,
  storedUpstreamTarget,
  updateService,
} from "./services.store.ts";
import { UpstreamFailure } from "./upstream.ts";
import { publicToolName, type IndexSummary } from "../tools/tools.store.ts";
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
    description:
      "Nothing is stored unless indexing (initialize + every page of tools/list) succeeds, or the upstream answers 401 with a " +
      "Bearer challenge: then the gateway discovers its authorization server (RFC 9728, RFC 8414 / OpenID Connect), registers " +
      "a client (pre-registered, client ID metadata document, or RFC 7591), and stores the service pending authorization, " +
      "with `index: null` (docs/upstream-oauth.md).",
    middleware: guard("admin"),
    request: { params: WorkspaceParams, body: jsonBody(CreateServiceBody) },
    responses: {
      201: json(
        z.object({ service: ServiceSchema, index: z.union([IndexSummarySchema, z.null()]) }),
        "Connected and indexed, or pending authorization",
      ),
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
    // Before any upstream is reached; the insert counts again, for connects that race this one.
    if (await servicesFull(c.env.DB, ws)) throw tooManyServices();
    const pending = await prepareService(c.env, ws, {
      slug: body.slug,
      url: body.url,
      headers: body.headers ?? {},
      payloadCapture: body.payloadCapture ?? false,
      reviewInitialTools: body.reviewInitialTools ?? false,
    });
    let index: IndexSummary | null = null;
    try {
      index = await indexNewService(c.env, pending);
    } catch (error) {
      if (!(error instanceof UpstreamFailure) || error.code !== "upstream_unauthorized") throw error;
      await connectOAuthService(c.env, pending, error.challenge, body.oauth);
    }
    const service = await findService(c.env.DB, ws, pending.id);
    if (!service) throw new Error("service vanished after insert");
    await changeInForce(c);
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
    summary: "Change a service's URL, secret headers, payload capture or upstream OAuth (or lift an old authorization hold)",
    description:
      "Changing the URL or headers does not re-index; call refresh. Changing `oauth` does: removing it indexes through the new " +
      "headers (refused `oauth_still_required` while the upstream still answers 401), adding it discovers and registers from the " +
      "upstream's 401, and a changed mode or client revokes every grant and returns the service to pending (docs/upstream-oauth.md).",
    middleware: guard("admin"),
    request: { params: ServiceParams, body: jsonBody(UpdateServiceBody) },
    responses: { 200: json(ServiceSchema, "The updated service"), ...errorResponses(400, 404, 409, 413, 502) },
  }),
  async (c) => {
    const { ws, svc } = c.req.valid("param");
    const body = c.req.valid("json");
    const stored = await storedUpstreamTarget(c.env, ws, svc);
    if (!stored) throw notFound("Service");
    if (body.url !== undefined) {
      assertUrlAllowed(c.env, body.url);
      // Its tokens are bound to one resource (RFC 8707): a service that keeps OAuth cannot be pointed anywhere else.
      const { oauth } = stored;
      if (oauth && body.oauth !== null && !resourceCovers(oauth.server.resource, new URL(body.url))) {
        throw new ApiError("conflict", {
          message: `This service's OAuth grants are for ${oauth.server.resource}; connect the new URL as a service of its own`,
          details: { field: "json.url" },
        });
      }
    }
    if (body.oauth !== undefined) {
      // How the service reaches its upstream once this PATCH is in: its new URL and headers, and no token.
      const target = { ...stored.target, url: body.url ?? stored.target.url, headers: body.headers ?? stored.target.headers };
      await changeServiceOAuth(c.env, { workspaceId: ws, id: svc, oauth: stored.oauth, target }, body.oauth);
    }
    const service = await updateService(c.env, ws, svc, body);
    if (!service) throw notFound("Service");
    await changeInForce(c);
    return c.json(service, 200);
  },
);

serviceRoutes.openapi(
  createRoute({
    method: "post",
    path: "/v1/workspaces/{ws}/services/{svc}/refresh",
    tags: ["services"],
    summary: "Re-index a service's tools",
    description:
      "Changed definitions and new tools go to review (calls blocked until approved); tools no longer listed are marked removed. " +
      "An OAuth service is listed with the workspace's grant (shared) or the grant of the admin who authorized it (per user).",
    middleware: guard("admin"),
    request: { params: ServiceParams },
    responses: { 200: json(IndexSummarySchema, "What changed"), ...errorResponses(400, 404, 409, 413, 502) },
  }),
  async (c) => {
    const { ws, svc } = c.req.valid("param");
    const stored = await storedUpstreamTarget(c.env, ws, svc);
    if (!stored) throw notFound("Service");
    const { oauth } = stored;
    const indexSubject = oauth?.indexSubject ?? SHARED_SUBJECT;
    if (oauth && !oauth.indexSubject && oauth.mode === "per_user") {
      throw new ApiError("upstream_authorization_required", { message: "Authorize the service first (POST …/authorize)" });
    }
    const refreshed = await withUpstreamAuthorization(
      { env: c.env, workspaceId: ws, serviceId: svc, serviceSlug: stored.slug, oauth, callerSubject: indexSubject },
      stored.target,
      (target) => reindexService(c.env, ws, svc, target),
    ).catch((error: unknown) => {
      if (error instanceof UpstreamFailure && error.code === "upstream_unauthorized") {
        throw new ApiError("upstream_authorization_required", {
          message: "The upstream answered 401: it asks for credentials this service was not connected with (connect it again for OAuth)",
        });
      }
      throw error;
    });
    if (!refreshed.ok) {
      const { code, message, details } = refreshed.refusal;
      throw new ApiError(code, { message, details });
    }
    await changeInForce(c);
    return c.json(refreshed.value, 200);
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
    const oauth = (await storedUpstreamTarget(c.env, ws, svc))?.oauth ?? null;
    if (!(await softDeleteService(c.env.DB, ws, svc))) throw notFound("Service");
    // Its grants go with it, revoked where the authorization server offers revocation.
    await disconnectGrants(c.env, ws, svc, oauth);
    await changeInForce(c);
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
