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

const CancelledApprovals = (whose: string) =>
  z.array(z.string()).openapi({
    description:
      `The approvals ${whose} asked for that could still be decided or used, by id: a pending one is denied ` +
      "(`decidedBy`: who made this request, `decisionNote` says why), an approved one not yet used expires",
  });

export const RevokedApiKeySchema = ApiKeySchema.extend({
  revokedKeys: z.array(z.string()).openapi({
    description:
      "The keys made with this key, and with those however deep, that this request revoked with it (keys revoked before are not listed)",
  }),
  cancelledApprovals: CancelledApprovals("the revoked keys"),
  effectiveAt: z.string().openapi({ description: "When the revocation was in force everywhere (ISO 8601)" }),
}).openapi("RevokedApiKey");

export const ApiKeyListSchema = z
  .object({
    keys: z.array(ApiKeySchema),
    olderRevokedKeysOmitted: z.boolean().openapi({
      description: "True when keys revoked before the 1,000 most recently revoked ones are left out (unrevoked keys are always listed)",
    }),
  })
  .openapi("ApiKeyList");

export const CreatedApiKeySchema = z
  .object({ key: ApiKeySchema, secret: z.string().openapi({ description: "Shown once; store it now" }) })
  .openapi("CreatedApiKey");

export const RotatedApiKeySchema = CreatedApiKeySchema.extend({
  effectiveAt: z.string().openapi({ description: "When the old secret was refused everywhere (ISO 8601)" }),
}).openapi("RotatedApiKey");

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

export const ActorSchema = z
  .object({
    id: z.string().openapi({ description: "As history, approvals and deployments record it: `usr_…` or `key_…`" }),
    kind: z.enum(["user", "key"]),
    name: z.string().openapi({ description: "A member's email, or a key's name" }),
    revoked: z.boolean().openapi({ description: "A key that was revoked (kept so old records still read by name)" }),
  })
  .openapi("Actor");

export const AuthorizedSharedGrantSchema = z
  .object({
    grantId: z.string(),
    serviceId: z.string(),
    service: z.string().nullable().openapi({ description: "The service's slug; null for a service deleted meanwhile" }),
    authorizedBy: z.string().openapi({ description: "Who made the authorization link: the member's id, or one of their keys'" }),
    revoked: z.boolean().openapi({
      description:
        "Revoked at its authorization server and deleted (`revokeSharedGrants=true`); its service is pending until authorized again",
    }),
  })
  .openapi("AuthorizedSharedGrant");

export const RemoveMemberQuery = z.object({
  revokeSharedGrants: z
    .enum(["true", "false"])
    .optional()
    .openapi({
      description:
        "`true`: also revoke the workspace's shared upstream grants the member (or a key of theirs) authorized, which " +
        "otherwise keep acting as the upstream account they signed in with. Their services go back to pending",
    }),
});

export const RemovedMemberSchema = z
  .object({
    id: z.string(),
    email: z.string(),
    role: RoleSchema,
    revokedKeys: z
      .array(z.string())
      .openapi({ description: "The keys the member had created, and those made with them however deep, now revoked" }),
    upstreamGrants: z.number().int().openapi({
      description:
        "The member's own upstream OAuth grants (`user:<id>`) and those of the revoked keys (`key:<id>`), revoked at their authorization servers and deleted",
    }),
    oauthGrants: z.number().int().openapi({ description: "The OAuth apps' grants the member had consented to, now revoked" }),
    cancelledApprovals: CancelledApprovals("the revoked keys and those apps"),
    sharedGrantsAuthorized: z.array(AuthorizedSharedGrantSchema).openapi({
      description:
        "The workspace's shared upstream OAuth grants (used by every caller of their service) that the member authorized, " +
        "or a key of theirs made the link for. They stay unless `revokeSharedGrants=true` was given (`revoked`)",
    }),
    effectiveAt: z.string().openapi({ description: "When the removal was in force everywhere (ISO 8601)" }),
  })
  .openapi("RemovedMember");

export const PutMemberBody = z.object({ email: z.email(), role: RoleSchema }).openapi("PutMember");

const DEFAULT_MODE_DESCRIPTION = "The mode of a tool without a per-tool override (`PUT …/tools/{toolUid}/policy`)";

export const RiskRuleSchema = z
  .strictObject({
    mode: z.enum(["approval", "block"]).openapi({
      description: "What a matching tool needs: a one-call approval (reason `risk_destructive_hint` / `risk_open_world_hint`) or a block",
    }),
    whenMissing: z
      .enum(["match", "ignore"])
      .default("match")
      .openapi({
        description:
          "How a tool that omits the hint (or gives a non-boolean) is read. `match` (default): the MCP spec default, true for both " +
          "hints (destructiveHint does not apply to a tool that declares readOnlyHint: true), so an upstream cannot escape the rule " +
          "by saying nothing. `ignore`: only an explicit `true` matches.",
      }),
  })
  .openapi("RiskRule");

export const RiskRulesSchema = z
  .strictObject({ destructiveHint: RiskRuleSchema.optional(), openWorldHint: RiskRuleSchema.optional() })
  .openapi("RiskRules", {
    description:
      "Modes by MCP tool annotation. A rule is a floor: a tool's mode is the strictest (block > approval > allow) of its per-tool " +
      "override (else the profile's defaultMode) and every rule it matches, so neither an override nor a hook can lift it. " +
      "Annotations are the upstream's own hints: a rule guards against an honest upstream's risky tools, not a lying one.",
  });

export const DiscoverySchema = z.enum(["direct", "code", "both"]).openapi("Discovery", {
  description:
    "How the profile's clients find and call tools on /mcp: `direct` (each tool is an MCP tool), `code` (only Code Mode's " +
    "`describe_tools` and `run_code`; direct calls are unknown tools), or `both`",
});

export const ProfileSchema = z
  .object({
    id: z.string(),
    name: z.string(),
    defaultMode: PolicyModeSchema.openapi({ description: DEFAULT_MODE_DESCRIPTION }),
    riskRules: RiskRulesSchema,
    discovery: DiscoverySchema,
    createdAt: z.string(),
    updatedBy: z.string().nullable().openapi({ description: "Actor of the last update; null until the first" }),
    updatedAt: z.string().nullable(),
  })
  .openapi("AccessProfile");

const ProfileName = z.string().trim().min(1).max(100);

export const CreateProfileBody = z
  .object({
    name: ProfileName,
    defaultMode: PolicyModeSchema.default("block").openapi({
      description:
        `${DEFAULT_MODE_DESCRIPTION}. Defaults to \`block\` (until this release: \`allow\`), so a new profile reaches no tool ` +
        "until an admin allows it; send `allow` to keep the old behaviour",
    }),
    riskRules: RiskRulesSchema.default({}),
    discovery: DiscoverySchema.default("direct"),
  })
  .openapi("CreateAccessProfile");

export const ProfileParams = z.object({
  ws: z.string().openapi({ param: { name: "ws", in: "path" } }),
  profileId: z.string().openapi({ param: { name: "profileId", in: "path" } }),
});

export const UpdateProfileBody = z
  .strictObject({
    name: ProfileName.optional().openapi({ description: "A new name, unique in the workspace; keys keep their profile (by id)" }),
    defaultMode: PolicyModeSchema.optional().openapi({ description: DEFAULT_MODE_DESCRIPTION }),
    riskRules: RiskRulesSchema.optional().openapi({ description: "Replaces the whole set; `{}` removes every rule" }),
    discovery: DiscoverySchema.optional(),
  })
  .refine(
    (body) => body.name !== undefined || body.defaultMode !== undefined || body.riskRules !== undefined || body.discovery !== undefined,
    "give name, defaultMode, riskRules, discovery or a combination",
  )
  .openapi("UpdateAccessProfile");

export const UpdateWorkspaceBody = z
  .object({
    name: z.string().trim().min(1).max(100).optional(),
    detailPolicy: z
      .enum(["metadata", "payloads"])
      .optional()
      .openapi({ description: "payloads: hook-log details may be stored for services with payload capture on" }),
  })
  .openapi("UpdateWorkspace");

export const LeaseStatusSchema = z
  .object({
    version: z.number().int().openapi({ description: "The version of the state calls depend on; every change moves it" }),
    effectiveAt: z.string().openapi({ description: "When the current version took effect everywhere" }),
    grantedUntil: z.string().nullable().openapi({ description: "The latest lease expiry granted on it; null before the first" }),
    grants: z.number().int().openapi({ description: "Leases granted on it: first grants and renewals, from every isolate" }),
    openChanges: z.number().int().openapi({ description: "Changes being written right now" }),
  })
  .openapi("LeaseStatus");
