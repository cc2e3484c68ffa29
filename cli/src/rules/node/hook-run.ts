// The Node flavours of the engine's run and alias door. `rayrun hooks run` and
// `hooks check` import these, not the SDK's index, so a start reads only what
// its file needs: the declared live tools (DNS, sockets, a worker thread for
// response patterns) load only for a file that has a [live] or [tools] table.
import { dirname, join } from "node:path";
import { AliasDoor as CoreAliasDoor, type AliasOptions } from "../core/alias/door.ts";
import type { LiveLine } from "../core/live/record.ts";
import type { DefinitionShape } from "../core/live/schema.ts";
import { HookRun as CoreHookRun, newRunId, type HookRunOptions, type WrappedTool } from "../core/run.ts";
import { nodeHmacSha256 } from "./hmac.ts";
import type { LiveTools } from "./live/load.ts";
import { rulesFromFile, type FromConfigOptions } from "./load.ts";

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
    const runId = options.runId ?? newRunId();
    const { loaded, rules, alias } = await rulesFromFile(path, runId, options);
    const cwd = options.cwd ?? process.cwd();
    const run = new HookRun({ runId, cwd, rules, vendors: loaded.config.vendors, alias, signal: options.signal });
    if (loaded.config.live !== undefined) {
      const { buildLiveTools } = await import("./live/load.ts");
      run.#live = await buildLiveTools(loaded.config, run, {
        baseDir: dirname(loaded.file),
        runDir: options.runDir ?? join(cwd, "runs", runId),
        env: options.env,
      });
    }
    return run;
  }
}
