import { z } from "@hono/zod-openapi";
import { PolicyModeSchema } from "./workspaces.ts";

export const ToolDefinitionSchema = z
  .object({
    name: z.string(),
    title: z.string().optional(),
    description: z.string().optional(),
    inputSchema: z.record(z.string(), z.unknown()),
    outputSchema: z.record(z.string(), z.unknown()).optional(),
    annotations: z.record(z.string(), z.unknown()).optional(),
  })
  .openapi("ToolDefinition");

export const ToolSchema = z
  .object({
    uid: z.string().openapi({ description: "Immutable tool id" }),
    serviceId: z.string(),
    serviceSlug: z.string(),
    name: z.string().openapi({ description: "The upstream's name" }),
    publicName: z.string().openapi({ description: "The name clients call: `{serviceSlug}__{name}`" }),
    definition: ToolDefinitionSchema,
    definitionHash: z.string(),
    approvedHash: z.string().nullable(),
    previousDefinition: ToolDefinitionSchema.nullable().openapi({ description: "The approved definition a pending review replaces" }),
    status: z.enum(["active", "review_required", "removed"]),
    projection: z.array(z.string()).nullable(),
    schemaBreach: z
      .object({ bound: z.string(), limit: z.number().int().optional(), message: z.string() })
      .nullable()
      .openapi({ description: "The validation bound the upstream's schemas break; while set, calls are refused `schema_too_complex`" }),
    nameProblem: z.string().nullable().openapi({
      description:
        "Why clients cannot be shown this tool's public name (MCP tool names: 1–128 of A–Z, a–z, 0–9, `_`, `-`, `.`); while set, the tool is hidden from discovery and calls are refused `tool_name_invalid`",
    }),
    clientCapabilities: z
      .array(z.enum(["sampling", "elicitation", "roots", "elicitation.url"]))
      .nullable()
      .openapi({
        description:
          "The client capabilities the upstream lists this tool for (`elicitation.url`: URL-mode elicitation): only MCP clients that declare all of them see and can call it; null for every client",
      }),
    firstSeenAt: z.string(),
    updatedAt: z.string(),
  })
  .openapi("Tool");

export const ToolParams = z.object({
  ws: z.string().openapi({ param: { name: "ws", in: "path" } }),
  toolUid: z.string().openapi({ param: { name: "toolUid", in: "path" } }),
});

export const ListToolsQuery = z.object({
  serviceId: z.string().optional(),
  publicName: z.string().max(200).optional().openapi({ description: "Only the tool clients call by this name" }),
  status: z.enum(["active", "review_required", "removed"]).optional(),
});

export const ReviewBody = z
  .object({
    definitionHash: z.string().openapi({ description: "The hash being approved; guards against approving a newer change unseen" }),
  })
  .openapi("ReviewDefinition");

export const PutPolicyBody = z.object({ profileId: z.string(), mode: PolicyModeSchema }).openapi("PutToolPolicy");

export const ToolPolicySchema = z
  .object({ profileId: z.string(), toolUid: z.string(), mode: PolicyModeSchema, updatedBy: z.string(), updatedAt: z.string() })
  .openapi("ToolPolicy");

export const PutProjectionBody = z
  .object({
    fields: z
      .array(z.string().min(1).max(128))
      .max(100)
      .nullable()
      .openapi({ description: "Top-level fields of the structured result clients receive; null returns everything" }),
  })
  .openapi("PutProjection");
