import { z } from "@hono/zod-openapi";

export const ScopeSchema = z.enum(["hooks:read", "hooks:write", "tools:call", "admin"]);
export const RoleSchema = z.enum(["admin", "editor", "viewer"]);
export const PolicyModeSchema = z.enum(["allow", "block", "approval"]);

export const WorkspaceSchema = z
  .object({ id: z.string(), name: z.string(), detailPolicy: z.enum(["metadata", "payloads"]), createdAt: z.string() })
  .openapi("Workspace");

export const CreateWorkspaceBody = z
  .object({
    name: z.string().trim().min(1).max(100),
    adminEmail: z.email().optional().openapi({ description: "Browser user to make the first admin" }),
  })
  .openapi("CreateWorkspace");

export const ApiKeySchema = z
  .object({
    id: z.string(),
    name: z.string(),
    prefix: z.string().openapi({ description: "First characters of the secret, to tell keys apart" }),
    scopes: z.array(ScopeSchema),
    profileId: z.string().nullable(),
    createdBy: z.string(),
    createdAt: z.string(),
    revokedAt: z.string().nullable(),
  })
  .openapi("ApiKey");

export const CreatedApiKeySchema = z
  .object({ key: ApiKeySchema, secret: z.string().openapi({ description: "Shown once; store it now" }) })
  .openapi("CreatedApiKey");

export const CreateWorkspaceResponse = z
  .object({ workspace: WorkspaceSchema, adminKey: CreatedApiKeySchema, defaultProfileId: z.string() })
  .openapi("CreatedWorkspace");

export const CreateApiKeyBody = z
  .object({
    name: z.string().trim().min(1).max(100),
    scopes: z.array(ScopeSchema).min(1),
    profileId: z.string().optional().openapi({ description: "Required with tools:call: the access profile the client belongs to" }),
  })
  .openapi("CreateApiKey");

export const MemberSchema = z.object({ id: z.string(), email: z.string(), role: RoleSchema, createdAt: z.string() }).openapi("Member");

export const PutMemberBody = z.object({ email: z.email(), role: RoleSchema }).openapi("PutMember");

export const ProfileSchema = z
  .object({ id: z.string(), name: z.string(), defaultMode: PolicyModeSchema, createdAt: z.string() })
  .openapi("AccessProfile");

export const CreateProfileBody = z
  .object({ name: z.string().trim().min(1).max(100), defaultMode: PolicyModeSchema.default("allow") })
  .openapi("CreateAccessProfile");

export const UpdateWorkspaceBody = z
  .object({
    name: z.string().trim().min(1).max(100).optional(),
    detailPolicy: z
      .enum(["metadata", "payloads"])
      .optional()
      .openapi({ description: "payloads: hook-log details may be stored for services with payload capture on" }),
  })
  .openapi("UpdateWorkspace");
