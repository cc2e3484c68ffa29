// `rayrun logs`: every call through the gateway (tool calls, Code Mode runs and their inner calls, resource reads,
// prompts), filtered, paged past any count, or followed as calls arrive.
import type { Command } from "commander";
import type { paths, Schemas } from "../api/client.ts";
import type { Context } from "../context.ts";
import { CliError, EXIT } from "../errors.ts";
import type { Printer } from "../output.ts";
import { resolveTool } from "../tools.ts";

type Run = (action: (ctx: Context, out: Printer) => Promise<void>) => () => Promise<void>;
type Call = Schemas["Call"];

const KINDS = ["tools/call", "resources/read", "prompts/get", "run_code"] as const;
const OUTCOMES = [
  "ok",
  "approved",
  "upstream_error",
  "upstream_failed",
  "refused",
  "hidden",
  "cancelled",
  "approval_required",
  "timed_out",
  "error",
] as const;

interface LogsOptions {
  since?: string;
  until?: string;
  kind?: string;
  tool?: string;
  service?: string;
  actor?: string;
  profile?: string;
  outcome?: string;
  code?: string;
  requestId?: string;
  limit: string;
  all?: boolean;
  follow?: boolean;
}

/** How long `--follow` waits between reads. */
const FOLLOW_MS = 2000;

export function registerLogs(program: Command, run: Run): void {
  program
    .command("logs")
    .description("Every call through the gateway, newest first (JSON lines with --json); `hooks logs <tool>` has a hook's stage runs")
    .option("--since <iso>", "calls that started at or after this time (ISO 8601)")
    .option("--until <iso>", "calls that started before this time")
    .option("--kind <kind>", KINDS.join(", "))
    .option("--tool <tool>", "one tool, by public name or uid")
    .option("--service <id>", "one service's calls")
    .option("--actor <actor>", "one caller: key:<key id> or oauth:<client_id>")
    .option("--profile <id>", "one access profile's calls")
    .option("--outcome <outcome>", OUTCOMES.join(", "))
    .option("--code <code>", "a refusal, failure or hook reason code")
    .option("--request-id <id>", "one call (a run_code and its inner calls)")
    .option("--limit <n>", "calls to print (1–10000)", "100")
    .option("--all", "every matching call, however many (pages through them)")
    .option("--follow", "then keep printing new calls every 2 s until interrupted")
    .action((options: LogsOptions) =>
      run(async (ctx, out) => {
        const limit = Number(options.limit);
        if (!Number.isInteger(limit) || limit < 1 || limit > 10_000)
          throw new CliError("--limit must be an integer from 1 to 10000", EXIT.usage, "usage");
        if (options.kind !== undefined && !(KINDS as readonly string[]).includes(options.kind))
          throw new CliError(`--kind must be one of ${KINDS.join(", ")}`, EXIT.usage, "usage");
        if (options.outcome !== undefined && !(OUTCOMES as readonly string[]).includes(options.outcome))
          throw new CliError(`--outcome must be one of ${OUTCOMES.join(", ")}`, EXIT.usage, "usage");
        const query = {
          since: options.since,
          until: options.until,
          kind: options.kind as Call["kind"] | undefined,
          tool: options.tool ? (await resolveTool(ctx, options.tool)).uid : undefined,
          service: options.service,
          actor: options.actor,
          profile: options.profile,
          outcome: options.outcome as Call["outcome"] | undefined,
          code: options.code,
          requestId: options.requestId,
        };
        await printCalls(ctx, out, query, options.all ? Infinity : limit, options.follow ?? false);
      })(),
    );
}

/** The filters `GET …/logs` takes, as the generated client types them. */
type Query = Omit<NonNullable<paths["/v1/workspaces/{ws}/logs"]["get"]["parameters"]["query"]>, "limit" | "cursor" | "format">;

async function page(ctx: Context, query: Query, limit: number, cursor?: string): Promise<{ calls: Call[]; nextCursor: string | null }> {
  const body = await ctx.call(
    ctx.api.GET("/v1/workspaces/{ws}/logs", {
      params: { path: { ws: ctx.workspace }, query: { ...query, limit, cursor, format: "json" } },
    }),
  );
  if (typeof body === "string") throw new CliError("The API answered logs as text, not JSON", EXIT.unavailable, "unexpected_response");
  return body;
}

function line(out: Printer, call: Call): void {
  if (out.json) {
    process.stdout.write(`${JSON.stringify(call)}\n`);
    return;
  }
  const index = call.callIndex === null ? "" : `#${call.callIndex}`;
  const outcome = call.code ? `${call.outcome} (${call.code})` : call.outcome;
  process.stdout.write(
    `${call.createdAt}  ${call.requestId}${index}  ${call.actor}  ${call.kind.padEnd(14)}  ${call.name}  ${outcome}  ${call.durationMs.toFixed(1)} ms\n`,
  );
}

/**
 * Newest first, page after page (1,000 rows each) until `limit` rows or the last page; with `follow`, the first
 * page oldest first and then each new call as it lands, in the order the gateway stored them (row ids only grow,
 * so a call whose row arrives late is not skipped, as a time cursor would).
 */
async function printCalls(ctx: Context, out: Printer, query: Query, limit: number, follow: boolean): Promise<void> {
  if (!follow) {
    let printed = 0;
    let cursor: string | undefined;
    do {
      const listed = await page(ctx, query, Math.min(1000, limit - printed), cursor);
      for (const call of listed.calls) line(out, call);
      printed += listed.calls.length;
      cursor = listed.nextCursor ?? undefined;
    } while (cursor && printed < limit);
    return;
  }
  let newest = 0;
  const first = await page(ctx, query, Math.min(1000, limit === Infinity ? 100 : limit));
  for (const call of [...first.calls].reverse()) line(out, call);
  newest = first.calls[0]?.id ?? 0;
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
      out.progress("following calls: new rows every 2 s, Ctrl-C to stop");
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, FOLLOW_MS);
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      out.endProgress();
      if (interrupted) break;
      // Everything newer than the newest printed row: page back until reaching it.
      const fresh: Call[] = [];
      let cursor: string | undefined;
      for (;;) {
        const listed = await page(ctx, query, 1000, cursor);
        const newer = listed.calls.filter((call) => call.id > newest);
        fresh.push(...newer);
        if (newer.length < listed.calls.length || !listed.nextCursor) break;
        cursor = listed.nextCursor;
      }
      for (const call of fresh.reverse()) line(out, call);
      newest = Math.max(newest, ...fresh.map((call) => call.id));
    }
  } finally {
    process.off("SIGINT", interrupt);
    out.endProgress();
  }
}
