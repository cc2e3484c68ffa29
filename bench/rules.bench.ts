// `npm run bench` part (issue 17): what the rules file costs a tool call, each
// figure against a baseline measured in the same run:
//  - a wrapped call with one `callable` rule vs the bare call (target ≤ 50 µs added p50);
//  - one `command` handler call vs spawning the same program directly with the
//    same stdin (target ≤ 1.2×).
// It runs the bundle users get (cli/dist/hooks.js), built first.
import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import type * as Hooks from "../cli/src/rules/index.ts";
import { summarise, type Figures } from "./lib.ts";

const root = join(import.meta.dirname, "..");
const CALLS = Number(process.env.BENCH_RULES_CALLS ?? 20_000);
const SPAWNS = Number(process.env.BENCH_RULES_SPAWNS ?? 200);
/** A program that reads its stdin and answers nothing (allow): the same for both sides. */
const PROGRAM = ["/bin/sh", "-c", "cat > /dev/null"];

export interface RulesBench {
  bare: Figures;
  callable: Figures;
  direct: Figures;
  command: Figures;
}

export async function benchRules(): Promise<RulesBench> {
  const built = spawnSync(process.execPath, [join(root, "cli/build.ts")], { encoding: "utf8" });
  if (built.status !== 0) throw new Error(built.stderr);
  const { HookRun } = (await import(pathToFileURL(join(root, "cli/dist/hooks.js")).href)) as typeof Hooks;

  const dir = mkdtempSync(join(tmpdir(), "rayrun-rules-bench-"));
  writeFileSync(
    join(dir, "guards.mjs"),
    "export function check(event) { if (event.tool_input.n < 0) return { decision: 'deny', reason: 'negative' }; }\n",
  );
  writeFileSync(
    join(dir, "gateway-hooks.toml"),
    `[[hooks.pre_tool_call]]\nhandlers = [{ type = "callable", target = "./guards.mjs#check" }]\n` +
      `[[hooks.post_tool_call]]\nmatcher = "^spawned$"\nhandlers = [{ type = "command", command = "${PROGRAM[0]}", args = ${JSON.stringify(PROGRAM.slice(1))} }]\n`,
  );
  const run = await HookRun.fromConfig(join(dir, "gateway-hooks.toml"));
  const tool = async (input: Hooks.ToolInput) => ({ ok: input.n });
  const wrapped = run.wrapTools({ lookup: tool, spawned: tool });

  // Interleaved, so drift and GC land on both sides alike.
  const bare: number[] = [];
  const callable: number[] = [];
  for (let i = 0; i < CALLS + 1000; i++) {
    let started = performance.now();
    await tool({ n: i });
    const b = performance.now() - started;
    started = performance.now();
    await wrapped.lookup({ n: i });
    const c = performance.now() - started;
    if (i >= 1000) {
      bare.push(b);
      callable.push(c);
    }
  }

  const event = JSON.stringify({
    hook_event_name: "post_tool_call",
    run_id: run.runId,
    matcher: "^spawned$",
    tool_name: "spawned",
    tool_input: { n: 1 },
    tool_result: { ok: 1 },
  });
  const direct: number[] = [];
  const command: number[] = [];
  for (let i = 0; i < SPAWNS + 10; i++) {
    let started = performance.now();
    await spawnDirect(event);
    const d = performance.now() - started;
    // The wrapped call: its command handler, plus microseconds of rules and tool against milliseconds of process.
    started = performance.now();
    await wrapped.spawned({ n: 1 });
    const c = performance.now() - started;
    if (i >= 10) {
      direct.push(d);
      command.push(c);
    }
  }
  return { bare: summarise(bare), callable: summarise(callable), direct: summarise(direct), command: summarise(command) };
}

function spawnDirect(stdin: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(PROGRAM[0]!, PROGRAM.slice(1), { stdio: ["pipe", "pipe", "pipe"] });
    child.stdout.resume();
    child.stderr.resume();
    child.on("error", reject);
    child.stdin.end(stdin);
    child.on("close", () => resolve());
  });
}

export function printRules(result: RulesBench): void {
  const us = (ms: number) => `${(ms * 1000).toFixed(1).padStart(7)} µs`;
  const ms = (value: number) => `${value.toFixed(2).padStart(7)} ms`;
  console.log(`\nRules file (rayrun/hooks, Node ${process.version}): ${result.bare.count} calls, ${result.direct.count} spawns`);
  console.log(`  bare tool call                    p50 ${us(result.bare.p50)}  p99 ${us(result.bare.p99)}`);
  console.log(
    `  wrapped, one callable rule        p50 ${us(result.callable.p50)}  p99 ${us(result.callable.p99)}  → +${us(result.callable.p50 - result.bare.p50).trim()} p50 (target ≤ 50 µs added)`,
  );
  console.log(`  program spawned directly          p50 ${ms(result.direct.p50)}  p99 ${ms(result.direct.p99)}`);
  console.log(
    `  one command handler call          p50 ${ms(result.command.p50)}  p99 ${ms(result.command.p99)}  → ${(result.command.p50 / result.direct.p50).toFixed(2)}× (target ≤ 1.2×)`,
  );
}
