import { z } from "@hono/zod-openapi";

export const ApprovalStatusSchema = z.enum(["pending", "approved", "denied", "used", "expired"]);

export const ApprovalSchema = z
  .object({
    id: z.string(),
    toolUid: z.string(),
    publicName: z.string(),
    keyId: z.string().openapi({ description: "The client key whose call this approval is for" }),
    revisionId: z.string().nullable().openapi({ description: "The active hook revision the approval is bound to (null: no hook)" }),
    callHash: z.string().openapi({ description: "SHA-256 of the exact transformed call" }),
    arguments: z.unknown().openapi({ description: "The transformed arguments that will reach the upstream" }),
    reason: z.string().openapi({ description: "Stable snake_case code: `policy_approval`, or the one the hook gave" }),
    message: z
      .string()
      .nullable()
      .openapi({ description: "The hook's readable explanation for the approver (1–1,000 characters); null for policy approvals" }),
    source: z.enum(["policy", "hook"]),
    status: ApprovalStatusSchema,
    createdAt: z.string(),
    expiresAt: z.string(),
    decidedBy: z.string().nullable().openapi({ description: "Who decided: a user id or key id (`GET …/actors` names them)" }),
    decidedAt: z.string().nullable(),
    decisionNote: z.string().nullable().openapi({ description: "The approver's note on the decision; null when none was given" }),
    usedAt: z.string().nullable(),
  })
  .openapi("Approval");

export const ApprovalParams = z.object({
  ws: z.string().openapi({ param: { name: "ws", in: "path" } }),
  id: z.string().openapi({ param: { name: "id", in: "path" } }),
});

export const ListApprovalsQuery = z.object({
  status: ApprovalStatusSchema.optional(),
  limit: z.coerce.number().int().min(1).max(200).default(50),
  cursor: z
    .string()
    .regex(/^\d{1,15}$/, "not a cursor from this API")
    .optional()
    .openapi({ description: "`nextCursor` of the previous page" }),
});

export const DecideApprovalBody = z
  .strictObject({
    note: z
      .string()
      .trim()
      .min(1)
      .max(1000)
      .optional()
      .openapi({ description: "Why, for the record (1–1,000 characters); listed with the decision" }),
  })
  .openapi("DecideApproval");
