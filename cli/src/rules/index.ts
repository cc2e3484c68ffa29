// `rayrun/hooks`: the rules file's SDK for Node. The runtime-neutral engine is in
// ./core; this adds reading the file and the handlers that need Node.
import { HookRun as CoreHookRun, type HookRunOptions } from "./core/run.ts";
import { rulesFromFile, type FromConfigOptions } from "./node/load.ts";

export * from "./core/index.ts";
export { CommandHandler } from "./node/command.ts";
export type { CommandSpec } from "./node/command.ts";
export { FileSink } from "./node/file-sink.ts";
export { loadRulesFile } from "./node/load.ts";
export type { FromConfigOptions } from "./node/load.ts";

export class HookRun extends CoreHookRun {
  /** Reads `gateway-hooks.toml` (or .json), validates it, builds every handler (imports callables) and starts a run. */
  static async fromConfig(path: string, options: FromConfigOptions = {}): Promise<HookRun> {
    const runId = options.runId ?? new CoreHookRun().runId;
    const { loaded, rules, alias } = await rulesFromFile(path, runId, options);
    const runOptions: HookRunOptions = { runId, cwd: options.cwd ?? process.cwd(), rules, vendors: loaded.config.vendors, alias };
    return new HookRun(runOptions);
  }
}
