// `rayrun hooks run` under the real Claude Code CLI (@anthropic-ai/claude-code, pinned in
// package.json), driven by a small scripted Messages API on this machine (ANTHROPIC_BASE_URL):
// the model's turns are scripted, everything else — the hooks Claude Code runs, what it sends
// the model, what it does with each answer — is Claude Code's own.
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, it } from "vitest";

const root = join(import.meta.dirname, "../..");
const launcher = join(root, "cli/bin/rayrun.js");
/** The platform's binary itself (what the wrapper's install script would copy into place), else the wrapper's bin. */
const claude = [
  join(root, `node_modules/@anthropic-ai/claude-code-${process.platform}-${process.arch}/claude`),
  join(root, "node_modules/.bin/claude"),
].find(existsSync)!;

type Block = { type: "text"; text: string } | { type: "tool_use"; id: string; name: string; input: Record<string, unknown> };
interface MessagesRequest {
  model?: string;
  stream?: boolean;
  tools?: unknown[];
  messages?: { role: string; content: unknown }[];
}

/**
 * A Messages API that answers the main conversation (the requests that carry tools) from `turns`,
 * one turn per request, each turn given every request body so far; any other request (a title, a
 * summary) gets a short text. Streams when asked to, as the real API does.
 */
/** Runs `work` while `api` listens on a loopback port, and closes it after, whatever happened. */
async function serving(api: { server: Server }, work: () => Promise<void>): Promise<void> {
  await new Promise<void>((resolve) => api.server.listen(0, "127.0.0.1", resolve));
  try {
    await work();
  } finally {
    await new Promise<void>((resolve) => api.server.close(() => resolve()));
  }
}

/** A file of the session Claude Code ran (its id from the --output-format json result), under the project's .rayrun/hooks. */
function sessionFile(dir: string, ran: { stdout: string }, name: string): unknown {
  const session = (JSON.parse(ran.stdout) as { session_id: string }).session_id;
  return JSON.parse(readFileSync(join(dir, ".rayrun/hooks", session, name), "utf8"));
}

function scriptedApi(turns: ((bodies: string[]) => Block[])[]): { server: Server; bodies: string[]; origin: () => string } {
  const bodies: string[] = [];
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    let text = "";
    req.on("data", (chunk: Buffer) => (text += chunk.toString("utf8")));
    req.on("end", () => {
      let body: MessagesRequest = {};
      try {
        body = JSON.parse(text) as MessagesRequest;
      } catch {
        // not JSON: answered as a side request
      }
      if (!req.url?.startsWith("/v1/messages") || req.url.includes("count_tokens")) {
        res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ input_tokens: 1 }));
        return;
      }
      let blocks: Block[] = [{ type: "text", text: "ok" }];
      if (Array.isArray(body.tools) && body.tools.length > 0) {
        bodies.push(text);
        blocks = turns[Math.min(bodies.length, turns.length) - 1]!(bodies);
      }
      const stop = blocks.some((block) => block.type === "tool_use") ? "tool_use" : "end_turn";
      if (!body.stream) {
        res.writeHead(200, { "content-type": "application/json" });
        res.end(
          JSON.stringify({
            id: "msg_1",
            type: "message",
            role: "assistant",
            model: body.model,
            content: blocks,
            stop_reason: stop,
            stop_sequence: null,
            usage: { input_tokens: 1, output_tokens: 1 },
          }),
        );
        return;
      }
      res.writeHead(200, { "content-type": "text/event-stream" });
      const send = (type: string, data: object) => res.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`);
      send("message_start", {
        message: {
          id: `msg_${bodies.length}`,
          type: "message",
          role: "assistant",
          model: body.model,
          content: [],
          stop_reason: null,
          stop_sequence: null,
          usage: { input_tokens: 1, output_tokens: 1 },
        },
      });
      blocks.forEach((block, index) => {
        if (block.type === "text") {
          send("content_block_start", { index, content_block: { type: "text", text: "" } });
          send("content_block_delta", { index, delta: { type: "text_delta", text: block.text } });
        } else {
          send("content_block_start", { index, content_block: { type: "tool_use", id: block.id, name: block.name, input: {} } });
          send("content_block_delta", { index, delta: { type: "input_json_delta", partial_json: JSON.stringify(block.input) } });
        }
        send("content_block_stop", { index });
      });
      send("message_delta", { delta: { stop_reason: stop, stop_sequence: null }, usage: { output_tokens: 1 } });
      send("message_stop", {});
      res.end();
    });
  });
  return { server, bodies, origin: () => `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

/** Claude Code in print mode in `dir`, with its own HOME, against the scripted API; resolves with its exit and output. */
function runClaude(
  dir: string,
  home: string,
  api: string,
  prompt: string,
  allowedTools = "Bash",
): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(claude, ["-p", prompt, "--output-format", "json", "--model", "claude-sonnet-4-5", "--allowedTools", allowedTools], {
      cwd: dir,
      // This machine's environment, less any credentials or settings of a Claude Code that runs the session.
      env: {
        ...process.env,
        ANTHROPIC_AUTH_TOKEN: undefined,
        ANTHROPIC_MODEL: undefined,
        CLAUDE_CODE_OAUTH_TOKEN: undefined,
        CLAUDECODE: undefined,
        CLAUDE_CODE_ENTRYPOINT: undefined,
        HOME: home,
        ANTHROPIC_BASE_URL: api,
        ANTHROPIC_API_KEY: "sk-ant-test-local",
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
        DISABLE_TELEMETRY: "1",
        DISABLE_AUTOUPDATER: "1",
      },
      stdio: ["ignore", "pipe", "pipe"],
    });
    const output = { stdout: "", stderr: "" };
    child.stdout.on("data", (chunk: Buffer) => (output.stdout += chunk.toString("utf8")));
    child.stderr.on("data", (chunk: Buffer) => (output.stderr += chunk.toString("utf8")));
    const timer = setTimeout(() => child.kill("SIGKILL"), 150_000);
    child.on("close", (status) => {
      clearTimeout(timer);
      resolve({ status, ...output });
    });
  });
}

/** A project folder with the alias door on every event, hooks run as Claude Code's hook for all five (docs/rules-file.md), and the subject seeded. */
function project(
  rules = `[[hooks.PreToolUse]]\nhandlers = [{ type = "alias" }]\n\n[[hooks.PostToolUse]]\nhandlers = [{ type = "alias" }]\n\n[[hooks.run_end]]\nhandlers = [{ type = "alias", check = "outgoing" }]\n`,
  /** The hooks' `timeout` in the settings (seconds), also given to hooks run as --timeout. */
  timeout?: number,
): string {
  const dir = mkdtempSync(join(tmpdir(), "rayrun-claude-"));
  writeFileSync(join(dir, "gateway-hooks.toml"), rules);
  writeFileSync(join(dir, "seeds.json"), JSON.stringify([{ type: "person_name", value: "Matthew Nowell", identity: "subject" }]));
  writeFileSync(join(dir, "people.txt"), "Dear Matthew Nowell,\n");
  // Each hook also notes its exit code, so the test sees what Claude Code got.
  const flags = timeout === undefined ? "" : ` --timeout ${timeout}`;
  const hook = (name: string) => ({
    type: "command",
    command: `node ${JSON.stringify(launcher)} hooks run --seed seeds.json${flags}; code=$?; echo "${name} $code" >> "$CLAUDE_PROJECT_DIR/hook-exits.log"; exit $code`,
    ...(timeout === undefined ? {} : { timeout }),
  });
  mkdirSync(join(dir, ".claude"));
  writeFileSync(
    join(dir, ".claude/settings.json"),
    JSON.stringify({
      hooks: {
        PreToolUse: [{ matcher: "*", hooks: [hook("PreToolUse")] }],
        PostToolUse: [{ matcher: "*", hooks: [hook("PostToolUse")] }],
        PostToolUseFailure: [{ matcher: "*", hooks: [hook("PostToolUseFailure")] }],
        Stop: [{ hooks: [hook("Stop")] }],
        SessionEnd: [{ hooks: [hook("SessionEnd")] }],
      },
    }),
  );
  return dir;
}

describe("rayrun hooks run under the real Claude Code", () => {
  let api: ReturnType<typeof scriptedApi>;
  // The model: reads a file that names the subject, writes a greeting to the person it read about, then
  // names the subject itself (as a model that learnt the name elsewhere would), twice.
  const turns: ((bodies: string[]) => Block[])[] = [
    () => [{ type: "tool_use", id: "toolu_01", name: "Bash", input: { command: "cat people.txt", description: "Read the file" } }],
    (bodies) => {
      const read = /Dear (\p{Lu}\p{Ll}+ \p{Lu}[\p{L}-]+),/u.exec(bodies.at(-1)!)![1]!;
      return [
        { type: "tool_use", id: "toolu_02", name: "Bash", input: { command: `echo 'Hello ${read}' > greeting.txt`, description: "Greet" } },
      ];
    },
    () => [{ type: "text", text: "Matthew Nowell lives in Leeds." }],
    () => [{ type: "text", text: "Sorry: Matthew Nowell is the person in the file." }],
  ];
  beforeAll(async () => {
    api = scriptedApi(turns);
    await new Promise<void>((resolve) => api.server.listen(0, "127.0.0.1", resolve));
  });
  afterAll(() => new Promise<void>((resolve) => api.server.close(() => resolve())));

  it("keeps the real name from the model, and a failed run_end holds through Stop, Stop (stop_hook_active) and SessionEnd", async ({
    expect,
  }) => {
    const dir = project();
    const home = mkdtempSync(join(tmpdir(), "rayrun-claude-home-"));
    const ran = await runClaude(dir, home, api.origin(), "Greet the person in people.txt.");
    expect(ran.status, ran.stderr).toBe(0);

    // The door: the model read the file in alias space, and its greeting reached the user's file with the real name.
    expect(readFileSync(join(dir, "greeting.txt"), "utf8")).toBe("Hello Matthew Nowell\n");
    const [first, second, third] = api.bodies;
    expect(second).toMatch(/Dear \p{Lu}\p{Ll}+ \p{Lu}[\p{L}-]+,/u);
    for (const body of [first, second, third]) expect(body).not.toMatch(/nowell/i);

    // What Claude Code got from each hook: the first Stop blocked (exit 2: the model answered again), the second
    // (stop_hook_active) told the user instead (exit 0 with a systemMessage), SessionEnd failed the run too.
    expect(readFileSync(join(dir, "hook-exits.log"), "utf8").trim().split("\n")).toEqual([
      "PreToolUse 0",
      "PostToolUse 0",
      "PreToolUse 0",
      "PostToolUse 0",
      "Stop 2",
      "Stop 0",
      "SessionEnd 2",
    ]);
    // The model was told why (Claude Code's "Stop hook feedback"), without the value itself.
    const fourth = api.bodies[3]!;
    expect(fourth).toContain(
      "the rules failed the run: alias check: 1 real value(s) reached the report or artifacts (person_name at report.last_assistant_message)",
    );
    // Claude Code's own result is the model's last answer, real name and all: the verdict is what says so.
    const result = JSON.parse(ran.stdout) as { result: string; session_id: string };
    expect(result.result).toBe("Sorry: Matthew Nowell is the person in the file.");

    const verdict = JSON.parse(readFileSync(join(dir, ".rayrun/hooks", result.session_id, "verdict.json"), "utf8")) as {
      passed: boolean;
      reasons: string[];
      ends: { event: string; at: string; passed: boolean; reasons: string[] }[];
      findings: { check: string; where: string }[];
    };
    expect(verdict.passed).toBe(false);
    expect(verdict.ends.map(({ event, passed }) => [event, passed])).toEqual([
      ["Stop", false],
      ["Stop", false],
      ["SessionEnd", false],
    ]);
    for (const end of verdict.ends) expect(new Date(end.at).toISOString()).toBe(end.at);
    // SessionEnd carries no last message: its check read the Stops' reports and what the model wrote in the transcript.
    expect(verdict.ends[2]!.reasons[0]).toContain("person_name at report.earlier_stops[0], person_name at report.earlier_stops[1]");
    // (Lines 1 and 2 are the model's two tool calls, in alias space; 3 and 4 its two answers.)
    expect(verdict.findings.map((finding) => finding.where).filter((where) => where.startsWith("artifacts"))).toEqual([
      'artifacts["transcript"] line 3',
      'artifacts["transcript"] line 4',
    ]);
    expect(verdict.reasons).toHaveLength(3);

    // What the user was shown at the second Stop: Claude Code records the hook's systemMessage in the transcript.
    const transcriptDir = join(home, ".claude/projects");
    const transcript = readdirSync(transcriptDir, { recursive: true, encoding: "utf8" }).find((name) =>
      name.endsWith(`${result.session_id}.jsonl`),
    )!;
    const entries = readFileSync(join(transcriptDir, transcript), "utf8")
      .split("\n")
      .filter(Boolean)
      .map((line) => JSON.parse(line) as { type: string; attachment?: { type: string; content?: string } });
    expect(entries.filter((entry) => entry.attachment?.type === "hook_system_message").map((entry) => entry.attachment!.content)).toEqual([
      expect.stringMatching(/^the rules failed the run: alias check: 1 real value/),
    ]);
  }, 200_000);

  it("cannot keep a failed tool's output from the model, so it counts the leak, tells the model and fails the run", async ({ expect }) => {
    // Its own model: reads the file, then reads it in a command that fails (Claude Code fires PostToolUseFailure, not PostToolUse).
    const failing = scriptedApi([
      () => [{ type: "tool_use", id: "toolu_01", name: "Bash", input: { command: "cat people.txt", description: "Read" } }],
      () => [
        { type: "tool_use", id: "toolu_02", name: "Bash", input: { command: "cat people.txt; exit 1", description: "Read and fail" } },
      ],
      () => [{ type: "text", text: "done" }],
    ]);
    await serving(failing, async () => {
      const dir = project();
      const home = mkdtempSync(join(tmpdir(), "rayrun-claude-home-"));
      const ran = await runClaude(dir, home, failing.origin(), "Read people.txt.");
      expect(ran.status, ran.stderr).toBe(0);
      expect(readFileSync(join(dir, "hook-exits.log"), "utf8").trim().split("\n")).toEqual([
        "PreToolUse 0",
        "PostToolUse 0",
        "PreToolUse 0",
        "PostToolUseFailure 0",
        "Stop 0",
        "SessionEnd 2",
      ]);
      // The first output reached the model in alias space; the failed one as it was (no hook answer replaces it),
      // with what rayrun said beside it.
      const [, second, third] = failing.bodies;
      expect(second).toMatch(/Dear \p{Lu}\p{Ll}+ \p{Lu}[\p{L}-]+,/u);
      expect(second).not.toMatch(/nowell/i);
      const reason = "alias: 1 real value(s) (person_name) reached the model in Bash's failed output, which no hook can replace";
      const shown = JSON.parse(third!) as { messages: { content: { type: string; content?: string; is_error?: boolean }[] }[] };
      const result = shown.messages.at(-1)!.content.find((block) => block.type === "tool_result")!;
      expect(result.is_error).toBe(true);
      expect(result.content).toContain("Exit code 1\nDear Matthew Nowell,");
      expect(result.content).toContain(
        `PostToolUseFailure:Bash hook additional context: [hook rayrun] the output of this failed call could not be guarded: ${reason}. The run has failed.`,
      );

      // The run failed when it happened, and stays failed: Stop told the user (its own check passed), SessionEnd failed.
      const verdict = sessionFile(dir, ran, "verdict.json") as {
        passed: boolean;
        ends: { event: string; passed: boolean }[];
        summary: { leak_through_inbound: number };
      };
      expect(verdict.passed).toBe(false);
      expect(verdict.ends.map(({ event, passed }) => [event, passed])).toEqual([
        ["PostToolUseFailure", false],
        ["Stop", true],
        ["SessionEnd", true],
      ]);
      expect(verdict.summary.leak_through_inbound).toBe(1);
    });
  }, 200_000);

  it("keeps the project's rules after the agent moves into a folder with an empty rules file of its own (cd)", async ({ expect }) => {
    const moving = scriptedApi([
      () => [{ type: "tool_use", id: "toolu_01", name: "Bash", input: { command: "rm -rf victim.txt", description: "Delete" } }],
      () => [
        {
          type: "tool_use",
          id: "toolu_02",
          name: "Bash",
          input: { command: "mkdir -p w && echo '[vendors]' > w/gateway-hooks.toml && cd w", description: "Move" },
        },
      ],
      () => [{ type: "tool_use", id: "toolu_03", name: "Bash", input: { command: "rm -rf ../victim.txt", description: "Delete" } }],
      () => [{ type: "text", text: "done" }],
    ]);
    await serving(moving, async () => {
      const guard = `let t = ""; for await (const c of process.stdin) t += c; const e = JSON.parse(t);
if (/\\brm\\s+-\\w*r/.test(e.tool_input.command)) { process.stderr.write("recursive delete refused"); process.exit(2); }\n`;
      const dir = project(
        `[[hooks.PreToolUse]]\nmatcher = "^Bash$"\nhandlers = [{ type = "command", command = "node guard.mjs", name = "guard" }]\n`,
      );
      writeFileSync(join(dir, "guard.mjs"), guard);
      writeFileSync(join(dir, "victim.txt"), "precious\n");
      const ran = await runClaude(dir, mkdtempSync(join(tmpdir(), "rayrun-claude-home-")), moving.origin(), "Clean up.");
      expect(ran.status, ran.stderr).toBe(0);
      // The cd took (Claude Code's later hooks ran in w), and the project's guard still refused the delete from there.
      expect(readFileSync(join(dir, "hook-exits.log"), "utf8").trim().split("\n")).toEqual([
        "PreToolUse 2",
        "PreToolUse 0",
        "PostToolUse 0",
        "PreToolUse 2",
        "Stop 0",
        "SessionEnd 0",
      ]);
      const last = (JSON.parse(moving.bodies[3]!) as { messages: { content: { type: string; content?: string }[] }[] }).messages.at(-1)!;
      expect(last.content.find((block) => block.type === "tool_result")!.content).toContain("recursive delete refused");
      expect(readFileSync(join(dir, "victim.txt"), "utf8")).toBe("precious\n");
      expect(existsSync(join(dir, "w/.rayrun"))).toBe(false);
    });
  }, 200_000);

  it("gives a call whose alias the door mapped back Claude Code's own permission check: a rewrite grants nothing", async ({ expect }) => {
    let dir = "";
    const asking = scriptedApi([
      () => [{ type: "tool_use", id: "toolu_01", name: "Read", input: { file_path: join(dir, "people.txt") } }],
      (bodies) => {
        const alias = /Dear (\p{Lu}\p{Ll}+ \p{Lu}[\p{L}-]+),/u.exec(bodies.at(-1)!)![1]!;
        return [
          { type: "tool_use", id: "toolu_02", name: "Bash", input: { command: `touch alias-call-ran # ${alias}`, description: "Touch" } },
        ];
      },
      () => [{ type: "text", text: "done" }],
    ]);
    await serving(asking, async () => {
      dir = project();
      // Only Read is allowed: Bash needs the user's approval, which print mode cannot ask for.
      const ran = await runClaude(dir, mkdtempSync(join(tmpdir(), "rayrun-claude-home-")), asking.origin(), "Touch a file.", "Read");
      expect(ran.status, ran.stderr).toBe(0);
      expect(readFileSync(join(dir, "hook-exits.log"), "utf8").trim().split("\n")).toEqual([
        "PreToolUse 0",
        "PostToolUse 0",
        "PreToolUse 0",
        "Stop 0",
        "SessionEnd 0",
      ]);
      // The door rewrote the call (the alias back to the real name), and Claude Code still refused it: it never ran.
      const counts = sessionFile(dir, ran, "counts.json") as { rewritten: number };
      expect(counts.rewritten).toBe(2);
      expect(existsSync(join(dir, "alias-call-ran"))).toBe(false);
      const last = (JSON.parse(asking.bodies[2]!) as { messages: { content: { type: string; content?: string }[] }[] }).messages.at(-1)!;
      expect(last.content.find((block) => block.type === "tool_result")!.content).toContain(
        `touch in '${join(dir, "alias-call-ran")}' needs approval.`,
      );
    });
  }, 200_000);

  it("refuses a call whose rule never answers before Claude Code's own hook timeout would let it run", async ({ expect }) => {
    const slow = scriptedApi([
      () => [{ type: "tool_use", id: "toolu_01", name: "Bash", input: { command: "rm victim.txt; echo ran", description: "Delete" } }],
      () => [{ type: "text", text: "done" }],
    ]);
    await serving(slow, async () => {
      // Claude Code's hook timeout cut to 5 s for the test (its default is 600 s); the guard never settles.
      const dir = project(
        `[[hooks.PreToolUse]]\nmatcher = "^Bash$"\nhandlers = [{ type = "callable", target = "./guard.mjs#slow", timeout = 30 }]\n`,
        5,
      );
      writeFileSync(join(dir, "guard.mjs"), "export const slow = () => new Promise(() => setInterval(() => {}, 1000));\n");
      writeFileSync(join(dir, "victim.txt"), "precious\n");
      const ran = await runClaude(dir, mkdtempSync(join(tmpdir(), "rayrun-claude-home-")), slow.origin(), "Delete it.");
      expect(ran.status, ran.stderr).toBe(0);
      expect(readFileSync(join(dir, "hook-exits.log"), "utf8").trim().split("\n")).toEqual(["PreToolUse 2", "Stop 0", "SessionEnd 0"]);
      expect(readFileSync(join(dir, "victim.txt"), "utf8")).toBe("precious\n");
      const last = (JSON.parse(slow.bodies[1]!) as { messages: { content: { type: string; content?: string }[] }[] }).messages.at(-1)!;
      expect(last.content.find((block) => block.type === "tool_result")!.content).toContain(
        "rayrun hooks run: hook_timeout: the rules did not answer in time (hooks run --timeout, less a margin)",
      );
    });
  }, 200_000);
});
