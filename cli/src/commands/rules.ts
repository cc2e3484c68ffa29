// `rayrun hooks check` and `rayrun hooks run`: the local rules file
// (gateway-hooks.toml). They need no API key and never call the gateway.
// The rules engine is imported when one of them runs, not when the CLI
// starts: it is most of the bundle, and every other command does without it.
import type { Command } from "commander";
import { CliError, describeFailure, EXIT } from "../errors.ts";
import { createPrinter } from "../output.ts";
import type { ToolInput } from "../rules/core/events.ts";

export function registerRules(hooks: Command): void {
  hooks
    .command("check <file>")
    .description("Local rules file: validate it, build every handler and send one sample event through the matching rules")
    .option("--event <event>", "the sample's event (pre_tool_call, post_tool_call, pre_request, post_response, run_end)", "pre_tool_call")
    .option("--tool <name>", "the sample's tool name (the request path for pre_request/post_response)")
    .option("--input <json>", "the sample's tool_input as a JSON object")
    .option("--result <json>", "the sample's tool_result (post_tool_call), response body (post_response) or report (run_end), as JSON")
    .option("--seed <file>", "seed the alias door first from a JSON list of { type, value, role?, identity? }")
    .option(
      "--probe <tool>",
      "make one real call of a declared tool with --input, instead of the sample (it uses the network and any key the tool reads)",
    )
    .action(
      async (
        file: string,
        options: { event: string; tool?: string; input?: string; result?: string; seed?: string; probe?: string },
        command: Command,
      ) => {
        const out = createPrinter(command.optsWithGlobals<{ json?: boolean }>().json ?? false);
        try {
          const [{ checkRulesFile, describeReport, takesResult }, { eventNamed }] = await Promise.all([
            import("../rules/node/check.ts"),
            import("../rules/core/events.ts"),
          ]);
          const event = eventNamed(options.event);
          if (!event) throw new CliError(`--event ${options.event} is not an event`, EXIT.usage, "usage");
          if (options.result !== undefined && !takesResult(event))
            throw new CliError(`--result is for post_tool_call, post_response or run_end, not ${event}`, EXIT.usage, "usage");
          if (options.probe !== undefined)
            process.stderr.write(`rayrun: --probe ${options.probe} makes one real call: it uses the network and any key the tool reads\n`);
          const report = await checkRulesFile(file, {
            event: options.event,
            tool: options.tool,
            input: parseInput(options.input),
            result: options.result === undefined ? undefined : parseJson(options.result, "--result"),
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
    .option(
      "--config <file>",
      "the rules file (default: gateway-hooks.toml, else .json, in the session's project folder: $CLAUDE_PROJECT_DIR, else its first event's cwd)",
    )
    .option("--seed <file>", "seed the alias door from a JSON list (kept for the session's later events)")
    .option(
      "--timeout <seconds>",
      "Claude Code's timeout for this hook (the settings' timeout; default 600): the event is refused a margin before it",
    )
    .action(async (options: { config?: string; seed?: string; timeout?: string }) => {
      const { answerBudgetSeconds, CLAUDE_HOOK_TIMEOUT_SECONDS, MAX_HOOK_INPUT_BYTES, replyToClaude } =
        await import("../rules/node/claude.ts");
      const timeout = options.timeout === undefined ? CLAUDE_HOOK_TIMEOUT_SECONDS : Number(options.timeout);
      // Exit 2, which Claude Code reads as a refusal: a typo here fails closed too (a thrown error would exit 1).
      if (!Number.isFinite(timeout) || timeout <= 0) {
        process.stderr.write(`rayrun: --timeout must be a positive number of seconds, not ${options.timeout}\n`);
        process.exitCode = EXIT.usage;
        return;
      }
      // Counted from the process's start, as Claude Code counts from spawning it.
      const deadline = performance.timeOrigin + answerBudgetSeconds(timeout) * 1000;
      const stdin = await readStdin(MAX_HOOK_INPUT_BYTES);
      const reply = await replyToClaude(stdin.text, { ...options, deadline }, stdin.truncated);
      if (reply.stdout !== undefined) process.stdout.write(`${JSON.stringify(reply.stdout)}\n`);
      if (reply.stderr) process.stderr.write(`${reply.stderr}\n`);
      process.exitCode = reply.exitCode;
      // Rules still running (a handler past its own timeout's reach) must not hold the answer back: the
      // exit code is the answer, and Claude Code reads it only when the process ends.
      if (reply.abandoned) process.exit();
    });
}

function parseJson(text: string, flag: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw new CliError(`${flag} must be JSON`, EXIT.usage, "usage");
  }
}

function parseInput(text: string | undefined): ToolInput | undefined {
  if (text === undefined) return undefined;
  const value = parseJson(text, "--input");
  if (value === null || typeof value !== "object" || Array.isArray(value))
    throw new CliError("--input must be a JSON object", EXIT.usage, "usage");
  return value as ToolInput;
}

/** Stdin up to `limit` bytes; past it the rest is read and dropped (`truncated`), never held. */
async function readStdin(limit: number): Promise<{ text: string; truncated: boolean }> {
  const chunks: Buffer[] = [];
  let size = 0;
  let truncated = false;
  for await (const chunk of process.stdin) {
    const bytes = chunk as Buffer;
    if (size + bytes.length > limit) {
      if (!truncated) chunks.push(bytes.subarray(0, limit - size));
      truncated = true;
      size = limit;
      continue;
    }
    size += bytes.length;
    chunks.push(bytes);
  }
  return { text: Buffer.concat(chunks).toString("utf8"), truncated };
}
