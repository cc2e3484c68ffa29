import { createRoute, z } from "@hono/zod-openapi";
import { errorResponses, json, jsonBody, WorkspaceParams } from "../../../schema/api/common.ts";
import {
  DeployBody,
  DeployedSchema,
  DeploymentEventSchema,
  DeploymentsSchema,
  EffectiveAt,
  HookParams,
  HookUsageSchema,
  ResetEventSchema,
  SlotParams,
} from "../../../schema/api/hooks.ts";
import { guard } from "../../auth/guard.ts";
import { createRouter } from "../../http/app.ts";
import { changeInForce } from "../../leases/change-window.ts";
import { deleteBundles } from "./bundles.r2.ts";
import type { DeploymentPointer } from "./deployments.do.ts";
import { listDeploymentEvents, listResetEvents } from "./events.store.ts";
import { hookActor, requireTool, requireWritableTool, unwrap } from "./routes.support.ts";
import { actorQuotas } from "../../quotas/actor-quota.client.ts";
import { workspaceClient } from "../../workspaces/workspace.client.ts";

export const deployRoutes = createRouter();
const HOOK = "/v1/workspaces/{ws}/tools/{toolUid}/hook";
const tags = ["hooks"];

const orNull = (pointer: DeploymentPointer | undefined) => pointer ?? null;

deployRoutes.openapi(
  createRoute({
    method: "get",
    path: `${HOOK}/deployments`,
    tags,
    summary: "The active and shadow pointers and the latest 100 attributed pointer changes",
    middleware: guard("hooks:read"),
    request: { params: HookParams },
    responses: { 200: json(DeploymentsSchema, "Deployments"), ...errorResponses(404) },
  }),
  async (c) => {
    const { ws, toolUid } = c.req.valid("param");
    await requireTool(c.env, ws, toolUid);
    const [pointers, events] = await Promise.all([
      workspaceClient(c.env, ws).toolDeployments(toolUid),
      listDeploymentEvents(c.env.DB, ws, toolUid, 100),
    ]);
    return c.json({ active: orNull(pointers.active), shadow: orNull(pointers.shadow), events }, 200);
  },
);

deployRoutes.openapi(
  createRoute({
    method: "put",
    path: `${HOOK}/deployments/{slot}`,
    tags,
    summary: "Point active or shadow at a revision of this tool (deploy, promote, roll back)",
    description:
      "Only revisions compiled against the tool's current upstream definition: 409 `incompatible_revision`. " +
      "Another tool's revision is 404. Active+shadow code of the workspace is capped: 413 `deployed_code_full`.",
    middleware: guard("hooks:write"),
    request: { params: SlotParams, body: jsonBody(DeployBody) },
    responses: { 200: json(DeployedSchema, "Deployed"), ...errorResponses(400, 404, 409, 413) },
  }),
  async (c) => {
    const { ws, toolUid, slot } = c.req.valid("param");
    const { revisionId } = c.req.valid("json");
    const tool = await requireWritableTool(c.env, ws, toolUid);
    const { deployment, event } = unwrap(
      await workspaceClient(c.env, ws).deployHook({
        workspaceId: ws,
        toolUid,
        slot,
        revisionId,
        currentDefinitionHash: tool.definitionHash,
        actor: hookActor(c),
      }),
    );
    return c.json({ deployment, event, effectiveAt: await changeInForce(c) }, 200);
  },
);

deployRoutes.openapi(
  createRoute({
    method: "delete",
    path: `${HOOK}/deployments/{slot}`,
    tags,
    summary: "Empty the active or shadow pointer",
    middleware: guard("hooks:write"),
    request: { params: SlotParams },
    responses: { 200: json(z.object({ event: DeploymentEventSchema, effectiveAt: EffectiveAt }), "Removed"), ...errorResponses(404) },
  }),
  async (c) => {
    const { ws, toolUid, slot } = c.req.valid("param");
    await requireTool(c.env, ws, toolUid);
    const { event } = unwrap(await workspaceClient(c.env, ws).undeployHook({ workspaceId: ws, toolUid, slot, actor: hookActor(c) }));
    return c.json({ event, effectiveAt: await changeInForce(c) }, 200);
  },
);

deployRoutes.openapi(
  createRoute({
    method: "delete",
    path: HOOK,
    tags,
    summary: "Reset the tool's hook: draft, versions, tests, revisions, bundles and pointers",
    description: "Permanent; export the versions first. The actor-attributed reset event survives. Works on tools of deleted services.",
    middleware: guard("hooks:write"),
    request: { params: HookParams },
    responses: { 200: json(z.object({ reset: ResetEventSchema, effectiveAt: EffectiveAt }), "Reset"), ...errorResponses(404) },
  }),
  async (c) => {
    const { ws, toolUid } = c.req.valid("param");
    await requireTool(c.env, ws, toolUid);
    const { reset, bundleKeys } = unwrap(await workspaceClient(c.env, ws).resetHook({ workspaceId: ws, toolUid, actor: hookActor(c) }));
    const effectiveAt = await changeInForce(c);
    // Only now: until the reset was in force, a lease another isolate holds could still send a call to these bundles.
    await deleteBundles(c.env.BUNDLES, bundleKeys);
    return c.json({ reset, effectiveAt }, 200);
  },
);

deployRoutes.openapi(
  createRoute({
    method: "get",
    path: `${HOOK}/resets`,
    tags,
    summary: "The tool's latest 100 reset events, newest first",
    middleware: guard("hooks:read"),
    request: { params: HookParams },
    responses: { 200: json(z.object({ resets: z.array(ResetEventSchema) }), "Reset events"), ...errorResponses(404) },
  }),
  async (c) => {
    const { ws, toolUid } = c.req.valid("param");
    await requireTool(c.env, ws, toolUid);
    return c.json({ resets: await listResetEvents(c.env.DB, ws, toolUid, 100) }, 200);
  },
);

deployRoutes.openapi(
  createRoute({
    method: "get",
    path: "/v1/workspaces/{ws}/hooks/usage",
    tags,
    summary: "The workspace's hook quotas and allowances, and the caller's compile attempts, in the current hour",
    middleware: guard("hooks:read"),
    request: { params: WorkspaceParams },
    responses: { 200: json(HookUsageSchema, "Usage"), ...errorResponses(404) },
  }),
  async (c) => {
    const { ws } = c.req.valid("param");
    const [workspace, compileAttempts] = await Promise.all([
      workspaceClient(c.env, ws).hookUsage(),
      actorQuotas(c.env, hookActor(c)).compileUsage(),
    ]);
    return c.json({ ...workspace, compileAttempts }, 200);
  },
);
