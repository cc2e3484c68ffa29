// `rayrun codemode runs`: the workspace's Code Mode runs (who ran which program, how it ended).
import type { Command } from "commander";
import type { Context } from "../context.ts";
import { CliError, EXIT } from "../errors.ts";
import type { Printer } from "../output.ts";
import { table } from "../output.ts";

type Run = (action: (ctx: Context, out: Printer) => Promise<void>) => () => Promise<void>;

interface RunsOptions {
  since?: string;
  outcome?: "ok" | "error";
  requestId?: string;
  limit: string;
}

export function registerCodeMode(program: Command, run: Run): void {
  const codemode = program.command("codemode").description("Code Mode: programs agents run through run_code");
  codemode
    .command("runs")
    .description("List run_code runs, newest first (never a program's text: its SHA-256 and size)")
    .option("--since <iso>", "runs at or after this time")
    .option("--outcome <outcome>", "ok or error")
    .option("--request-id <id>", "one run (its inner calls are in `rayrun hooks logs` under the same id)")
    .option("--limit <n>", "runs to list (1–1000)", "100")
    .action((options: RunsOptions) =>
      run(async (ctx, out) => {
        const limit = Number(options.limit);
        if (!Number.isInteger(limit) || limit < 1 || limit > 1000)
          throw new CliError("--limit must be an integer from 1 to 1000", EXIT.usage, "usage");
        if (options.outcome !== undefined && options.outcome !== "ok" && options.outcome !== "error")
          throw new CliError("--outcome must be ok or error", EXIT.usage, "usage");
        const body = await ctx.call(
          ctx.api.GET("/v1/workspaces/{ws}/code-runs", {
            params: {
              path: { ws: ctx.workspace },
              query: { since: options.since, outcome: options.outcome, requestId: options.requestId, limit, format: "json" },
            },
          }),
        );
        if (typeof body === "string")
          throw new CliError("The API answered runs as text, not JSON", EXIT.unavailable, "unexpected_response");
        out.result(body.runs, () =>
          table([
            ["WHEN", "REQUEST", "ACTOR", "OUTCOME", "CALLS", "MS", "PROGRAM"],
            ...body.runs.map((row) => [
              row.createdAt,
              row.requestId,
              row.actor,
              row.code ? `${row.outcome} (${row.code})` : row.outcome,
              String(row.innerCalls),
              String(Math.round(row.durationMs)),
              row.programSha256 ? `${row.programSha256.slice(0, 12)}… ${row.programBytes} B` : "",
            ]),
          ]),
        );
      })(),
    );
}
