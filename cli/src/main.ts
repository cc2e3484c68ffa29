// The `rayrun` command. Commander parses; every command runs through `run`,
// which builds the API context, prints failures with the API's stable code,
// and sets the documented exit code.
import { Command, CommanderError } from "commander";
import { registerApply } from "./commands/apply.ts";
import { registerApprovals } from "./commands/approvals.ts";
import { registerCatalog } from "./commands/catalog.ts";
import { registerCodeMode } from "./commands/codemode.ts";
import { registerHooks } from "./commands/hooks.ts";
import { registerLogs } from "./commands/logs.ts";
import { registerRules } from "./commands/rules.ts";
import { createContext, type Context, type GlobalOptions } from "./context.ts";
import { describeFailure, EXIT } from "./errors.ts";
import { createPrinter, type Printer } from "./output.ts";

declare const RAYRUN_CLI_VERSION: string;

export function buildProgram(): Command {
  const program = new Command("rayrun")
    .description("Deploy and operate Rayrun gateway hooks from a repository or CI")
    .version(RAYRUN_CLI_VERSION, "-v, --version")
    .option("--api-url <url>", "the gateway's origin (default: $RAYRUN_API_URL)")
    .option("--api-key <key>", "an API key, rr_… (default: $RAYRUN_API_KEY); never printed")
    .option("--workspace <id>", "the workspace (default: $RAYRUN_WORKSPACE, else the key's only workspace)")
    .option("--json", "print one JSON document (JSON lines for `logs` and `hooks logs`)")
    .showHelpAfterError("(run with --help for usage)")
    .exitOverride();

  const run = (action: (ctx: Context, out: Printer) => Promise<void>) => async (): Promise<void> => {
    const options = program.opts<GlobalOptions>();
    const out = createPrinter(options.json ?? false);
    try {
      await action(await createContext(options), out);
    } catch (error) {
      const failure = describeFailure(error);
      if (out.json)
        process.stdout.write(
          `${JSON.stringify({ error: { code: failure.code, message: failure.message, details: failure.details } }, null, 2)}\n`,
        );
      else process.stderr.write(`rayrun: ${failure.message}\n`);
      process.exitCode = failure.exitCode;
    }
  };

  registerCatalog(program, run);
  registerHooks(program, run);
  const hooks = program.commands.find((command) => command.name() === "hooks")!;
  registerApply(hooks, run);
  registerRules(hooks);
  registerApprovals(program, run);
  registerCodeMode(program, run);
  registerLogs(program, run);
  for (const command of allCommands(program)) command.exitOverride();
  return program;
}

function allCommands(command: Command): Command[] {
  return command.commands.flatMap((child) => [child, ...allCommands(child)]);
}

export async function main(argv: string[]): Promise<void> {
  const program = buildProgram();
  try {
    await program.parseAsync(argv);
  } catch (error) {
    if (error instanceof CommanderError) {
      // Help and --version exit 0; unknown flags, missing arguments and the like are usage errors.
      process.exitCode = error.exitCode === 0 ? EXIT.ok : EXIT.usage;
      return;
    }
    throw error;
  }
}

await main(process.argv);
