import { z } from "@hono/zod-openapi";

/** Path of every hook route: one hook per tool. */
export const HookParams = z.object({
  ws: z.string().openapi({ param: { name: "ws", in: "path" } }),
  toolUid: z.string().openapi({ param: { name: "toolUid", in: "path" } }),
});
export const VersionParams = HookParams.extend({ versionId: z.string().openapi({ param: { name: "versionId", in: "path" } }) });
export const SlotParams = HookParams.extend({
  slot: z.enum(["active", "shadow"]).openapi({ param: { name: "slot", in: "path" } }),
});

const Channel = z.enum(["browser", "api", "cli"]);
/** Any JSON value; typed, so config and arguments reach the workspace Durable Object as JSON types. */
const JsonValue = z.json().openapi("JsonValue");
const JsonObject = z.record(z.string(), JsonValue);

/** How deep a hook request's JSON (config, test arguments, mock result) may nest; hashing and diffing recurse over it. */
export const HOOK_JSON_MAX_DEPTH = 64;

/** Whether `value` nests deeper than `maxDepth` objects and arrays, measured without recursion. */
export function nestsDeeperThan(value: unknown, maxDepth: number): boolean {
  const pending: [unknown, number][] = [[value, 1]];
  for (let next = pending.pop(); next; next = pending.pop()) {
    const [node, depth] = next;
    if (node === null || typeof node !== "object") continue;
    if (depth > maxDepth) return true;
    for (const child of Object.values(node)) pending.push([child, depth + 1]);
  }
  return false;
}

const depthBound = { message: `Nested deeper than ${HOOK_JSON_MAX_DEPTH} levels` };
const notTooDeep = (value: unknown) => !nestsDeeperThan(value, HOOK_JSON_MAX_DEPTH);
/**
 * A JSON object sent to a hook route: bounded depth, refused as 400 `invalid_request` naming the field.
 * Depth is checked before the recursive JSON type check, which would overflow the stack on deep input.
 */
const RequestJsonObject = z.record(z.string(), z.unknown()).refine(notTooDeep, depthBound).pipe(JsonObject);
const Stage = z.enum(["before", "after"]);

export const IfMatchHeader = z.object({
  "if-match": z
    .string()
    .optional()
    .openapi({ param: { name: "if-match", in: "header" }, description: "The draft's current etag (required; 428 without it)" }),
});

export const PageQuery = z.object({
  limit: z.coerce
    .number()
    .int()
    .min(1)
    .max(200)
    .default(50)
    .openapi({ param: { name: "limit", in: "query" } }),
  cursor: z
    .string()
    .regex(/^\d{1,15}$/, "not a cursor from this API")
    .optional()
    .openapi({ param: { name: "cursor", in: "query" }, description: "`nextCursor` of the previous page" }),
});

export const DraftSchema = z
  .object({
    source: z.string(),
    config: JsonObject,
    etag: z.string().openapi({ description: 'Send back as If-Match. `"empty"` before the first save' }),
    versionId: z.string().nullable(),
  })
  .openapi("HookDraft");

export const PutDraftBody = z
  .object({
    source: z.string().openapi({ description: "TypeScript; formatted on save when it parses, stored unchanged when it does not" }),
    config: RequestJsonObject.optional().openapi({
      description: `Non-secret JSON object deployed with revisions; \`{}\` when omitted; at most ${HOOK_JSON_MAX_DEPTH} levels deep`,
    }),
    note: z.string().max(1000).optional(),
  })
  .openapi("PutHookDraft");

export const SavedDraftSchema = z
  .object({
    etag: z.string(),
    versionId: z.string(),
    created: z.boolean().openapi({ description: "false for an identical save: no version, same etag, no quota used" }),
  })
  .openapi("SavedHookDraft");

export const SavedFormattedDraftSchema = SavedDraftSchema.extend({
  formatted: z.boolean().openapi({ description: "Whether Prettier formatted the source before it was stored" }),
  formatSkipped: z
    .enum(["too_large", "too_nested", "unparsable"])
    .optional()
    .openapi({
      description:
        "Why the source was stored as sent: over 32 KiB (or formatting would push it over the source limit), nested past the " +
        "formatter's bound (64 levels, 12 nested arrow functions, 2,000 tokens in one expression), or it does not parse",
    }),
}).openapi("SavedFormattedHookDraft");

const VersionSummaryFields = {
  versionId: z.string(),
  number: z.number().int().openapi({ description: "The tool's version number (v1, v2, …); a reset starts them again at 1" }),
  toolUid: z.string(),
  contentHash: z.string().openapi({ description: "SHA-256 of canonical { source, config }" }),
  bytes: z.number().int(),
  note: z.string().nullable(),
  restoredFrom: z.string().nullable(),
  actorId: z.string(),
  actorKind: z.enum(["key", "user"]),
  channel: Channel,
  createdAt: z.string(),
};
export const VersionSummarySchema = z.object(VersionSummaryFields).openapi("HookVersionSummary");
export const VersionSchema = z.object({ ...VersionSummaryFields, source: z.string(), config: JsonObject }).openapi("HookVersion");
export const VersionPageSchema = z
  .object({ versions: z.array(VersionSummarySchema), nextCursor: z.string().nullable() })
  .openapi("HookVersionPage");

export const VersionDiffSchema = z
  .object({
    versionId: z.string(),
    previousVersionId: z.string().nullable().openapi({ description: "null for the first version (diffed against empty)" }),
    tooLarge: z.boolean().openapi({
      description: "true when the two versions differ in more than 400 lines: no diffs, both versions' texts instead",
    }),
    source: z.string().nullable().openapi({ description: "Unified diff of the source; null when tooLarge" }),
    config: z.string().nullable().openapi({ description: "Unified diff of the config as indented JSON; null when tooLarge" }),
    texts: z
      .object({
        previous: z.object({ source: z.string(), config: z.string() }).openapi({ description: "Empty strings for the first version" }),
        current: z.object({ source: z.string(), config: z.string() }),
      })
      .optional()
      .openapi({ description: "Only when tooLarge: both versions as text (config as indented JSON), to compare elsewhere" }),
  })
  .openapi("HookVersionDiff");

export const RestoreBody = z.object({ note: z.string().max(1000).optional() }).openapi("RestoreHookVersion");

export const CompileBody = z
  .object({ versionId: z.string().optional().openapi({ description: "Default: the draft" }) })
  .openapi("CompileHook");

const ContractSchema = z.record(z.string(), z.unknown()).nullable();
const Replaces = z.object({ description: z.boolean(), inputSchema: z.boolean(), outputSchema: z.boolean() });

export const CompiledSchema = z
  .object({
    ok: z.literal(true),
    stages: z.array(Stage),
    contract: ContractSchema,
    replaces: Replaces,
    compiledBytes: z.number().int(),
    sourceHash: z.string(),
  })
  .openapi("CompiledHook");

export const TestBody = z
  .object({
    stage: Stage,
    arguments: RequestJsonObject.openapi({ description: "The client's public arguments, for either stage" }),
    upstreamArguments: RequestJsonObject.optional().openapi({
      description:
        "For after: the arguments that went upstream. Default: what the draft's before returns for `arguments` (as live), " +
        "or `arguments` when the hook has no before",
    }),
    result: z.unknown().refine(notTooDeep, depthBound).optional().openapi({ description: "Required for after: the mock upstream result" }),
    config: RequestJsonObject.optional().openapi({ description: "Default: the draft's config" }),
  })
  .openapi("TestHook");

const SchemaCheck = z.object({
  target: z.enum(["publicArguments", "upstreamArguments", "upstreamResult", "publicResult"]),
  schema: z.enum(["public", "upstream"]),
  valid: z.boolean(),
  errors: z.array(z.object({ pointer: z.string(), message: z.string() })),
});

export const TestResultSchema = z
  .object({
    testRunId: z.string(),
    contentHash: z.string(),
    passed: z.boolean().openapi({ description: "No isolate error and every schema check held; revisions need a pass per stage" }),
    outcome: z.string(),
    value: z.unknown().optional(),
    error: z.object({ code: z.string(), message: z.string() }).optional(),
    logs: z.array(z.object({ level: z.string(), message: z.string(), data: z.unknown().optional() })),
    usage: z.object({ polls: z.number(), wasmBytes: z.number(), durationMs: z.number(), outputBytes: z.number() }),
    validation: z.object({ valid: z.boolean(), checks: z.array(SchemaCheck) }),
  })
  .openapi("HookTestResult");

export const CreateRevisionBody = z.object({ versionId: z.string() }).openapi("CreateHookRevision");

export const RevisionSchema = z
  .object({
    revisionId: z.string(),
    number: z.number().int().openapi({ description: "The tool's revision number (r1, r2, …); a reset starts them again at 1" }),
    toolUid: z.string(),
    versionId: z.string(),
    contentHash: z.string(),
    sourceHash: z.string(),
    config: JsonObject,
    bundleKey: z.string(),
    compiledBytes: z.number().int(),
    stages: z.array(Stage),
    contract: ContractSchema,
    replaces: Replaces,
    definitionHash: z.string().openapi({ description: "The upstream definition hash it was compiled against" }),
    createdBy: z.string(),
    channel: Channel,
    createdAt: z.string(),
  })
  .openapi("HookRevision");

export const RevisionPageSchema = z
  .object({ revisions: z.array(RevisionSchema), nextCursor: z.string().nullable() })
  .openapi("HookRevisionPage");

export const DeployBody = z.object({ revisionId: z.string() }).openapi("DeployHook");

export const PointerSchema = z
  .object({
    revisionId: z.string(),
    versionId: z.string(),
    bundleKey: z.string(),
    bundleBytes: z.number().int(),
    stages: z.array(Stage),
    contract: ContractSchema,
    config: JsonObject,
    definitionHash: z.string(),
    deployedBy: z.string(),
    deployedAt: z.string(),
  })
  .openapi("HookDeploymentPointer");

export const DeploymentEventSchema = z
  .object({
    eventId: z.string(),
    toolUid: z.string(),
    slot: z.enum(["active", "shadow"]),
    action: z.enum(["deploy", "promote", "rollback", "remove"]),
    revisionId: z.string().nullable(),
    previousRevisionId: z.string().nullable(),
    actorId: z.string(),
    channel: Channel,
    createdAt: z.string(),
  })
  .openapi("HookDeploymentEvent");

export const DeploymentsSchema = z
  .object({ active: PointerSchema.nullable(), shadow: PointerSchema.nullable(), events: z.array(DeploymentEventSchema) })
  .openapi("HookDeployments");

/** When a change took effect for every call: its answer waits for it (docs/leases.md). */
export const EffectiveAt = z.string().openapi({
  description: "When the change took effect for every call (ISO 8601); the answer comes after it. Also the `rayrun-effective-at` header.",
});

export const DeployedSchema = z
  .object({ deployment: PointerSchema, event: DeploymentEventSchema, effectiveAt: EffectiveAt })
  .openapi("HookDeployed");

export const ResetEventSchema = z
  .object({
    resetId: z.string(),
    toolUid: z.string(),
    actorId: z.string(),
    actorKind: z.enum(["key", "user"]),
    channel: Channel,
    versionsRemoved: z.number().int(),
    revisionsRemoved: z.number().int(),
    bundlesRemoved: z.number().int(),
    createdAt: z.string(),
  })
  .openapi("HookResetEvent");

export const HookExportSchema = z
  .object({ toolUid: z.string(), exportedAt: z.string(), versions: z.array(VersionSchema) })
  .openapi("HookExport");

const Usage = z.object({ used: z.number(), limit: z.number() });
export const HookUsageSchema = z
  .object({ draftSaves: Usage, compileAttempts: Usage, historyBytes: Usage, deployedBytes: Usage })
  .openapi("HookUsage");

export const HookHistoryToolSchema = z
  .object({
    toolUid: z.string(),
    name: z.string(),
    versions: z.number().int(),
    revisions: z.number().int(),
    lastChangeAt: z.string().nullable(),
  })
  .openapi("HookHistoryTool");
