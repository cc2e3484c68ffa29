import { z } from "@hono/zod-openapi";
import { PolicyModeSchema, ProfileSchema } from "./workspaces.ts";

const ToolStatusSchema = z.enum(["active", "review_required", "removed"]);

/** The longest `q` the matrix searches for: a search box's text, not a document. */
export const MATRIX_QUERY_MAX_LENGTH = 200;
/** Tools on one matrix page, at most; each row holds one cell per profile. */
export const MATRIX_PAGE_MAX = 100;

export const PolicyMatrixQuery = z.object({
  q: z
    .string()
    .max(MATRIX_QUERY_MAX_LENGTH)
    .optional()
    .openapi({ description: "Case-insensitive text in the tool's public name, title or description" }),
  serviceId: z.string().optional(),
  status: ToolStatusSchema.optional().openapi({ description: "Review state" }),
  mode: PolicyModeSchema.optional().openapi({
    description: "Only tools with this effective mode under `profileId`, or under at least one profile when it is absent",
  }),
  profileId: z.string().optional().openapi({ description: "The profile `mode` filters on; 400 if it is not in the workspace" }),
  limit: z.coerce.number().int().min(1).max(MATRIX_PAGE_MAX).default(50),
  cursor: z
    .string()
    .regex(/^\d{1,7}$/, "not a cursor from this API")
    .optional()
    .openapi({ description: "`nextCursor` of the previous page" }),
});

export const RiskFloorSchema = z
  .object({ hint: z.enum(["destructiveHint", "openWorldHint"]), mode: z.enum(["approval", "block"]) })
  .openapi("RiskFloor", {
    description: "The profile's risk rule that holds the tool's mode at least this strict: no override or hook can lift it",
  });

export const ToolModeSchema = z
  .object({
    profileId: z.string(),
    mode: PolicyModeSchema.openapi({ description: "The effective mode /mcp enforces for this tool under this profile" }),
    override: PolicyModeSchema.nullable().openapi({ description: "The per-tool override; null when the profile's default mode applies" }),
    floor: RiskFloorSchema.nullable(),
  })
  .openapi("ToolMode");

export const PolicyMatrixSchema = z
  .object({
    profiles: z.array(ProfileSchema).openapi({ description: "Every profile of the workspace, in name order: the matrix's columns" }),
    tools: z
      .array(
        z.object({
          uid: z.string(),
          publicName: z.string(),
          serviceId: z.string(),
          serviceSlug: z.string(),
          status: ToolStatusSchema,
          approvedHash: z.string().nullable().openapi({ description: "null while nothing was ever approved: a tool in review is new" }),
          description: z.string().nullable(),
          modes: z.array(ToolModeSchema).openapi({ description: "One cell per profile, in the order of `profiles`" }),
        }),
      )
      .openapi({ description: "The page of tools that match, in service then name order" }),
    total: z.number().int().openapi({ description: "Tools matching the filters, over every page" }),
    nextCursor: z.string().nullable(),
  })
  .openapi("PolicyMatrix");

export const ToolProfileParams = z.object({
  ws: z.string().openapi({ param: { name: "ws", in: "path" } }),
  toolUid: z.string().openapi({ param: { name: "toolUid", in: "path" } }),
  profileId: z.string().openapi({ param: { name: "profileId", in: "path" } }),
});
