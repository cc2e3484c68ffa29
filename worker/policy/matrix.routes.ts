import { createRoute } from "@hono/zod-openapi";
import { errorResponses, json, WorkspaceParams } from "../../schema/api/common.ts";
import { PolicyMatrixQuery, PolicyMatrixSchema } from "../../schema/api/policy.ts";
import { guard } from "../auth/guard.ts";
import { createRouter } from "../http/app.ts";
import { ApiError } from "../http/errors.ts";
import { listTools } from "../tools/tools.store.ts";
import { matchesFilter, matrixRow } from "./matrix.ts";
import { workspaceOverrides } from "./policy.store.ts";
import { listProfiles } from "./profiles.store.ts";

export const policyMatrixRoutes = createRouter();

policyMatrixRoutes.openapi(
  createRoute({
    method: "get",
    path: "/v1/workspaces/{ws}/policy/matrix",
    tags: ["policy"],
    summary: "Every tool's effective mode under every access profile, searchable and paged",
    description:
      "Each cell is what /mcp enforces: the strictest of the tool's override (else the profile's default mode) and every " +
      "risk rule it matches, with the override and the risk floor that hold it. Columns are all the workspace's profiles " +
      "(at most 50); rows are tools in service then name order, filtered by `q`, `serviceId`, `status` and `mode`.",
    middleware: guard("hooks:read"),
    request: { params: WorkspaceParams, query: PolicyMatrixQuery },
    responses: { 200: json(PolicyMatrixSchema, "The matrix page"), ...errorResponses(400, 404) },
  }),
  async (c) => {
    const { ws } = c.req.valid("param");
    const query = c.req.valid("query");
    const [profiles, overrides, tools] = await Promise.all([
      listProfiles(c.env.DB, ws),
      workspaceOverrides(c.env.DB, ws),
      listTools(c.env.DB, ws, { serviceId: query.serviceId, status: query.status }),
    ]);
    if (query.profileId && !profiles.some((profile) => profile.id === query.profileId)) {
      throw new ApiError("invalid_request", {
        message: "Unknown access profile",
        details: { issues: [{ field: "query.profileId", message: "No such profile in this workspace" }] },
      });
    }
    const rows = tools.flatMap((tool) => {
      const row = matrixRow(tool, profiles, overrides);
      return matchesFilter(row, tool, query) ? [row] : [];
    });
    const start = Number(query.cursor ?? 0);
    const end = start + query.limit;
    return c.json({ profiles, tools: rows.slice(start, end), total: rows.length, nextCursor: end < rows.length ? String(end) : null }, 200);
  },
);
