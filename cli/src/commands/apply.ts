// `rayrun hooks apply <dir>`: the one command a CI job runs. Each
// `<public tool name>.hook.ts` (with optional `.config.json` and `.tests.json`)
// is pushed, compiled, tested through the API, built into a revision and
// deployed to shadow; `--promote` moves it to active. Nothing changed, nothing done.
import { createHash } from "node:crypto";
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { isDeepStrictEqual } from "node:util";
import type { Command } from "commander";
import { ApiRequestError } from "../api/client.ts";
import type { Context } from "../context.ts";
import { CliError, describeFailure, EXIT } from "../errors.ts";
import { readJson, readJsonObject, readText } from "../files.ts";
import type { Printer } from "../output.ts";
import { listTools, type Tool } from "../tools.ts";
import { deploy } from "./hooks.ts";

type Run = (action: (ctx: Context, out: Printer) => Promise<void>) => () => Promise<void>;

const HOOK_SUFFIX = ".hook.ts";

/** One case of a `.tests.json` file. */
export interface TestCase {
  name: string;
  stage: "before" | "after";
  arguments: Record<string, unknown>;
  result?: unknown;
  expect: { outcome: string; value?: unknown };
}

interface LocalHook {
  publicName: string;
  file: string;
  source: string;
  config: Record<string, unknown>;
  cases: TestCase[];
}

type HookReport =
  | {
      tool: string;
      status: "unchanged" | "deployed" | "promoted" | "would_deploy" | "would_promote";
      versionId?: string;
      revisionId?: string;
      steps: string[];
    }
  | { tool: string; status: "failed"; code: string; message: string; steps: string[]; details?: unknown };

export function registerApply(hooks: Command, run: Run): void {
  hooks
    .command("apply <dir>")
    .description("Push, compile, test, build and deploy to shadow every <tool>.hook.ts in a folder (CI's one command)")
    .option("--promote", "then move each hook's shadow revision to active")
    .option("--dry-run", "show what would change, change nothing")
    .action((dir: string, options: { promote?: boolean; dryRun?: boolean }) =>
      run(async (ctx, out) => {
        const local = readFolder(dir);
        const tools = await listTools(ctx);
        const reports: HookReport[] = [];
        for (const [index, hook] of local.entries()) {
          const status = (step: string) => out.progress(`[${index + 1}/${local.length}] ${hook.publicName}: ${step}`);
          status("applying");
          reports.push(await applyOne(ctx, tools, hook, options, status));
        }
        out.endProgress();
        const failed = reports.filter((report) => report.status === "failed");
        out.result({ hooks: reports, failed: failed.length }, () => reports.flatMap(describe));
        if (failed.length > 0) process.exitCode = EXIT.refused;
      })(),
    );
}

function describe(report: HookReport): string[] {
  const head =
    report.status === "failed"
      ? `✗ ${report.tool}: ${report.message}`
      : report.status === "unchanged"
        ? `= ${report.tool}: unchanged, nothing to do`
        : `✓ ${report.tool}: ${report.status.replace("_", " ")}${report.revisionId ? ` (revision ${report.revisionId})` : ""}`;
  return [head, ...report.steps.map((step) => `    ${step}`)];
}

/** Reads and checks every hook in the folder before any request, so a malformed file changes nothing. */
export function readFolder(dir: string): LocalHook[] {
  if (!existsSync(dir)) throw new CliError(`No such folder: ${dir}`, EXIT.refused, "file_unreadable");
  const files = readdirSync(dir)
    .filter((name) => name.endsWith(HOOK_SUFFIX))
    .sort();
  if (files.length === 0) throw new CliError(`${dir} holds no <tool>${HOOK_SUFFIX} files`, EXIT.refused, "no_hooks");
  return files.map((name) => {
    const publicName = name.slice(0, -HOOK_SUFFIX.length);
    const base = join(dir, publicName);
    const configFile = `${base}.config.json`;
    const testsFile = `${base}.tests.json`;
    return {
      publicName,
      file: join(dir, name),
      source: readText(join(dir, name)),
      config: existsSync(configFile) ? readJsonObject(configFile) : {},
      cases: existsSync(testsFile) ? parseCases(testsFile, readJson(testsFile)) : [],
    };
  });
}

/** Checks a `.tests.json` document field by field, naming the file and the field that is wrong. */
export function parseCases(file: string, value: unknown): TestCase[] {
  const fail = (field: string, problem: string): never => {
    throw new CliError(`${file}: ${field} ${problem}`, EXIT.refused, "invalid_file", { file, field });
  };
  if (!Array.isArray(value)) fail("(top level)", "must be a list of test cases");
  return (value as unknown[]).map((item, index) => {
    const at = (field: string) => `[${index}]${field ? `.${field}` : ""}`;
    if (!isObject(item)) return fail(at(""), "must be an object");
    const { name, stage, arguments: args, result, expect } = item;
    if (name !== undefined && typeof name !== "string") fail(at("name"), "must be a string");
    if (stage !== "before" && stage !== "after") fail(at("stage"), 'must be "before" or "after"');
    if (!isObject(args)) fail(at("arguments"), "must be an object (the client's arguments)");
    if (stage === "after" && result === undefined) fail(at("result"), "is required for an after case (the mock upstream result)");
    if (!isObject(expect)) return fail(at("expect"), "must be an object: { outcome, value? }");
    if (typeof expect.outcome !== "string")
      fail(at("expect.outcome"), "must be a string (continue, reject, require_approval, return, fail)");
    return {
      name: (name as string | undefined) ?? `case ${index + 1}`,
      stage: stage as TestCase["stage"],
      arguments: args as Record<string, unknown>,
      ...(result === undefined ? {} : { result }),
      expect: { outcome: expect.outcome as string, ...("value" in expect ? { value: expect.value } : {}) },
    };
  });
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value);

async function applyOne(
  ctx: Context,
  tools: Tool[],
  hook: LocalHook,
  options: { promote?: boolean; dryRun?: boolean },
  status: (step: string) => void,
): Promise<HookReport> {
  const steps: string[] = [];
  // Each step taken is reported, and shown on a terminal as it happens.
  const step = (text: string) => {
    steps.push(text);
    status(text);
  };
  const failed = (code: string, message: string, details?: unknown): HookReport => ({
    tool: hook.publicName,
    status: "failed",
    code,
    message,
    steps,
    details,
  });
  const tool = tools.find((candidate) => candidate.publicName === hook.publicName);
  if (!tool) return failed("unknown_tool", `no tool '${hook.publicName}' in workspace ${ctx.workspace} (file ${hook.file})`);
  const path = { path: { ws: ctx.workspace, toolUid: tool.uid } };
  try {
    if (options.dryRun) {
      const newest = await newestVersion(ctx, path);
      const draftMatches = newest?.note === applyNote(localDigest(hook));
      const deployments = await ctx.call(ctx.api.GET("/v1/workspaces/{ws}/tools/{toolUid}/hook/deployments", { params: path }));
      const settled =
        draftMatches &&
        deployments.shadow?.versionId === newest.versionId &&
        (!options.promote || deployments.active?.versionId === newest.versionId);
      if (settled) return { tool: hook.publicName, status: "unchanged", steps };
      step(draftMatches ? "draft is current" : "would save the draft");
      step("would compile, run tests, build a revision and deploy it to shadow");
      if (options.promote) step("would promote it to active");
      return { tool: hook.publicName, status: options.promote ? "would_promote" : "would_deploy", steps };
    }
    const versionId = await saveDraft(ctx, path, hook, step);
    const deployments = await ctx.call(ctx.api.GET("/v1/workspaces/{ws}/tools/{toolUid}/hook/deployments", { params: path }));
    const inShadow = deployments.shadow?.versionId === versionId ? deployments.shadow : null;
    if (inShadow && (!options.promote || deployments.active?.revisionId === inShadow.revisionId)) {
      return { tool: hook.publicName, status: "unchanged", versionId, revisionId: inShadow.revisionId, steps };
    }
    let revisionId = inShadow?.revisionId;
    if (!revisionId) {
      const compiled = await compile(ctx, path, hook);
      if (compiled) return failed("compile_failed", compiled.message, compiled.diagnostics);
      step("compiled");
      for (const testCase of hook.cases) {
        const mismatch = await runCase(ctx, path, testCase);
        if (mismatch) return failed("test_failed", `test "${testCase.name}" (${testCase.stage}) failed: ${mismatch.summary}`, mismatch);
        step(`test "${testCase.name}" passed`);
      }
      const revision = await ctx.call(
        ctx.api.POST("/v1/workspaces/{ws}/tools/{toolUid}/hook/revisions", { params: path, body: { versionId } }),
      );
      revisionId = revision.revisionId;
      await deploy(ctx, tool, "shadow", revisionId);
      step(`revision ${revisionId} deployed to shadow`);
    }
    if (options.promote) {
      await deploy(ctx, tool, "active", revisionId);
      step(`revision ${revisionId} promoted to active`);
      return { tool: hook.publicName, status: "promoted", versionId, revisionId, steps };
    }
    return { tool: hook.publicName, status: "deployed", versionId, revisionId, steps };
  } catch (error) {
    const failure = describeFailure(error);
    if (failure.exitCode !== EXIT.refused && failure.exitCode !== EXIT.conflict) throw error;
    return failed(failure.code, failure.message, failure.details);
  }
}

interface ToolPath {
  path: { ws: string; toolUid: string };
}

/**
 * The note apply saves a version with: it names the SHA-256 of the local files, so the next run knows from the
 * newest version alone that the draft came from these very files, even though the server reformatted the source.
 */
const applyNote = (digest: string) => `rayrun hooks apply (local sha256 ${digest})`;

function localDigest(hook: LocalHook): string {
  return createHash("sha256")
    .update(canonicalJson({ source: hook.source, config: hook.config }))
    .digest("hex");
}

/** JSON with object keys sorted at every level, so the same config always hashes the same. */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  if (isObject(value)) {
    const keys = Object.keys(value).sort();
    return `{${keys.map((key) => `${JSON.stringify(key)}:${canonicalJson(value[key])}`).join(",")}}`;
  }
  return JSON.stringify(value);
}

/** The draft's version: every save and restore writes one, so the newest is the draft's (none after a reset). */
async function newestVersion(ctx: Context, path: ToolPath) {
  const page = await ctx.call(
    ctx.api.GET("/v1/workspaces/{ws}/tools/{toolUid}/hook/versions", { params: { ...path, query: { limit: 1 } } }),
  );
  return page.versions[0];
}

/**
 * Brings the draft to the local files and returns its version: one request when an earlier apply saved these
 * files (the newest version's note names their digest), else a save under the newest version's etag (the etag
 * is the quoted version id), read again from the draft if that is stale (after a reset the draft is empty).
 */
async function saveDraft(ctx: Context, path: ToolPath, hook: LocalHook, step: (text: string) => void): Promise<string> {
  const note = applyNote(localDigest(hook));
  const newest = await newestVersion(ctx, path);
  if (newest?.note === note) return newest.versionId;
  const save = (etag: string) =>
    ctx.call(
      ctx.api.PUT("/v1/workspaces/{ws}/tools/{toolUid}/hook/draft", {
        params: { ...path, header: { "if-match": etag } },
        body: { source: hook.source, config: hook.config, note },
      }),
    );
  let saved;
  try {
    saved = await save(newest ? `"${newest.versionId}"` : '"empty"');
  } catch (error) {
    if (!(error instanceof ApiRequestError) || error.code !== "precondition_failed") throw error;
    saved = await save((await ctx.call(ctx.api.GET("/v1/workspaces/{ws}/tools/{toolUid}/hook/draft", { params: path }))).etag);
  }
  step(saved.created ? `saved version ${saved.versionId}` : "draft unchanged (same once formatted)");
  return saved.versionId;
}

/** Compiles the draft; on 422 returns the diagnostics with file, line and column. */
async function compile(ctx: Context, path: ToolPath, hook: LocalHook): Promise<{ message: string; diagnostics: unknown } | null> {
  try {
    await ctx.call(ctx.api.POST("/v1/workspaces/{ws}/tools/{toolUid}/hook/compile", { params: path, body: {} }));
    return null;
  } catch (error) {
    if (!(error instanceof ApiRequestError) || error.code !== "compile_failed") throw error;
    const diagnostics = (error.details?.diagnostics ?? []) as { code: string; message: string; line?: number; column?: number }[];
    const lines = diagnostics.map((d) => `${hook.file}:${d.line ?? 1}:${d.column ?? 1}: ${d.code}: ${d.message}`);
    return { message: `does not compile, nothing deployed\n${lines.map((line) => `    ${line}`).join("\n")}`, diagnostics };
  }
}

/** Runs one case through the API's test route; a difference from the expectation is returned, shown as expected vs actual. */
async function runCase(
  ctx: Context,
  path: ToolPath,
  testCase: TestCase,
): Promise<{ summary: string; expected: unknown; actual: unknown } | null> {
  const tested = await ctx.call(
    ctx.api.POST("/v1/workspaces/{ws}/tools/{toolUid}/hook/test", {
      params: path,
      body: { stage: testCase.stage, arguments: testCase.arguments, ...("result" in testCase ? { result: testCase.result } : {}) },
    }),
  );
  const actual = {
    outcome: tested.outcome,
    ...(tested.value === undefined ? {} : { value: tested.value }),
    ...(tested.error ? { error: tested.error } : {}),
  };
  const outcomeDiffers = tested.outcome !== testCase.expect.outcome;
  const valueDiffers = "value" in testCase.expect && !isDeepStrictEqual(tested.value, testCase.expect.value);
  if (!outcomeDiffers && !valueDiffers && tested.passed) return null;
  const summary = [
    `expected ${JSON.stringify(testCase.expect)}`,
    `actual   ${JSON.stringify(actual)}`,
    ...(tested.passed ? [] : ["the API's checks failed (schema validation or an isolate error); nothing deployed"]),
  ].join("\n      ");
  return { summary: `nothing deployed\n      ${summary}`, expected: testCase.expect, actual };
}
