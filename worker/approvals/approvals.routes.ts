import { createRoute, z } from "@hono/zod-openapi";
import { ApprovalParams, ApprovalSchema, DecideApprovalBody, ListApprovalsQuery } from "../../schema/api/approvals.ts";
import { errorResponses, json, WorkspaceParams } from "../../schema/api/common.ts";
import { guard } from "../auth/guard.ts";
import { createRouter } from "../http/app.ts";
import { ApiError, notFound } from "../http/errors.ts";
import { workspaceClient } from "../workspaces/workspace.client.ts";
import type { Approval } from "./approvals.do.ts";

/** The wire shape: arguments as JSON, not the Durable Object's stored text. */
const present = ({ argumentsJson, ...approval }: Approval) => ({ ...approval, arguments: JSON.parse(argumentsJson) as unknown });

export const approvalRoutes = createRouter();

approvalRoutes.openapi(
  createRoute({
    method: "get",
    path: "/v1/workspaces/{ws}/approvals",
    tags: ["approvals"],
    summary: "List one-call approvals, newest first",
    middleware: guard("admin"),
    request: { params: WorkspaceParams, query: ListApprovalsQuery },
    responses: {
      200: json(z.object({ approvals: z.array(ApprovalSchema), nextCursor: z.string().nullable() }), "Approvals"),
      ...errorResponses(400, 404),
    },
  }),
  async (c) => {
    const { ws } = c.req.valid("param");
    const query = c.req.valid("query");
    const page = await workspaceClient(c.env, ws).listApprovals({
      status: query.status,
      limit: query.limit,
      before: query.cursor ? Number(query.cursor) : undefined,
    });
    const nextCursor = page.nextBefore === null ? null : String(page.nextBefore);
    return c.json({ approvals: page.approvals.map(present), nextCursor }, 200);
  },
);

approvalRoutes.openapi(
  createRoute({
    method: "get",
    path: "/v1/workspaces/{ws}/approvals/{id}",
    tags: ["approvals"],
    summary: "Get one approval",
    middleware: guard("admin"),
    request: { params: ApprovalParams },
    responses: { 200: json(ApprovalSchema, "The approval"), ...errorResponses(404) },
  }),
  async (c) => {
    const { ws, id } = c.req.valid("param");
    const approval = await workspaceClient(c.env, ws).getApproval(id);
    if (!approval) throw notFound("Approval");
    return c.json(present(approval), 200);
  },
);

for (const decision of ["approve", "deny"] as const) {
  approvalRoutes.openapi(
    createRoute({
      method: "post",
      path: `/v1/workspaces/{ws}/approvals/{id}/${decision}`,
      tags: ["approvals"],
      summary: decision === "approve" ? "Approve one exact call; the client repeats it once" : "Deny a pending call",
      description: 'The body is optional: `{ "note": "…" }` records why, listed with the decision (`decisionNote`).',
      middleware: guard("admin"),
      request: { params: ApprovalParams, body: { required: false, content: { "application/json": { schema: DecideApprovalBody } } } },
      responses: { 200: json(ApprovalSchema, "The decided approval"), ...errorResponses(400, 404, 409) },
    }),
    async (c) => {
      const { ws, id } = c.req.valid("param");
      const note = (c.req.valid("json") as { note?: string } | undefined)?.note ?? null;
      const outcome = await workspaceClient(c.env, ws).decideApproval(
        id,
        decision === "approve" ? "approved" : "denied",
        c.get("actor").id,
        note,
      );
      if (!outcome.ok && outcome.reason === "not_found") throw notFound("Approval");
      if (!outcome.ok) {
        throw new ApiError("approval_not_pending", {
          message: `This approval is ${outcome.approval?.status}; only pending approvals can be decided`,
          details: { status: outcome.approval?.status },
        });
      }
      return c.json(present(outcome.approval), 200);
    },
  );
}
