// A rules file from disk, and the handlers only Node can build: command,
// callable (imported when the run starts) and record (a file sink).
import { readFile } from "node:fs/promises";
import { dirname, extname, isAbsolute, join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { AliasDoor } from "../core/alias/door.ts";
import { buildRules, coreHandlerFactory, type HandlerFactory } from "../core/build.ts";
import { aliasOptionsOf, parseRules, type HandlerSpec, type RulesConfig } from "../core/config.ts";
import { AliasError, type SeedEntity } from "../core/alias/seeds.ts";
import { RulesFileError } from "../core/errors.ts";
import { FunctionHandler, RecordHandler, type HookFunction, type RecordSink } from "../core/handlers.ts";
import type { Rule } from "../core/run.ts";
import { CommandHandler } from "./command.ts";
import { FileSink } from "./file-sink.ts";
import { nodeHmacSha256 } from "./hmac.ts";

export interface LoadedRules {
  file: string;
  config: RulesConfig;
}

/** Reads and validates a rules file: JSON when it ends in .json, else TOML. */
export async function loadRulesFile(path: string): Promise<LoadedRules> {
  const file = resolve(path);
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (error) {
    throw new RulesFileError(
      "rules_file_unreadable",
      `cannot read the rules file: ${(error as NodeJS.ErrnoException).code ?? String(error)}`,
      undefined,
      undefined,
      path,
    );
  }
  return { file, config: parseRules(text, extname(file).toLowerCase() === ".json" ? "json" : "toml", path) };
}

/** A seed file: a JSON list of `{ type, value, role?, identity? }` (checked by run.seed()). */
export async function readSeedFile(path: string): Promise<SeedEntity[]> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (error) {
    throw new AliasError(
      "rules_alias_bad_seed",
      `cannot read the seed file ${path}: ${(error as NodeJS.ErrnoException).code ?? String(error)}`,
    );
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new AliasError("rules_alias_bad_seed", `the seed file ${path} is not JSON`);
  }
  if (!Array.isArray(value))
    throw new AliasError("rules_alias_bad_seed", `the seed file ${path} must hold a JSON list of { type, value, role?, identity? }`);
  return value as SeedEntity[];
}

export interface NodeFactoryOptions {
  /** Relative `target`, `sink` and `cwd` resolve against this folder: the rules file's. */
  baseDir: string;
  runId: string;
  /** `{run_dir}` in a sink; defaults to `<cwd>/runs/<run id>`. */
  runDir: string;
  env?: Readonly<Record<string, string | undefined>>;
  /** The run's alias door. */
  alias: AliasDoor;
  /** Where a record handler's lines go, given its sink's path; omitted, appended to that file. */
  sinks?: (path: string) => RecordSink;
}

export function nodeHandlerFactory(options: NodeFactoryOptions): HandlerFactory {
  const core = coreHandlerFactory({ env: options.env ?? process.env, alias: options.alias });
  const at = (path: string) => (isAbsolute(path) ? path : join(options.baseDir, path));
  return async (spec) => {
    const common = { name: spec.name, timeout: spec.timeout, async: spec.async };
    switch (spec.type) {
      case "command":
        return new CommandHandler({ command: spec.command, args: spec.args, cwd: at(spec.cwd ?? "."), env: options.env }, common);
      case "callable":
        return new FunctionHandler(await importCallable(spec, at), { ...common, type: "callable", name: spec.name ?? spec.target });
      case "record": {
        const sink = spec.sink.replaceAll("{run_id}", options.runId).replaceAll("{run_dir}", options.runDir);
        const sinkOf = options.sinks ?? ((path: string) => new FileSink(path));
        return new RecordHandler(sinkOf(at(sink)), { session: spec.session, source: spec.source }, common);
      }
      default:
        return core(spec, { event: "pre_tool_call", matcher: "", handlers: [] });
    }
  };
}

async function importCallable(spec: Extract<HandlerSpec, { type: "callable" }>, at: (path: string) => string): Promise<HookFunction> {
  const missing = (why: string) => new RulesFileError("rules_callable_missing", why, `${spec.at.path}.target`, spec.at.line);
  return (await importFunction(spec.target, at, missing)) as HookFunction;
}

/** The function a `"./file.mjs#export"` target names (the default export without `#`), imported now. */
export async function importFunction(
  target: string,
  at: (path: string) => string,
  missing: (why: string) => Error,
): Promise<(...args: never[]) => unknown> {
  const [file, exportName = "default"] = target.split("#") as [string, string?];
  let module: Record<string, unknown>;
  try {
    module = (await import(pathToFileURL(at(file)).href)) as Record<string, unknown>;
  } catch (error) {
    throw missing(`cannot import ${file}: ${error instanceof Error ? error.message.split("\n")[0] : String(error)}`);
  }
  const fn = module[exportName];
  if (typeof fn !== "function") throw missing(`${file} has no exported function "${exportName}"`);
  return fn as (...args: never[]) => unknown;
}

export interface FromConfigOptions {
  runId?: string;
  /** The run's working directory (sent as the event's `cwd`); defaults to process.cwd(). */
  cwd?: string;
  runDir?: string;
  env?: Readonly<Record<string, string | undefined>>;
  /** The alias door's run key (64 hex digits); omitted, a fresh random one. */
  aliasKey?: string;
  /** Where record handlers write (`hooks check` keeps their lines instead); omitted, their sink files. */
  sinks?: (path: string) => RecordSink;
  /** Stops every handler still running when it aborts (HookRunOptions.signal). */
  signal?: AbortSignal;
}

/** Loads, validates and builds a file's rules, ready for a HookRun. */
export async function rulesFromFile(
  path: string,
  runId: string,
  options: FromConfigOptions = {},
): Promise<{ loaded: LoadedRules; rules: Rule[]; alias: AliasDoor }> {
  const loaded = await loadRulesFile(path);
  const alias = new AliasDoor({ ...aliasOptionsOf(loaded.config.alias, options.aliasKey), hmacSha256: nodeHmacSha256 });
  const cwd = options.cwd ?? process.cwd();
  const factory = nodeHandlerFactory({
    baseDir: dirname(loaded.file),
    runId,
    runDir: options.runDir ?? join(cwd, "runs", runId),
    env: options.env,
    alias,
    sinks: options.sinks,
  });
  return { loaded, rules: await buildRules(loaded.config, factory), alias };
}
