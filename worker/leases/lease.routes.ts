import { createRoute } from "@hono/zod-openapi";
import { errorResponses, json, WorkspaceParams } from "../../schema/api/common.ts";
import { LeaseStatusSchema } from "../../schema/api/workspaces.ts";
import { guard } from "../auth/guard.ts";
import { createRouter } from "../http/app.ts";
import { workspaceClient } from "../workspaces/workspace.client.ts";

export const leaseRoutes = createRouter();

leaseRoutes.openapi(
  createRoute({
    method: "get",
    path: "/v1/workspaces/{ws}/lease",
    tags: ["workspaces"],
    summary: "The version of the state calls depend on, when it took effect, and how many leases isolates hold on it",
    description: "See docs/leases.md. `grants` counts every Durable Object request the call path made on this version.",
    middleware: guard("hooks:read"),
    request: { params: WorkspaceParams },
    responses: { 200: json(LeaseStatusSchema, "Lease status"), ...errorResponses(404) },
  }),
  async (c) => {
    const status = await workspaceClient(c.env, c.req.valid("param").ws).leaseStatus();
    return c.json(
      {
        version: status.version,
        effectiveAt: new Date(status.effectiveAt).toISOString(),
        grantedUntil: status.grantedUntil > 0 ? new Date(status.grantedUntil).toISOString() : null,
        grants: status.grants,
        openChanges: status.openChanges,
      },
      200,
    );
  },
);
