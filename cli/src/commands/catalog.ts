// `rayrun services …` and `rayrun tools …`: what the workspace has connected and indexed.
import type { Command } from "commander";
import type { Context } from "../context.ts";
import type { Printer } from "../output.ts";
import { table } from "../output.ts";
import { resolveTool } from "../tools.ts";
import { CliError, EXIT } from "../errors.ts";

type Run = (action: (ctx: Context, out: Printer) => Promise<void>) => () => Promise<void>;

export function registerCatalog(program: Command, run: Run): void {
  const services = program.command("services").description("Upstream MCP servers connected to the workspace");
  services
    .command("list")
    .description("List services")
    .action(
      run(async (ctx, out) => {
        const { services } = await ctx.call(ctx.api.GET("/v1/workspaces/{ws}/services", { params: { path: { ws: ctx.workspace } } }));
        out.result(services, () =>
          table([["ID", "SLUG", "URL", "INDEXED"], ...services.map((s) => [s.id, s.slug, s.url, s.indexedAt ?? "never"])]),
        );
      }),
    );
  services
    .command("show <service>")
    .description("Show one service (id or slug)")
    .action((ref: string) =>
      run(async (ctx, out) => {
        const service = await findService(ctx, ref);
        out.result(service, () => JSON.stringify(service, null, 2));
      })(),
    );
  services
    .command("refresh <service>")
    .description("Re-index a service's tools now (id or slug)")
    .action((ref: string) =>
      run(async (ctx, out) => {
        const service = await findService(ctx, ref);
        const summary = await ctx.call(
          ctx.api.POST("/v1/workspaces/{ws}/services/{svc}/refresh", { params: { path: { ws: ctx.workspace, svc: service.id } } }),
        );
        out.result(summary, () => [
          `${service.slug}: ${summary.added.length} added, ${summary.changed.length} changed (sent to review), ${summary.removed.length} removed, ${summary.unchanged} unchanged`,
          ...summary.changed.map((name) => `  changed: ${name}`),
        ]);
      })(),
    );

  const tools = program.command("tools").description("Indexed tools and their review state");
  tools
    .command("list")
    .description("List tools with public names, uids and status")
    .option("--status <status>", "active, review_required or removed")
    .action((options: { status?: "active" | "review_required" | "removed" }) =>
      run(async (ctx, out) => {
        const { tools } = await ctx.call(
          ctx.api.GET("/v1/workspaces/{ws}/tools", { params: { path: { ws: ctx.workspace }, query: { status: options.status } } }),
        );
        out.result(tools, () => table([["PUBLIC NAME", "UID", "STATUS"], ...tools.map((t) => [t.publicName, t.uid, t.status])]));
      })(),
    );
  tools
    .command("show <tool>")
    .description("Show a tool's definition and review state (public name or uid)")
    .action((ref: string) =>
      run(async (ctx, out) => {
        const tool = await resolveTool(ctx, ref);
        out.result(tool, () => JSON.stringify(tool, null, 2));
      })(),
    );
  tools
    .command("review <tool>")
    .description("Approve a tool's changed definition (the hash shown by `tools show`)")
    .requiredOption("--hash <definitionHash>", "the definitionHash you reviewed; a newer change is not approved unseen")
    .action((ref: string, options: { hash: string }) =>
      run(async (ctx, out) => {
        const tool = await resolveTool(ctx, ref);
        const reviewed = await ctx.call(
          ctx.api.POST("/v1/workspaces/{ws}/tools/{toolUid}/review", {
            params: { path: { ws: ctx.workspace, toolUid: tool.uid } },
            body: { definitionHash: options.hash },
          }),
        );
        out.result(reviewed, () => `${reviewed.publicName}: ${reviewed.status}`);
      })(),
    );
}

async function findService(ctx: Context, ref: string) {
  const { services } = await ctx.call(ctx.api.GET("/v1/workspaces/{ws}/services", { params: { path: { ws: ctx.workspace } } }));
  const found = services.find((s) => s.id === ref || s.slug === ref);
  if (!found) throw new CliError(`No service '${ref}'; \`rayrun services list\` shows ids and slugs`, EXIT.refused, "unknown_service");
  return found;
}
