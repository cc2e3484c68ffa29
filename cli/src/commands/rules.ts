// `rayrun hooks check` and `rayrun hooks run`: the local rules file
// (gateway-hooks.toml). They need no API key and never call the gateway.
import type { Command } from "commander";
import { CliError, describeFailure, EXIT } from "../errors.ts";
import { createPrinter } from "../output.ts";
import { checkRulesFile, describeReport } from "../rules/node/check.ts";
import { replyToClaude } from "../rules/node/claude.ts";
import { eventNamed, type ToolInput } from "../rules/core/events.ts";

export function registerRules(hooks: Command): void {
  hooks
    .command("check <file>")
    .description("Local rules file: validate it, build every handler and send one sample event through the matching rules")
    .option("--event <event>", "the sample's event (pre_tool_call, post_tool_call, pre_request, post_response, run_end)", "pre_tool_call")
    .option("--tool <name>", "the sample's tool name (the request path for pre_request/post_response)")
    .option("--input <json>", "the sample's tool_input as a JSON object")
    .option("--seed <file>", "seed the alias door first from a JSON list of { type, value, role?, identity? }")
    .option(
      "--probe <tool>",
      "make one real call of a declared tool with --input, instead of the sample (it uses the network and any key the tool reads)",
    )
    .action(
      async (file: string, options: { event: string; tool?: string; input?: string; seed?: string; probe?: string }, command: Command) => {
        const out = createPrinter(command.optsWithGlobals<{ json?: boolean }>().json ?? false);
        try {
          if (!eventNamed(options.event)) throw new CliError(`--event ${options.event} is not an event`, EXIT.usage, "usage");
          if (options.probe !== undefined)
            process.stderr.write(`rayrun: --probe ${options.probe} makes one real call: it uses the network and any key the tool reads\n`);
          const report = await checkRulesFile(file, {
            event: options.event,
            tool: options.tool,
            input: parseInput(options.input),
            seed: options.seed,
            probe: options.probe,
          });
          out.result(report, () => describeReport(report));
          if (!report.ok) process.exitCode = EXIT.refused;
        } catch (error) {
          const failure = describeFailure(error);
          const code = (error as { code?: unknown }).code;
          if (out.json)
            process.stdout.write(
              `${JSON.stringify({ error: { code: typeof code === "string" ? code : failure.code, message: failure.message } }, null, 2)}\n`,
            );
          else process.stderr.write(`rayrun: ${failure.message}\n`);
          process.exitCode = error instanceof CliError ? error.exitCode : EXIT.refused;
        }
      },
    );

  hooks
    .command("run")
    .description("Local rules file as a Claude Code hook: the agent's event on stdin, its answer on stdout (exit 2 denies)")
    .option("--config <file>", "the rules file (default: gateway-hooks.toml, else .json, in the event's cwd)")
    .option("--seed <file>", "seed the alias door from a JSON list (kept for the session's later events)")
    .action(async (options: { config?: string; seed?: string }) => {
      const reply = await replyToClaude(await readStdin(), options);
      if (reply.stdout !== undefined) process.stdout.write(`${JSON.stringify(reply.stdout)}\n`);
      if (reply.stderr) process.stderr.write(`${reply.stderr}\n`);
      process.exitCode = reply.exitCode;
    });
}

function parseInput(text: string | undefined): ToolInput | undefined {
  if (text === undefined) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new CliError("--input must be JSON", EXIT.usage, "usage");
  }
  if (value === null || typeof value !== "object" || Array.isArray(value))
    throw new CliError("--input must be a JSON object", EXIT.usage, "usage");
  return value as ToolInput;
}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}
