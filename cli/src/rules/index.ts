// `rayrun/hooks`: the rules file's SDK for Node. The runtime-neutral engine is in
// ./core; this adds reading the file and the handlers that need Node.
import { dirname, join } from "node:path";
import { AliasDoor as CoreAliasDoor, type AliasOptions } from "./core/alias/door.ts";
import { HookRun as CoreHookRun, type HookRunOptions } from "./core/run.ts";
import { nodeHmacSha256 } from "./node/hmac.ts";
import type { LiveLine } from "./core/live/record.ts";
import type { DefinitionShape } from "./core/live/schema.ts";
import type { WrappedTool } from "./core/run.ts";
import { buildLiveTools, type LiveTools } from "./node/live/load.ts";
import { rulesFromFile, type FromConfigOptions } from "./node/load.ts";

export * from "./core/index.ts";
export { CommandHandler } from "./node/command.ts";
export type { CommandSpec } from "./node/command.ts";
export { FileSink } from "./node/file-sink.ts";
export { loadRulesFile } from "./node/load.ts";
export type { FromConfigOptions } from "./node/load.ts";
export { LiveTools } from "./node/live/load.ts";
export type { LiveToolsFromConfigOptions } from "./node/live/load.ts";

/** The alias door, signing with `node:crypto` unless told otherwise (see AliasOptions.hmacSha256). */
export class AliasDoor extends CoreAliasDoor {
  constructor(options: AliasOptions = {}) {
    super({ hmacSha256: nodeHmacSha256, ...options });
  }
}

export class HookRun extends CoreHookRun {
  /** One line per call of a declared tool (`run.tools()`), as `[live].record` gets them: the last 1,000. */
  readonly liveLog: LiveLine[] = [];
  #live?: LiveTools;

  constructor(options: HookRunOptions = {}) {
    super({ ...options, alias: options.alias ?? new AliasDoor(options.aliasOptions) });
  }

  /** The file's declared tools (`[tools.<name>]`), wrapped by the rules and recorded; `vendor` for tools that name none. */
  async tools(options: { vendor?: string } = {}): Promise<Record<string, WrappedTool>> {
    return this.#live?.tools(options) ?? {};
  }

  /** The declared tools for a model: OpenAI's function shape (default), or `"anthropic"` for `{ name, description, input_schema }`. */
  async toolDefinitions(shape: DefinitionShape = "openai") {
    return this.#live?.toolDefinitions(shape) ?? [];
  }

  /** Reads `gateway-hooks.toml` (or .json), validates it, builds every handler (imports callables) and starts a run. */
  static async fromConfig(path: string, options: FromConfigOptions = {}): Promise<HookRun> {
    const runId = options.runId ?? new CoreHookRun().runId;
    const { loaded, rules, alias } = await rulesFromFile(path, runId, options);
    const cwd = options.cwd ?? process.cwd();
    const run = new HookRun({ runId, cwd, rules, vendors: loaded.config.vendors, alias });
    run.#live = await buildLiveTools(loaded.config, run, {
      baseDir: dirname(loaded.file),
      runDir: options.runDir ?? join(cwd, "runs", runId),
      env: options.env,
    });
    return run;
  }
}
