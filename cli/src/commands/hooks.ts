// `rayrun hooks …`: a tool's hook from draft to deployment, and what it did live.
import type { Command } from "commander";
import type { Schemas } from "../api/client.ts";
import type { Context } from "../context.ts";
import { CliError, EXIT } from "../errors.ts";
import { readJson, readJsonObject, readText, writeOrPrint } from "../files.ts";
import type { Printer } from "../output.ts";
import { table } from "../output.ts";
import { pulledEtag, rememberPulled } from "../pulled.ts";
import { resolveTool, type Tool } from "../tools.ts";

type Run = (action: (ctx: Context, out: Printer) => Promise<void>) => () => Promise<void>;
type Slot = "active" | "shadow";

const hookPath = (ctx: Context, tool: Tool) => ({ path: { ws: ctx.workspace, toolUid: tool.uid } });

function slotOf(options: { shadow?: boolean; active?: boolean }): Slot {
  if (options.shadow === options.active) throw new CliError("Pass exactly one of --shadow or --active", EXIT.usage, "usage");
  return options.shadow ? "shadow" : "active";
}

export function registerHooks(program: Command, run: Run): void {
  const hooks = program
    .command("hooks")
    .description(
      "Develop, test, deploy and debug a tool's hook on the gateway; `check` and `run` work on a local rules file (gateway-hooks.toml) instead and need no API key",
    );

  hooks
    .command("types <tool>")
    .description("The TypeScript declarations for the tool's hook (for a local `tsc --noEmit`)")
    .option("-o, --output <file>", "write to a file instead of stdout")
    .action((ref: string, options: { output?: string }) =>
      run(async (ctx) => {
        const tool = await resolveTool(ctx, ref);
        const text = await ctx.call(
          ctx.api.GET("/v1/workspaces/{ws}/tools/{toolUid}/hook/types", { params: hookPath(ctx, tool), parseAs: "text" }),
        );
        writeOrPrint(options.output, text);
      })(),
    );

  hooks
    .command("pull <tool>")
    .description("Download the draft's source (and remember its etag for `push`)")
    .option("-o, --output <file>", "write the source to a file instead of stdout")
    .option("--config <file>", "also write the draft's config as JSON")
    .action((ref: string, options: { output?: string; config?: string }) =>
      run(async (ctx, out) => {
        const tool = await resolveTool(ctx, ref);
        const draft = await ctx.call(ctx.api.GET("/v1/workspaces/{ws}/tools/{toolUid}/hook/draft", { params: hookPath(ctx, tool) }));
        rememberPulled(ctx.baseUrl, ctx.workspace, tool.uid, draft.etag);
        if (options.config) writeOrPrint(options.config, `${JSON.stringify(draft.config, null, 2)}\n`);
        if (out.json) out.result(draft, () => "");
        else writeOrPrint(options.output, draft.source);
      })(),
    );

  hooks
    .command("push <tool> <file>")
    .description("Save a file as the draft; refuses a draft changed since your pull unless --force")
    .option("--config <file>", "a JSON object to save as the hook's config")
    .option("--note <text>", "a note stored with the version")
    .option("--force", "overwrite the draft even if it changed since your pull")
    .action((ref: string, file: string, options: { config?: string; note?: string; force?: boolean }) =>
      run(async (ctx, out) => {
        const source = readText(file);
        const config = options.config ? (readJsonObject(options.config) as Schemas["PutHookDraft"]["config"]) : undefined;
        const tool = await resolveTool(ctx, ref);
        let etag = pulledEtag(ctx.baseUrl, ctx.workspace, tool.uid);
        if (options.force || etag === undefined) {
          const current = await ctx.call(ctx.api.GET("/v1/workspaces/{ws}/tools/{toolUid}/hook/draft", { params: hookPath(ctx, tool) }));
          if (etag === undefined && !options.force && current.versionId !== null) {
            throw new CliError(
              `${tool.publicName} already has a draft you have not pulled; run \`rayrun hooks pull ${tool.publicName}\` first, or push with --force`,
              EXIT.conflict,
              "precondition_failed",
            );
          }
          etag = current.etag;
        }
        const saved = await ctx.call(
          ctx.api.PUT("/v1/workspaces/{ws}/tools/{toolUid}/hook/draft", {
            params: { ...hookPath(ctx, tool), header: { "if-match": etag } },
            body: { source, config, note: options.note },
          }),
        );
        rememberPulled(ctx.baseUrl, ctx.workspace, tool.uid, saved.etag);
        out.result(saved, () =>
          saved.created ? `${tool.publicName}: saved version ${saved.versionId}` : `${tool.publicName}: unchanged (identical to the draft)`,
        );
      })(),
    );

  hooks
    .command("compile <tool>")
    .description("Compile the draft and report its stages, public contract and size")
    .option("--version <versionId>", "compile a stored version instead of the draft")
    .action((ref: string, options: { version?: string }) =>
      run(async (ctx, out) => {
        const tool = await resolveTool(ctx, ref);
        const compiled = await ctx.call(
          ctx.api.POST("/v1/workspaces/{ws}/tools/{toolUid}/hook/compile", {
            params: hookPath(ctx, tool),
            body: options.version ? { versionId: options.version } : {},
          }),
        );
        out.result(compiled, () => `${tool.publicName}: compiles; stages ${compiled.stages.join(", ")}; ${compiled.compiledBytes} bytes`);
      })(),
    );

  hooks
    .command("test <tool>")
    .description("Run the draft's before or after on sample input (nothing is called upstream)")
    .requiredOption("--stage <stage>", "before or after")
    .requiredOption("--args <file>", "JSON file with the client's arguments")
    .option("--mock-result <file>", "JSON file with the upstream result (required for after)")
    .action((ref: string, options: { stage: string; args: string; mockResult?: string }) =>
      run(async (ctx, out) => {
        if (options.stage !== "before" && options.stage !== "after")
          throw new CliError("--stage must be before or after", EXIT.usage, "usage");
        const args = readJsonObject(options.args);
        const result = options.mockResult ? readJson(options.mockResult) : undefined;
        const tool = await resolveTool(ctx, ref);
        const tested = await ctx.call(
          ctx.api.POST("/v1/workspaces/{ws}/tools/{toolUid}/hook/test", {
            params: hookPath(ctx, tool),
            body: { stage: options.stage, arguments: args, result },
          }),
        );
        out.result(tested, () => [
          `${options.stage}: ${tested.outcome}${tested.passed ? "" : " (FAILED)"}`,
          ...(tested.error ? [`  error ${tested.error.code}: ${tested.error.message}`] : []),
          ...(tested.value === undefined ? [] : [`  value: ${JSON.stringify(tested.value)}`]),
          ...(tested.logs ?? []).map((log) => `  log ${log.level}: ${log.message}`),
        ]);
        if (!tested.passed) process.exitCode = EXIT.refused;
      })(),
    );

  const revision = hooks.command("revision").description("Immutable, compiled revisions");
  revision
    .command("create <tool>")
    .description("Build a revision from the draft's current version (or --version)")
    .option("--version <versionId>", "the draft version to build")
    .action((ref: string, options: { version?: string }) =>
      run(async (ctx, out) => {
        const tool = await resolveTool(ctx, ref);
        const versionId = options.version ?? (await currentVersion(ctx, tool));
        const created = await ctx.call(
          ctx.api.POST("/v1/workspaces/{ws}/tools/{toolUid}/hook/revisions", { params: hookPath(ctx, tool), body: { versionId } }),
        );
        out.result(created, () => `${tool.publicName}: revision ${created.revisionId} from version ${created.versionId}`);
      })(),
    );

  hooks
    .command("deploy <tool> <revision>")
    .description("Point the shadow or active slot at a revision")
    .option("--shadow", "deploy to shadow (runs on live traffic, no effect)")
    .option("--active", "deploy to active")
    .action((ref: string, revisionId: string, options: { shadow?: boolean; active?: boolean }) =>
      run(async (ctx, out) => {
        const slot = slotOf(options);
        const tool = await resolveTool(ctx, ref);
        const deployed = await deploy(ctx, tool, slot, revisionId);
        out.result(deployed, () => `${tool.publicName}: ${slot} → ${revisionId}`);
      })(),
    );

  hooks
    .command("rollback <tool> <revision>")
    .description("Point active back at an earlier revision")
    .action((ref: string, revisionId: string) =>
      run(async (ctx, out) => {
        const tool = await resolveTool(ctx, ref);
        const deployed = await deploy(ctx, tool, "active", revisionId);
        out.result(deployed, () => `${tool.publicName}: active rolled back to ${revisionId}`);
      })(),
    );

  hooks
    .command("undeploy <tool>")
    .description("Empty the shadow or active slot")
    .option("--shadow", "empty shadow")
    .option("--active", "empty active")
    .action((ref: string, options: { shadow?: boolean; active?: boolean }) =>
      run(async (ctx, out) => {
        const slot = slotOf(options);
        const tool = await resolveTool(ctx, ref);
        const done = await ctx.call(
          ctx.api.DELETE("/v1/workspaces/{ws}/tools/{toolUid}/hook/deployments/{slot}", {
            params: { path: { ws: ctx.workspace, toolUid: tool.uid, slot } },
          }),
        );
        out.result(done, () => `${tool.publicName}: ${slot} emptied`);
      })(),
    );

  hooks
    .command("history <tool>")
    .description("Draft versions (newest first) and deployment changes, with who made them and from where")
    .action((ref: string) =>
      run(async (ctx, out) => {
        const tool = await resolveTool(ctx, ref);
        const [versions, deployments] = await Promise.all([
          ctx.call(
            ctx.api.GET("/v1/workspaces/{ws}/tools/{toolUid}/hook/versions", { params: { ...hookPath(ctx, tool), query: { limit: 100 } } }),
          ),
          ctx.call(ctx.api.GET("/v1/workspaces/{ws}/tools/{toolUid}/hook/deployments", { params: hookPath(ctx, tool) })),
        ]);
        out.result({ versions: versions.versions, deployments }, () => [
          "VERSIONS",
          ...table([
            ["VERSION", "CREATED", "BY", "CHANNEL", "NOTE"],
            ...versions.versions.map((v) => [
              v.versionId,
              v.createdAt,
              v.actorId,
              v.channel,
              v.note ?? (v.restoredFrom ? `restored ${v.restoredFrom}` : ""),
            ]),
          ]),
          "",
          `ACTIVE  ${deployments.active?.revisionId ?? "-"}`,
          `SHADOW  ${deployments.shadow?.revisionId ?? "-"}`,
          ...table(deployments.events.map((e) => [e.createdAt, e.slot, e.action, e.revisionId ?? "-", e.actorId, e.channel])),
        ]);
      })(),
    );

  hooks
    .command("diff <tool> <version>")
    .description("Unified diff of a version against the one before it")
    .action((ref: string, versionId: string) =>
      run(async (ctx, out) => {
        const tool = await resolveTool(ctx, ref);
        const diff = await ctx.call(
          ctx.api.GET("/v1/workspaces/{ws}/tools/{toolUid}/hook/versions/{versionId}/diff", {
            params: { path: { ws: ctx.workspace, toolUid: tool.uid, versionId } },
          }),
        );
        out.result(diff, () =>
          diff.tooLarge
            ? "The versions differ too much to diff; `--json` gives both texts"
            : [diff.source ?? "", diff.config ?? ""].join(""),
        );
      })(),
    );

  hooks
    .command("restore <tool> <version>")
    .description("Copy a version into the draft, as a new version")
    .option("--note <text>", "a note stored with the restore")
    .action((ref: string, versionId: string, options: { note?: string }) =>
      run(async (ctx, out) => {
        const tool = await resolveTool(ctx, ref);
        const draft = await ctx.call(ctx.api.GET("/v1/workspaces/{ws}/tools/{toolUid}/hook/draft", { params: hookPath(ctx, tool) }));
        const restored = await ctx.call(
          ctx.api.POST("/v1/workspaces/{ws}/tools/{toolUid}/hook/versions/{versionId}/restore", {
            params: { path: { ws: ctx.workspace, toolUid: tool.uid, versionId }, header: { "if-match": draft.etag } },
            body: options.note ? { note: options.note } : {},
          }),
        );
        rememberPulled(ctx.baseUrl, ctx.workspace, tool.uid, restored.etag);
        out.result(restored, () => `${tool.publicName}: restored ${versionId} as version ${restored.versionId}`);
      })(),
    );

  hooks
    .command("export <tool>")
    .description("Every version of the hook as one JSON document")
    .option("-o, --output <file>", "write to a file instead of stdout")
    .action((ref: string, options: { output?: string }) =>
      run(async (ctx) => {
        const tool = await resolveTool(ctx, ref);
        const exported = await ctx.call(ctx.api.GET("/v1/workspaces/{ws}/tools/{toolUid}/hook/export", { params: hookPath(ctx, tool) }));
        writeOrPrint(options.output, `${JSON.stringify(exported, null, 2)}\n`);
      })(),
    );

  hooks
    .command("reset <tool>")
    .description("Delete the hook's draft, versions, revisions and deployments")
    .option("--yes", "confirm; required, there is no prompt")
    .action((ref: string, options: { yes?: boolean }) =>
      run(async (ctx, out) => {
        if (!options.yes)
          throw new CliError("hooks reset deletes the hook's whole history; pass --yes to confirm", EXIT.usage, "confirmation_required");
        const tool = await resolveTool(ctx, ref);
        const reset = await ctx.call(ctx.api.DELETE("/v1/workspaces/{ws}/tools/{toolUid}/hook", { params: hookPath(ctx, tool) }));
        out.result(reset, () => `${tool.publicName}: hook reset`);
      })(),
    );

  hooks
    .command("logs <tool>")
    .description("What the hook and the call did: the newest rows (--limit), printed oldest first, in time order (JSON lines with --json)")
    .option("--since <iso>", "only rows at or after this time (ISO 8601)")
    .option("--stage <stage>", "before, after, pre_dispatch or upstream")
    .option("--outcome <outcome>", "e.g. continue, reject, fail, error, refused")
    .option("--request-id <id>", "one call's rows")
    .option("--limit <n>", "rows per page (1–1000)", "100")
    .option("--follow", "keep printing new rows every 2 s until interrupted")
    .action((ref: string, options: LogOptions) =>
      run(async (ctx, out) => {
        const tool = await resolveTool(ctx, ref);
        await printLogs(ctx, out, tool, options);
      })(),
    );
}

interface LogOptions {
  since?: string;
  stage?: "before" | "after" | "pre_dispatch" | "upstream";
  outcome?: string;
  requestId?: string;
  limit: string;
  follow?: boolean;
}

async function printLogs(ctx: Context, out: Printer, tool: Tool, options: LogOptions): Promise<void> {
  const limit = Number(options.limit);
  if (!Number.isInteger(limit) || limit < 1 || limit > 1000)
    throw new CliError("--limit must be an integer from 1 to 1000", EXIT.usage, "usage");
  const seen = new Set<number>();
  let since = options.since;
  const page = async () => {
    const body = await ctx.call(
      ctx.api.GET("/v1/workspaces/{ws}/tools/{toolUid}/hook/logs", {
        params: {
          ...hookPath(ctx, tool),
          query: { since, stage: options.stage, outcome: options.outcome, requestId: options.requestId, limit, format: "json" },
        },
      }),
    );
    if (typeof body === "string") throw new CliError("The API answered logs as text, not JSON", EXIT.unavailable, "unexpected_response");
    // Oldest first, so a followed stream reads in time order.
    for (const row of [...body.logs].reverse()) {
      if (seen.has(row.id)) continue;
      seen.add(row.id);
      if (out.json) process.stdout.write(`${JSON.stringify(row)}\n`);
      else
        process.stdout.write(
          `${row.createdAt}  ${row.requestId}  ${row.channel.padEnd(6)}  ${row.stage.padEnd(12)}  ${row.outcome}${row.code ? ` (${row.code})` : ""}  ${row.durationMs} ms\n`,
        );
      if (!since || row.createdAt > since) since = row.createdAt;
    }
  };
  await page();
  if (!options.follow) return;
  // Ctrl-C (SIGINT) ends following cleanly: the wait is cut short, rows already printed stay whole, exit code 0.
  let interrupted = false;
  let wake = () => {};
  const interrupt = () => {
    interrupted = true;
    wake();
  };
  process.once("SIGINT", interrupt);
  try {
    while (!interrupted) {
      out.progress(`following ${tool.publicName}: new rows every 2 s, Ctrl-C to stop`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, 2000);
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      out.endProgress();
      if (!interrupted) await page();
    }
  } finally {
    process.off("SIGINT", interrupt);
    out.endProgress();
  }
}

async function currentVersion(ctx: Context, tool: Tool): Promise<string> {
  const draft = await ctx.call(ctx.api.GET("/v1/workspaces/{ws}/tools/{toolUid}/hook/draft", { params: hookPath(ctx, tool) }));
  if (!draft.versionId) throw new CliError(`${tool.publicName} has no draft yet; push one first`, EXIT.refused, "no_draft");
  return draft.versionId;
}

export async function deploy(ctx: Context, tool: Tool, slot: Slot, revisionId: string) {
  return ctx.call(
    ctx.api.PUT("/v1/workspaces/{ws}/tools/{toolUid}/hook/deployments/{slot}", {
      params: { path: { ws: ctx.workspace, toolUid: tool.uid, slot } },
      body: { revisionId },
    }),
  );
}
