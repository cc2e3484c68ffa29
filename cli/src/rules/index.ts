// `rayrun/hooks`: the rules file's SDK for Node. The runtime-neutral engine is in
// ./core; this adds reading the file and the handlers that need Node.
export * from "./core/index.ts";
export { AliasDoor, HookRun } from "./node/hook-run.ts";
export { CommandHandler } from "./node/command.ts";
export type { CommandSpec } from "./node/command.ts";
export { FileSink } from "./node/file-sink.ts";
export { loadRulesFile } from "./node/load.ts";
export type { FromConfigOptions } from "./node/load.ts";
export { LiveTools } from "./node/live/load.ts";
export type { LiveToolsFromConfigOptions } from "./node/live/load.ts";
