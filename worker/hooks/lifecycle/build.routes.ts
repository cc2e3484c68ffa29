import { createRoute, z } from "@hono/zod-openapi";
import { errorResponses, json, jsonBody } from "../../../schema/api/common.ts";
import {
  CompileBody,
  CompiledSchema,
  CreateRevisionBody,
  HookParams,
  PageQuery,
  RevisionPageSchema,
  RevisionSchema,
  TestBody,
  TestResultSchema,
} from "../../../schema/api/hooks.ts";
import { guard } from "../../auth/guard.ts";
import { createRouter } from "../../http/app.ts";
import { ApiError, notFound } from "../../http/errors.ts";
import { newId, nowIso } from "../../lib/ids.ts";
import type { ToolRecord } from "../../tools/tools.store.ts";
import {
  compileHook,
  CompilerUnavailableError,
  DECLARATIONS_MAX_CHARS,
  DeclarationsTooLargeError,
  generateToolDeclarations,
  type CompileSuccess,
} from "../compiler/index.ts";
import { contentHash } from "./content.ts";
import type { HookActor, JsonObject } from "./lifecycle.types.ts";
import { listRevisions } from "./revisions.store.ts";
import { assertDraftSizes, compileError, cursorOf, hookActor, requireTool, requireWritableTool, unwrap } from "./routes.support.ts";
import { testStage } from "./stage-test.ts";
import { insertTestRun, untestedStages } from "./test-runs.store.ts";
import { findVersion } from "./versions.store.ts";
import { actorQuotas } from "../../quotas/actor-quota.client.ts";
import { workspaceClient } from "../../workspaces/workspace.client.ts";

export const buildRoutes = createRouter();
const HOOK = "/v1/workspaces/{ws}/tools/{toolUid}/hook";
const tags = ["hooks"];

/**
 * Every compile is charged to the caller's hourly compile quota first (in the
 * caller's own Durable Object, across workspaces), then runs here in the
 * Worker, where it cannot hold up the workspace's other requests.
 */
async function chargedCompile(env: Env, actor: HookActor, tool: ToolRecord, source: string, config: JsonObject): Promise<CompileSuccess> {
  unwrap(await actorQuotas(env, actor).chargeCompile());
  let result;
  try {
    result = await compileHook({ source, config, upstreamDefinition: tool.definition });
  } catch (error) {
    if (!(error instanceof CompilerUnavailableError)) throw error;
    // esbuild itself failed, not the source; a fresh service is started for the next attempt.
    throw new ApiError("compiler_unavailable", {
      message: "The compiler failed, or had no memory free on this server, and is being restarted; try again",
      headers: { "retry-after": "1" },
      cause: error,
    });
  }
  if (!result.ok) throw compileError(result);
  return result;
}

/** The tool's declarations, or 422 `declarations_too_large` when its upstream schemas would generate more than the bound. */
function declarationsFor(tool: ToolRecord): string {
  try {
    return generateToolDeclarations(tool.definition);
  } catch (error) {
    if (!(error instanceof DeclarationsTooLargeError)) throw error;
    throw new ApiError("declarations_too_large", {
      message: `The tool's upstream schemas generate more than ${DECLARATIONS_MAX_CHARS} characters of declarations`,
      details: { limitChars: DECLARATIONS_MAX_CHARS },
    });
  }
}

/** The source and config to build: a version's, or the draft's; `versionId` is the version they are. */
async function contentFor(env: Env, ws: string, toolUid: string, versionId: string | undefined) {
  if (versionId) {
    const version = await findVersion(env.DB, ws, toolUid, versionId);
    if (!version) throw notFound("Version");
    return { source: version.source, config: version.config, versionId };
  }
  const draft = await workspaceClient(env, ws).hookDraft(toolUid);
  if (draft.versionId === null) throw notFound("Draft");
  return { source: draft.source, config: draft.config, versionId: draft.versionId };
}

buildRoutes.openapi(
  createRoute({
    method: "get",
    path: `${HOOK}/types`,
    tags,
    summary: "TypeScript declarations for this tool's hook, generated from its current upstream schemas",
    middleware: guard("hooks:read"),
    request: { params: HookParams },
    responses: {
      200: { description: "A .d.ts file", content: { "text/plain": { schema: z.string() } } },
      ...errorResponses(404, 422),
    },
  }),
  async (c) => {
    const { ws, toolUid } = c.req.valid("param");
    const tool = await requireTool(c.env, ws, toolUid);
    return c.text(declarationsFor(tool), 200, {
      "content-disposition": `inline; filename="${tool.publicName}.d.ts"`,
    });
  },
);

buildRoutes.openapi(
  createRoute({
    method: "post",
    path: `${HOOK}/compile`,
    tags,
    summary: "Compile the draft (or a version) and report its stages, public contract and size",
    description: "Counts against the caller's hourly compile attempts. 422 `compile_failed` with `details.diagnostics`.",
    middleware: guard("hooks:write"),
    request: { params: HookParams, body: { required: false, content: { "application/json": { schema: CompileBody } } } },
    responses: { 200: json(CompiledSchema, "Compiled"), ...errorResponses(400, 404, 409, 413, 422, 429, 503) },
  }),
  async (c) => {
    const { ws, toolUid } = c.req.valid("param");
    const versionId = (c.req.valid("json") as { versionId?: string } | undefined)?.versionId;
    const tool = await requireWritableTool(c.env, ws, toolUid);
    const { source, config } = await contentFor(c.env, ws, toolUid, versionId);
    const compiled = await chargedCompile(c.env, hookActor(c), tool, source, config);
    return c.json(
      {
        ok: true as const,
        stages: compiled.stages,
        contract: compiled.contract,
        replaces: compiled.replaces,
        compiledBytes: compiled.compiledBytes,
        sourceHash: compiled.sourceHash,
      },
      200,
    );
  },
);

buildRoutes.openapi(
  createRoute({
    method: "post",
    path: `${HOOK}/test`,
    tags,
    summary: "Run before (or after, with a mock result) against the draft; never contacts the upstream",
    description:
      "Compiles the draft with the given or the draft's config (one compile attempt), runs the stage in the isolate, " +
      "checks the values against the public and upstream schemas, and records the run against the hash of that source+config. " +
      "A test still running when the hook is reset is not recorded: 409 `hook_reset`.",
    middleware: guard("hooks:write"),
    request: { params: HookParams, body: jsonBody(TestBody) },
    responses: { 200: json(TestResultSchema, "The run"), ...errorResponses(400, 404, 409, 413, 422, 429, 503) },
  }),
  async (c) => {
    const { ws, toolUid } = c.req.valid("param");
    const body = c.req.valid("json");
    if (body.stage === "after" && body.result === undefined) {
      throw new ApiError("invalid_request", {
        message: "Testing after needs a mock `result`",
        details: {
          issues: [{ field: "json.result", message: "Required for stage after" }],
        },
      });
    }
    const tool = await requireWritableTool(c.env, ws, toolUid);
    const draft = await contentFor(c.env, ws, toolUid, undefined);
    const config = body.config ?? draft.config;
    assertDraftSizes(draft.source, config);
    const actor = hookActor(c);
    const compiled = await chargedCompile(c.env, actor, tool, draft.source, config);
    const tested = await testStage({
      workspaceId: ws,
      tool,
      bundle: compiled.bundle,
      contract: compiled.contract,
      stages: compiled.stages,
      stage: body.stage,
      arguments: body.arguments,
      upstreamArguments: body.upstreamArguments,
      result: body.result,
      config,
    });
    const testRunId = newId("htr");
    const hash = await contentHash(draft.source, config);
    const recorded = await insertTestRun(
      c.env.DB,
      {
        id: testRunId,
        workspaceId: ws,
        toolUid,
        contentHash: hash,
        definitionHash: tool.definitionHash,
        stage: body.stage,
        outcome: tested.run.outcome,
        passed: tested.passed,
        errorCode: tested.run.error?.code ?? null,
        actor,
        createdAt: nowIso(),
      },
      draft.versionId,
    );
    if (!recorded) {
      throw new ApiError("hook_reset", {
        message: "The tool's hook was reset while the test ran, so the run was not recorded; test the new draft",
      });
    }
    const { run } = tested;
    return c.json(
      {
        testRunId,
        contentHash: hash,
        passed: tested.passed,
        outcome: run.outcome,
        ...(run.value !== undefined ? { value: run.value } : {}),
        ...(run.error ? { error: run.error } : {}),
        logs: run.logs,
        usage: run.usage,
        validation: tested.validation,
      },
      200,
    );
  },
);

buildRoutes.openapi(
  createRoute({
    method: "post",
    path: `${HOOK}/revisions`,
    tags,
    summary: "Create an immutable deployment revision from a version that compiles and whose tests passed",
    description:
      "Compiles the version (one compile attempt): 422 `compile_failed` with diagnostics. Each stage the hook defines " +
      "needs a passing latest test run for exactly this source+config against the current upstream definition: 409 `not_tested`.",
    middleware: guard("hooks:write"),
    request: { params: HookParams, body: jsonBody(CreateRevisionBody) },
    responses: { 201: json(RevisionSchema, "Created"), ...errorResponses(400, 404, 409, 413, 422, 429, 503) },
  }),
  async (c) => {
    const { ws, toolUid } = c.req.valid("param");
    const { versionId } = c.req.valid("json");
    const tool = await requireWritableTool(c.env, ws, toolUid);
    const version = await findVersion(c.env.DB, ws, toolUid, versionId);
    if (!version) throw notFound("Version");
    const actor = hookActor(c);
    const compiled = await chargedCompile(c.env, actor, tool, version.source, version.config);
    const untested = await untestedStages(c.env.DB, ws, toolUid, version.contentHash, tool.definitionHash, compiled.stages);
    if (untested.length > 0) {
      throw new ApiError("not_tested", {
        message: `Run passing tests of ${untested.join(" and ")} for this exact source and config first`,
        details: {
          untestedStages: untested,
          contentHash: version.contentHash,
        },
      });
    }
    const { revision } = unwrap(
      await workspaceClient(c.env, ws).commitHookRevision({
        workspaceId: ws,
        toolUid,
        versionId,
        contentHash: version.contentHash,
        config: version.config,
        bundle: compiled.bundle,
        compiledBytes: compiled.compiledBytes,
        sourceHash: compiled.sourceHash,
        stages: compiled.stages,
        contract: compiled.contract,
        replaces: compiled.replaces,
        definitionHash: tool.definitionHash,
        actor,
      }),
    );
    return c.json(revision, 201);
  },
);

buildRoutes.openapi(
  createRoute({
    method: "get",
    path: `${HOOK}/revisions`,
    tags,
    summary: "The tool's deployment revisions, newest first",
    middleware: guard("hooks:read"),
    request: { params: HookParams, query: PageQuery },
    responses: { 200: json(RevisionPageSchema, "One page"), ...errorResponses(400, 404) },
  }),
  async (c) => {
    const { ws, toolUid } = c.req.valid("param");
    const { limit, cursor } = c.req.valid("query");
    await requireTool(c.env, ws, toolUid);
    const page = await listRevisions(c.env.DB, ws, toolUid, { limit, cursor: cursorOf(cursor) });
    return c.json({ revisions: page.items, nextCursor: page.nextCursor }, 200);
  },
);
