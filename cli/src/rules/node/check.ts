// `rayrun hooks check`: validate a rules file, build every handler, and send one
// sample event through the rules that match it. Command and http handlers really run.
import { AliasError } from "../core/alias/seeds.ts";
import { HookError, RulesFileError } from "../core/errors.ts";
import { eventNamed, isPreEvent, type EventName, type HookEvent, type ToolInput } from "../core/events.ts";
import type { RecordSink } from "../core/handlers.ts";
import { HookRun } from "./hook-run.ts";
import { describeTools, listTools, probeTool, type ProbeReport, type ToolListing } from "./live/check.ts";
import { loadRulesFile, readSeedFile } from "./load.ts";

export interface CheckOptions {
  event?: string;
  tool?: string;
  input?: ToolInput;
  /** The sample's tool_result (post_tool_call), response body (post_response) or report (run_end); omitted, `{ "sample": true }`. */
  result?: unknown;
  /** A seed file: the alias door is seeded from it before the sample runs. */
  seed?: string;
  /** A declared tool to call for real with `input`, instead of the sample event. */
  probe?: string;
}

/** A record line `hooks check` did not write: the sink it names and the line, as a record handler would append it. */
export interface DryRunRecord {
  sink: string;
  line: unknown;
}

/** A sink that keeps the lines: checking a file never appends a sample to a real transcript. */
class DryRunSink implements RecordSink {
  constructor(
    readonly path: string,
    readonly into: DryRunRecord[],
  ) {}
  async append(line: string): Promise<void> {
    this.into.push({ sink: this.path, line: JSON.parse(line) as unknown });
  }
}

export interface CheckProblem {
  code: string;
  message: string;
  path?: string;
  line?: number;
  hook?: string;
}

export interface CheckReport {
  file: string;
  ok: boolean;
  rules: {
    event: EventName;
    matcher: string;
    vendor?: string;
    arg?: string;
    handlers: { type: string; name?: string; async: boolean }[];
  }[];
  vendors: Record<string, string>;
  /** The declared tools ([tools.<name>]) with each one's input. */
  tools: ToolListing[];
  /** `--probe`: the one real call made. */
  probe?: ProbeReport;
  sample?: {
    event: EventName;
    tool_name?: string;
    matched_rules: number;
    decision: "allow" | "deny" | "rewrite";
    reason?: string;
    rewritten?: Partial<HookEvent>;
    contexts: string[];
    findings: unknown[];
    /** What record handlers would have written (nothing is written). */
    records: DryRunRecord[];
  };
  problems: CheckProblem[];
  /** How many seeds `--seed` gave the alias door. */
  seeded?: number;
}

/** Events whose sample a `--result` can supply. */
export const takesResult = (event: EventName) => !isPreEvent(event);

export async function checkRulesFile(file: string, options: CheckOptions): Promise<CheckReport> {
  const report: CheckReport = { file, ok: false, rules: [], vendors: {}, tools: [], problems: [] };
  const event = eventNamed(options.event ?? "pre_tool_call");
  if (!event) throw new RulesFileError("rules_unknown_event", `--event ${options.event} is not an event`);
  const records: DryRunRecord[] = [];
  let run: HookRun;
  try {
    const { config } = await loadRulesFile(file);
    report.vendors = config.vendors;
    report.rules = config.rules.map((rule) => ({
      event: rule.event,
      matcher: rule.matcher,
      vendor: rule.vendor,
      arg: rule.arg,
      handlers: rule.handlers.map((handler) => ({ type: handler.type, name: handler.name, async: handler.async ?? false })),
    }));
    run = await HookRun.fromConfig(file, { sinks: (path) => new DryRunSink(path, records) });
    report.tools = await listTools(config, run);
  } catch (error) {
    if (!(error instanceof RulesFileError)) throw error;
    report.problems.push({ code: error.code, message: error.message, path: error.path, line: error.line });
    return report;
  }
  if (options.seed !== undefined) {
    try {
      const seeds = await readSeedFile(options.seed);
      await run.seed(seeds);
      report.seeded = seeds.length;
    } catch (error) {
      if (!(error instanceof AliasError)) throw error;
      report.problems.push({ code: error.code, message: error.message });
      return report;
    }
  }

  const input = options.input ?? {};
  if (options.probe !== undefined) {
    report.probe = await probeTool(run, options.probe, input);
    if (report.probe.error) report.problems.push({ code: report.probe.error.code ?? "probe_failed", message: report.probe.error.message });
    report.ok = report.problems.length === 0;
    return report;
  }
  const toolName = options.tool ?? "example_tool";
  const result = options.result === undefined ? { sample: true } : options.result;
  const sample: Omit<HookEvent, "run_id" | "matcher"> =
    event === "pre_tool_call"
      ? { hook_event_name: event, tool_name: toolName, tool_input: input, vendor: run.vendorOf(toolName) }
      : event === "post_tool_call"
        ? { hook_event_name: event, tool_name: toolName, tool_input: input, vendor: run.vendorOf(toolName), tool_result: result }
        : event === "pre_request"
          ? { hook_event_name: event, request: { method: "GET", path: options.tool ?? "/", body: input } }
          : event === "post_response"
            ? {
                hook_event_name: event,
                request: { method: "GET", path: options.tool ?? "/" },
                response: { status: 200, body: result, elapsed: 0 },
              }
            : { hook_event_name: event, report: result, artifacts: {} };
  try {
    const done = await run.dispatch(sample);
    await run.settled();
    report.sample = {
      event,
      tool_name: sample.tool_name,
      matched_rules: done.matched,
      decision: done.denied ? "deny" : done.rewritten ? "rewrite" : "allow",
      ...(done.denied ? { reason: done.denied.reason } : {}),
      ...(done.rewritten ? { rewritten: rewrittenFields(done.event) } : {}),
      contexts: done.contexts,
      findings: run.findings,
      records,
    };
  } catch (error) {
    if (!(error instanceof HookError)) throw error;
    report.problems.push({ code: error.code, message: error.message });
  }
  for (const failure of run.errors) report.problems.push({ code: failure.code, message: failure.message, hook: failure.hook });
  for (const logged of run.asyncAnswers) {
    if (logged.failure) report.problems.push({ code: logged.failure.code, message: logged.failure.message, hook: logged.hook });
  }
  report.ok = report.problems.length === 0;
  return report;
}

function rewrittenFields(event: HookEvent): Partial<HookEvent> {
  const { tool_input, tool_result, error, request, response } = event;
  return { tool_input, tool_result, error, request, response };
}

export function describeReport(report: CheckReport): string[] {
  const lines = [
    `${report.file}: ${report.ok ? "ok" : `${report.problems.length} problem(s)`}${report.seeded === undefined ? "" : `, ${report.seeded} seed(s)`}`,
  ];
  for (const rule of report.rules) {
    const scope = [
      rule.matcher ? `matcher "${rule.matcher}"` : "every tool",
      rule.vendor && `vendor ${rule.vendor}`,
      rule.arg && `arg ${rule.arg}`,
    ]
      .filter(Boolean)
      .join(", ");
    lines.push(
      `  ${rule.event}  ${scope}: ${rule.handlers.map((h) => `${h.type}${h.name ? ` (${h.name})` : ""}${h.async ? " async" : ""}`).join(", ")}`,
    );
  }
  lines.push(...describeTools(report.tools, report.probe));
  if (report.sample) {
    const s = report.sample;
    lines.push(
      `sample ${s.event}${s.tool_name ? ` ${s.tool_name}` : ""}: ${s.matched_rules} rule(s) matched → ${s.decision}${s.reason ? `: ${s.reason}` : ""}`,
    );
    for (const context of s.contexts) lines.push(`  ${context}`);
    if (s.rewritten) lines.push(`  rewritten: ${JSON.stringify(s.rewritten)}`);
    for (const record of s.records) lines.push(`  record (not written) → ${record.sink}: ${JSON.stringify(record.line)}`);
  }
  for (const problem of report.problems)
    lines.push(`problem ${problem.code}${problem.hook ? ` (hook ${problem.hook})` : ""}: ${problem.message}`);
  return lines;
}
