// `rayrun/hooks`: the rules file's SDK for Node. The runtime-neutral engine is in
// ./core; this adds reading the file and the handlers that need Node.
import { AliasDoor as CoreAliasDoor, type AliasOptions } from "./core/alias/door.ts";
import { HookRun as CoreHookRun, type HookRunOptions } from "./core/run.ts";
import { nodeHmacSha256 } from "./node/hmac.ts";
import { rulesFromFile, type FromConfigOptions } from "./node/load.ts";

export * from "./core/index.ts";
export { CommandHandler } from "./node/command.ts";
export type { CommandSpec } from "./node/command.ts";
export { FileSink } from "./node/file-sink.ts";
export { loadRulesFile } from "./node/load.ts";
export type { FromConfigOptions } from "./node/load.ts";

/** The alias door, signing with `node:crypto` unless told otherwise (see AliasOptions.hmacSha256). */
export class AliasDoor extends CoreAliasDoor {
  constructor(options: AliasOptions = {}) {
    super({ hmacSha256: nodeHmacSha256, ...options });
  }
}

export class HookRun extends CoreHookRun {
  constructor(options: HookRunOptions = {}) {
    super({ ...options, alias: options.alias ?? new AliasDoor(options.aliasOptions) });
  }

  /** Reads `gateway-hooks.toml` (or .json), validates it, builds every handler (imports callables) and starts a run. */
  static async fromConfig(path: string, options: FromConfigOptions = {}): Promise<HookRun> {
    const runId = options.runId ?? new CoreHookRun().runId;
    const { loaded, rules, alias } = await rulesFromFile(path, runId, options);
    const runOptions: HookRunOptions = { runId, cwd: options.cwd ?? process.cwd(), rules, vendors: loaded.config.vendors, alias };
    return new HookRun(runOptions);
  }
}
