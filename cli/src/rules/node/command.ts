// The command handler: a program with the event as JSON on stdin and its answer
// on stdout. Node-only. Its own process group, so a timeout kills what it spawned too.
import { spawn } from "node:child_process";
import { answerFromText } from "../core/answer.ts";
import { HookFailure } from "../core/errors.ts";
import type { HookAnswer, HookEvent } from "../core/events.ts";
import { MAX_OUTPUT_BYTES, type Handler, type HandlerOptions } from "../core/handlers.ts";

export interface CommandSpec {
  /** Run through the shell when `args` is absent; spawned directly with `args`. */
  command: string;
  args?: string[];
  cwd?: string;
  env?: Readonly<Record<string, string | undefined>>;
}

export class CommandHandler implements Handler {
  readonly type = "command";
  readonly name: string;
  readonly async: boolean;
  readonly timeout?: number;
  constructor(
    readonly spec: CommandSpec,
    options: HandlerOptions = {},
  ) {
    this.name = options.name ?? spec.command.split(/\s+/)[0]!;
    this.async = options.async ?? false;
    this.timeout = options.timeout;
  }

  handle(event: HookEvent, signal: AbortSignal): Promise<HookAnswer> {
    const { command, args, cwd, env } = this.spec;
    return new Promise((resolve, reject) => {
      const child = spawn(command, args ?? [], {
        shell: args === undefined,
        cwd,
        // The run's environment, with what the SDK caller added on top.
        env: { ...process.env, ...env },
        detached: true,
        stdio: ["pipe", "pipe", "pipe"],
      });
      const killGroup = () => {
        try {
          if (child.pid) process.kill(-child.pid, "SIGKILL");
        } catch {
          // already gone
        }
      };
      let failed: HookFailure | undefined;
      const fail = (failure: HookFailure) => {
        failed ??= failure;
        killGroup();
      };
      const output = { stdout: [] as Buffer[], stderr: [] as Buffer[], bytes: 0 };
      for (const stream of ["stdout", "stderr"] as const) {
        child[stream].on("data", (chunk: Buffer) => {
          output.bytes += chunk.byteLength;
          if (output.bytes > MAX_OUTPUT_BYTES)
            fail(new HookFailure("hook_output_too_large", `${this.name} printed more than ${MAX_OUTPUT_BYTES} bytes`));
          else output[stream].push(chunk);
        });
      }
      const onAbort = () => fail(new HookFailure("hook_timeout", `${this.name} was killed when its timeout passed`));
      signal.addEventListener("abort", onAbort, { once: true });
      child.on("error", (error) => fail(new HookFailure("hook_exit", `${this.name} could not start: ${error.message}`)));
      // A program that never reads stdin closes it early; that is not an error.
      child.stdin.on("error", () => {});
      child.stdin.end(JSON.stringify(event));
      child.on("close", (code, killedBy) => {
        signal.removeEventListener("abort", onAbort);
        // Whatever it left running in its group goes with it.
        killGroup();
        if (failed) return reject(failed);
        const stdout = Buffer.concat(output.stdout).toString("utf8");
        const stderr = Buffer.concat(output.stderr).toString("utf8").trim();
        if (code === 0) {
          try {
            resolve(answerFromText(stdout, event.hook_event_name));
          } catch (error) {
            reject(error);
          }
        } else if (code === 2) resolve({ decision: "deny", reason: stderr || `denied by hook ${this.name}` });
        else
          reject(
            new HookFailure(
              "hook_exit",
              `${this.name} ${code === null ? `was killed by ${killedBy}` : `exited ${code}`}${stderr ? `: ${stderr.slice(-500)}` : ""}`,
            ),
          );
      });
    });
  }
}
