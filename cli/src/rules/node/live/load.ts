// The declared live tools of a rules file, built for a run under Node: connector files
// read, callables imported, the recording read for replay and the record file opened,
// all when the run starts, so a mistake in any of them fails the start.
import { readFile } from "node:fs/promises";
import { dirname, extname, isAbsolute, join, resolve } from "node:path";
import type { RulesConfig } from "../../core/config.ts";
import { RulesFileError } from "../../core/errors.ts";
import {
  DEFAULT_LIVE_TIMEOUT,
  parseConnector,
  resolveConnector,
  type CallableTool,
  type ConnectorSpec,
  type LiveSettings,
  type ResolvedTool,
} from "../../core/live/config.ts";
import { Redactor, ReplayBook } from "../../core/live/record.ts";
import { LiveTools as CoreLiveTools, type BuiltTool, type LiveExecutor, type LiveRun } from "../../core/live/table.ts";
import { importFunction, loadRulesFile } from "../load.ts";
import { httpExecutor } from "./http.ts";
import { RecordFile } from "./record-file.ts";

export interface LiveBuildOptions {
  /** Relative connector, callable, record and replay paths resolve against this folder: the rules file's. */
  baseDir: string;
  /** `{run_dir}` in record and replay. */
  runDir: string;
  /** What `$NAME` and connector auth read (only names in [live].allowed_env); defaults to process.env. */
  env?: Readonly<Record<string, string | undefined>>;
}

export interface LiveToolsFromConfigOptions {
  /** `{run_dir}`; defaults to `<cwd>/runs/<run id>`. */
  runDir?: string;
  cwd?: string;
  env?: Readonly<Record<string, string | undefined>>;
}

export class LiveTools extends CoreLiveTools {
  /** The `[tools]` table of a rules file, built for an existing run (its rules wrap every call). */
  static async fromConfig(file: string, run: LiveRun & { cwd?: string }, options: LiveToolsFromConfigOptions = {}): Promise<LiveTools> {
    const loaded = await loadRulesFile(file);
    const cwd = options.cwd ?? run.cwd ?? process.cwd();
    return buildLiveTools(loaded.config, run, {
      baseDir: dirname(loaded.file),
      runDir: options.runDir ?? join(cwd, "runs", run.runId),
      env: options.env,
    });
  }
}

/** Builds a validated file's declared tools for `run`. */
export async function buildLiveTools(config: RulesConfig, run: LiveRun, options: LiveBuildOptions): Promise<LiveTools> {
  const settings: LiveSettings = config.live?.live ?? { allowed_env: [], timeout: DEFAULT_LIVE_TIMEOUT };
  const env = options.env ?? process.env;
  const at = (path: string) => (isAbsolute(path) ? path : join(options.baseDir, path));
  const fill = (path: string) => at(path.replaceAll("{run_id}", run.runId).replaceAll("{run_dir}", options.runDir));
  const connectors = new Map<string, ConnectorSpec>();
  const built: BuiltTool[] = [];
  for (const spec of config.live?.tools ?? []) {
    let tool: ResolvedTool;
    if (spec.kind === "connector") {
      const path = at(spec.connector);
      let connector = connectors.get(path);
      if (!connector) {
        connector = await readConnector(path, spec.connector, settings, spec.at);
        connectors.set(path, connector);
      }
      tool = resolveConnector(spec, connector);
    } else tool = spec;
    built.push({
      spec: tool,
      execute:
        tool.kind === "http" ? httpExecutor(tool, env, settings.allow_private === true) : await callableExecutor(tool, at, run.runId),
    });
  }
  const record = settings.record === undefined ? undefined : fill(settings.record);
  const replay = settings.replay === undefined ? undefined : fill(settings.replay);
  if (record !== undefined && record === replay)
    throw new RulesFileError("rules_wrong_type", "record and replay name the same file; record a replay to a new one", "live.record");
  return new LiveTools(run, built, {
    settings,
    sink: record === undefined ? undefined : new RecordFile(record),
    replay: replay === undefined ? undefined : await readRecording(replay, settings.replay!),
    redactor: new Redactor(env, settings.allowed_env),
  });
}

async function readConnector(path: string, named: string, settings: LiveSettings, at: { path: string; line?: number; file?: string }) {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (error) {
    throw new RulesFileError(
      "rules_connector_unreadable",
      `cannot read the connector file ${named}: ${(error as NodeJS.ErrnoException).code ?? String(error)}`,
      `${at.path}.connector`,
      at.line,
      at.file,
    );
  }
  return parseConnector(text, extname(path).toLowerCase() === ".json" ? "json" : "toml", named, settings);
}

async function readRecording(path: string, named: string): Promise<ReplayBook> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (error) {
    throw new RulesFileError(
      "rules_replay_unreadable",
      `cannot read the recording ${resolve(path)} (${named}): ${(error as NodeJS.ErrnoException).code ?? String(error)}`,
      "live.replay",
    );
  }
  return ReplayBook.parse(text, path);
}

/** A `callable` tool: the exported function gets the input as sent and `{ signal, run_id }`; what it returns is the result. */
async function callableExecutor(tool: CallableTool, at: (path: string) => string, runId: string): Promise<LiveExecutor> {
  const fn = (await importFunction(
    tool.target,
    at,
    (why) => new RulesFileError("rules_callable_missing", why, `${tool.at.path}.callable`, tool.at.line, tool.at.file),
  )) as (input: unknown, context: { signal: AbortSignal; run_id: string }) => unknown;
  return async (input, call) => fn(input, { signal: call.signal, run_id: runId });
}
