import { createRoute, z } from "@hono/zod-openapi";
import { errorResponses, json, jsonBody, WorkspaceParams } from "../../schema/api/common.ts";
import {
  ListToolsQuery,
  PutPolicyBody,
  PutProjectionBody,
  ReviewBody,
  ToolParams,
  ToolPolicySchema,
  ToolSchema,
} from "../../schema/api/tools.ts";
import { guard } from "../auth/guard.ts";
import { createRouter } from "../http/app.ts";
import { ApiError, notFound } from "../http/errors.ts";
import { changeInForce } from "../leases/change-window.ts";
import { listToolPolicies, MAX_TOOL_POLICIES, removeToolPolicy, setToolPolicy } from "../policy/policy.store.ts";
import { ToolProfileParams } from "../../schema/api/policy.ts";
import { findProfile } from "../policy/profiles.store.ts";
import { approveDefinition, findTool, listTools, setProjection } from "./tools.store.ts";

export const toolRoutes = createRouter();

toolRoutes.openapi(
  createRoute({
    method: "get",
    path: "/v1/workspaces/{ws}/tools",
    tags: ["tools"],
    summary: "List indexed tools with their definitions and review state",
    middleware: guard("hooks:read"),
    request: { params: WorkspaceParams, query: ListToolsQuery },
    responses: { 200: json(z.object({ tools: z.array(ToolSchema) }), "Tools"), ...errorResponses(400, 404) },
  }),
  async (c) => c.json({ tools: await listTools(c.env.DB, c.req.valid("param").ws, c.req.valid("query")) }, 200),
);

toolRoutes.openapi(
  createRoute({
    method: "get",
    path: "/v1/workspaces/{ws}/tools/{toolUid}",
    tags: ["tools"],
    summary: "Get one tool",
    middleware: guard("hooks:read"),
    request: { params: ToolParams },
    responses: { 200: json(ToolSchema, "The tool"), ...errorResponses(404) },
  }),
  async (c) => {
    const { ws, toolUid } = c.req.valid("param");
    const tool = await findTool(c.env.DB, ws, toolUid);
    if (!tool) throw notFound("Tool");
    return c.json(tool, 200);
  },
);

toolRoutes.openapi(
  createRoute({
    method: "post",
    path: "/v1/workspaces/{ws}/tools/{toolUid}/review",
    tags: ["tools"],
    summary: "Approve a changed upstream definition so the tool can be called again",
    middleware: guard("admin"),
    request: { params: ToolParams, body: jsonBody(ReviewBody) },
    responses: { 200: json(ToolSchema, "The approved tool"), ...errorResponses(400, 404, 409) },
  }),
  async (c) => {
    const { ws, toolUid } = c.req.valid("param");
    const tool = await findTool(c.env.DB, ws, toolUid);
    if (!tool) throw notFound("Tool");
    if (tool.status !== "review_required") {
      throw new ApiError("no_review_pending", {
        message: "This tool has no changed definition awaiting review",
        details: { status: tool.status },
      });
    }
    const { definitionHash } = c.req.valid("json");
    if (!(await approveDefinition(c.env.DB, ws, toolUid, definitionHash))) {
      throw new ApiError("definition_changed", {
        message: "The definition changed since you read it; review the current one",
        details: {
          definitionHash: tool.definitionHash,
        },
      });
    }
    await changeInForce(c);
    return c.json((await findTool(c.env.DB, ws, toolUid))!, 200);
  },
);

toolRoutes.openapi(
  createRoute({
    method: "get",
    path: "/v1/workspaces/{ws}/tools/{toolUid}/policy",
    tags: ["policy"],
    summary: "Per-profile policy overrides for a tool",
    middleware: guard("hooks:read"),
    request: { params: ToolParams },
    responses: { 200: json(z.object({ policies: z.array(ToolPolicySchema) }), "Overrides"), ...errorResponses(404) },
  }),
  async (c) => {
    const { ws, toolUid } = c.req.valid("param");
    if (!(await findTool(c.env.DB, ws, toolUid))) throw notFound("Tool");
    return c.json({ policies: await listToolPolicies(c.env.DB, ws, toolUid) }, 200);
  },
);

toolRoutes.openapi(
  createRoute({
    method: "put",
    path: "/v1/workspaces/{ws}/tools/{toolUid}/policy",
    tags: ["policy"],
    summary: "Set a tool's mode (allow, block, approval) for one access profile",
    description: "A workspace holds at most 25,000 per-tool overrides over all its profiles (413 `too_many_tool_policies`).",
    middleware: guard("admin"),
    request: { params: ToolParams, body: jsonBody(PutPolicyBody) },
    responses: { 200: json(ToolPolicySchema, "The policy"), ...errorResponses(400, 404, 413) },
  }),
  async (c) => {
    const { ws, toolUid } = c.req.valid("param");
    const body = c.req.valid("json");
    if (!(await findTool(c.env.DB, ws, toolUid))) throw notFound("Tool");
    if (!(await findProfile(c.env.DB, ws, body.profileId))) throw notFound("Access profile");
    const policy = await setToolPolicy(c.env.DB, ws, { ...body, toolUid, updatedBy: c.get("actor").id });
    if (policy === "full") {
      throw new ApiError("too_many_tool_policies", {
        message: `A workspace holds at most ${MAX_TOOL_POLICIES} per-tool overrides over all its profiles; remove some first`,
        details: { limit: MAX_TOOL_POLICIES },
      });
    }
    await changeInForce(c);
    return c.json(policy, 200);
  },
);

toolRoutes.openapi(
  createRoute({
    method: "delete",
    path: "/v1/workspaces/{ws}/tools/{toolUid}/policy/{profileId}",
    tags: ["policy"],
    summary: "Remove a tool's override for one access profile, so the profile's default mode applies again",
    description: "Idempotent: 204 whether or not the tool had an override under the profile.",
    middleware: guard("admin"),
    request: { params: ToolProfileParams },
    responses: { 204: { description: "No override any more" }, ...errorResponses(404) },
  }),
  async (c) => {
    const { ws, toolUid, profileId } = c.req.valid("param");
    if (!(await findTool(c.env.DB, ws, toolUid))) throw notFound("Tool");
    if (!(await findProfile(c.env.DB, ws, profileId))) throw notFound("Access profile");
    await removeToolPolicy(c.env.DB, ws, profileId, toolUid);
    await changeInForce(c);
    return c.body(null, 204);
  },
);

toolRoutes.openapi(
  createRoute({
    method: "put",
    path: "/v1/workspaces/{ws}/tools/{toolUid}/projection",
    tags: ["tools"],
    summary: "Choose which top-level fields of the structured result clients receive",
    description: "Only for tools with an outputSchema. Discovery shows the projected output schema.",
    middleware: guard("admin"),
    request: { params: ToolParams, body: jsonBody(PutProjectionBody) },
    responses: { 200: json(ToolSchema, "The tool"), ...errorResponses(400, 404) },
  }),
  async (c) => {
    const { ws, toolUid } = c.req.valid("param");
    const { fields } = c.req.valid("json");
    const tool = await findTool(c.env.DB, ws, toolUid);
    if (!tool) throw notFound("Tool");
    const properties = Object.keys((tool.definition.outputSchema?.properties ?? {}) as Record<string, unknown>);
    if (fields && !tool.definition.outputSchema) {
      throw new ApiError("projection_requires_output_schema", { message: "Projection needs a tool with an outputSchema" });
    }
    const unknown = (fields ?? []).filter((field) => !properties.includes(field));
    if (unknown.length) {
      throw new ApiError("invalid_request", {
        message: `Not properties of the output schema: ${unknown.join(", ")}`,
        details: {
          issues: unknown.map((field) => ({ field: "json.fields", message: `unknown field ${field}` })),
        },
      });
    }
    await setProjection(c.env.DB, ws, toolUid, fields);
    await changeInForce(c);
    return c.json((await findTool(c.env.DB, ws, toolUid))!, 200);
  },
);
