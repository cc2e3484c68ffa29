// `rayrun hooks run` and `rayrun hooks check`, and the `rayrun/hooks` bundle, as
// users run them: subprocesses on the machine's Node 20 and on Node 22, fed real
// Claude Code hook events (PreToolUse, PostToolUse, Stop) on stdin.
import { spawn, spawnSync } from "node:child_process";
import {
  chmodSync,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { beforeAll, describe, it } from "vitest";

const root = join(import.meta.dirname, "../..");
const bundle = join(root, "cli/dist/rayrun.js");
const example = join(root, "examples/hooks");
/** The machine's own Node 20 (Debian's), and the Node 22 the npm scripts run vitest on. */
const nodes = { "20": "/usr/bin/node", "22": process.execPath };

beforeAll(() => {
  const built = spawnSync(process.execPath, [join(root, "cli/build.ts")], { encoding: "utf8" });
  if (built.status !== 0) throw new Error(built.stderr);
});

/**
 * The environment of a `hooks run` in `dir`: no Claude Code project folder (so the session's first event's cwd
 * anchors it), and the user's state folder, where that is kept, in the test's own folder.
 */
const hookEnv = (dir: string, extra: Record<string, string | undefined> = {}): NodeJS.ProcessEnv => ({
  ...process.env,
  CLAUDE_PROJECT_DIR: undefined,
  XDG_STATE_HOME: join(dir, ".state"),
  ...extra,
});

function rayrun(args: string[], options: { node: string; cwd: string; stdin?: string; env?: NodeJS.ProcessEnv }) {
  const result = spawnSync(options.node, [bundle, ...args], {
    cwd: options.cwd,
    input: options.stdin,
    encoding: "utf8",
    maxBuffer: 64 * 1024 * 1024,
    env: options.env ?? hookEnv(options.cwd),
  });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

/** A copy of the example rules folder, so records and state land in a temp dir. */
function exampleCopy(extra: Record<string, string> = {}): string {
  const dir = mkdtempSync(join(tmpdir(), "rayrun-hooks-"));
  cpSync(example, dir, { recursive: true });
  for (const [name, text] of Object.entries(extra)) writeFileSync(join(dir, name), text);
  return dir;
}

describe("the Node versions", () => {
  it("are really 20 and 22", ({ expect }) => {
    expect(spawnSync(nodes["20"], ["--version"], { encoding: "utf8" }).stdout).toMatch(/^v20\./);
    expect(process.version).toMatch(/^v22\./);
  });
});

// The project's own rules next to the example's: a callable that notes what was read, and a Stop grader.
const projectRules = `
[[hooks.PreToolUse]]
matcher = "^Bash$"
handlers = [{ type = "command", command = "cat > last-event.json" }]

[[hooks.PostToolUse]]
matcher = "^Read$"
handlers = [{ type = "callable", target = "./project.mjs#noteRead", name = "notes" }]

[[hooks.Stop]]
handlers = [{ type = "callable", target = "./project.mjs#grade", name = "grader" }]
`;
const projectModule = `
import { existsSync } from "node:fs";
import { join } from "node:path";
export function noteRead(event) {
  return { additional_context: "read " + event.tool_input.file_path + " (" + event.tool_result.file.numLines + " lines)", findings: [{ check: "read", file: event.tool_input.file_path }] };
}
export function grade(event) {
  if (existsSync(join(event.cwd, "fail-stop"))) return { decision: "deny", reason: "grader says no" };
}
`;

// The example's alias door file and seeds (examples/hooks/alias-hooks.toml), as the project's gateway-hooks.toml.
const aliasRules = readFileSync(join(example, "alias-hooks.toml"), "utf8");
const aliasSeeds = JSON.parse(readFileSync(join(example, "alias-seeds.json"), "utf8")) as unknown[];

for (const [version, node] of Object.entries(nodes)) {
  describe(`rayrun hooks run on Node ${version}`, () => {
    it("reads the rules file once per session: an event after an edit is refused as rules_file_changed, a new session reads the edit", ({
      expect,
    }) => {
      const dir = mkdtempSync(join(tmpdir(), "rayrun-hooks-once-"));
      const rules = join(dir, "gateway-hooks.toml");
      writeFileSync(rules, `[[hooks.PreToolUse]]\nmatcher = "^Bash$"\nhandlers = [{ type = "deny", reason = "no shell" }]\n`);
      const event = (session: string, command: string) =>
        rayrun(["hooks", "run"], {
          node,
          cwd: dir,
          stdin: JSON.stringify({
            session_id: session,
            cwd: dir,
            hook_event_name: "PreToolUse",
            tool_name: "Bash",
            tool_input: { command },
          }),
        });
      expect(event("once-a", "rm -rf build")).toMatchObject({ status: 2, stderr: "no shell\n" });
      // The agent empties the file it can write: the session's rules stay what they were, and the call is refused.
      writeFileSync(rules, "# nothing denied\n");
      const changed = event("once-a", "rm -rf build");
      expect(changed.status).toBe(2);
      expect(changed.stderr).toBe(
        `rayrun hooks run: rules_file_changed: ${rules} changed since this session started; the rules file is read once per session, so start a new session to use it\n`,
      );
      expect(event("once-b", "rm -rf build")).toMatchObject({ status: 0, stdout: "" });
    });

    it("answers PreToolUse, PostToolUse and Stop in Claude Code's own format, keeping the run under .rayrun/hooks/<session>", ({
      expect,
    }) => {
      const dir = exampleCopy({ "project.mjs": projectModule });
      writeFileSync(join(dir, "gateway-hooks.toml"), readFileSync(join(dir, "gateway-hooks.toml"), "utf8") + projectRules);
      const session = "0d9c5b1e-6f0a-4c6b-9a52-3f1f2a7c8e01";
      const common = { session_id: session, transcript_path: join(dir, "transcript.jsonl"), cwd: dir, permission_mode: "default" };
      const hook = (event: object) => rayrun(["hooks", "run"], { node, cwd: dir, stdin: JSON.stringify({ ...common, ...event }) });

      const denied = hook({
        hook_event_name: "PreToolUse",
        tool_name: "Bash",
        tool_input: { command: "rm -rf build", description: "Clean" },
        tool_use_id: "toolu_01",
      });
      expect(denied).toMatchObject({ status: 2, stdout: "" });
      expect(denied.stderr.trim()).toBe("recursive delete refused: rm -rf build");

      const rewritten = hook({
        hook_event_name: "PreToolUse",
        tool_name: "Bash",
        tool_input: { command: "curl https://example.com" },
        tool_use_id: "toolu_02",
      });
      expect(rewritten.status).toBe(0);
      // The rewrite alone: no permissionDecision, so Claude Code still runs its own permission check on the call.
      expect(JSON.parse(rewritten.stdout)).toEqual({
        hookSpecificOutput: {
          hookEventName: "PreToolUse",
          updatedInput: { command: "curl -sS --max-time 20 https://example.com" },
        },
      });

      const read = hook({
        hook_event_name: "PostToolUse",
        tool_name: "Read",
        tool_input: { file_path: "/repo/README.md" },
        tool_response: { type: "text", file: { filePath: "/repo/README.md", content: "# hi", numLines: 1, startLine: 1, totalLines: 1 } },
        tool_use_id: "toolu_03",
      });
      expect(read.status).toBe(0);
      const context = JSON.parse(read.stdout).hookSpecificOutput;
      expect(context.hookEventName).toBe("PostToolUse");
      expect(context.additionalContext).toContain("[hook notes] read /repo/README.md (1 lines)");
      expect(context.additionalContext).toContain("[hook provenance] Read answered in run run-");
      expect(context.updatedToolOutput).toBeUndefined();

      // One run across the processes: the same run id, a key that never reaches a handler.
      const state = JSON.parse(readFileSync(join(dir, ".rayrun/hooks", session, "state.json"), "utf8"));
      const event = JSON.parse(readFileSync(join(dir, "last-event.json"), "utf8"));
      expect(event).toMatchObject({ hook_event_name: "pre_tool_call", run_id: state.run_id, tool_name: "Bash" });
      expect(state.key).toMatch(/^[0-9a-f]{64}$/);
      expect(JSON.stringify(event)).not.toContain(state.key);
      expect(context.additionalContext).toContain(state.run_id);

      const stop = hook({ hook_event_name: "Stop", stop_hook_active: false });
      expect(stop).toMatchObject({ status: 0, stdout: "" });
      const verdict = JSON.parse(readFileSync(join(dir, ".rayrun/hooks", session, "verdict.json"), "utf8"));
      expect(verdict).toMatchObject({
        passed: true,
        findings: [{ check: "read", file: "/repo/README.md", hook: "notes", event: "post_tool_call" }],
      });

      writeFileSync(join(dir, "fail-stop"), "");
      const failed = hook({ hook_event_name: "Stop", stop_hook_active: false });
      expect(failed.status).toBe(2);
      expect(failed.stderr.trim()).toBe("the rules failed the run: grader says no");
      // Claude Code is already continuing because of a Stop hook: say it, do not loop.
      const again = hook({ hook_event_name: "Stop", stop_hook_active: true });
      expect(again.status).toBe(0);
      expect(JSON.parse(again.stdout)).toEqual({ systemMessage: "the rules failed the run: grader says no" });
    });

    it("seeds the alias door from a file: the real name never reaches the agent, the tool still receives it", ({ expect }) => {
      const dir = mkdtempSync(join(tmpdir(), "rayrun-alias-"));
      writeFileSync(join(dir, "gateway-hooks.toml"), aliasRules);
      writeFileSync(join(dir, "seeds.json"), JSON.stringify(aliasSeeds));
      const session = "alias-session-1";
      const common = { session_id: session, transcript_path: join(dir, "transcript.jsonl"), cwd: dir, permission_mode: "default" };
      const hook = (event: object, args: string[] = ["--seed", "seeds.json"]) =>
        rayrun(["hooks", "run", ...args], { node, cwd: dir, stdin: JSON.stringify({ ...common, ...event }) });

      // The page the search returned names the subject; the agent reads it in alias space.
      const post = hook({
        hook_event_name: "PostToolUse",
        tool_name: "WebSearch",
        tool_input: { query: "Matthew Nowell Leeds" },
        tool_response: {
          results: [{ title: "Matthew Nowell - Leeds", snippet: "Contact matthew.nowell@nowell-ltd.com or MATTHEW NOWELL." }],
        },
      });
      expect([post.status, post.stderr]).toEqual([0, ""]);
      const shown = JSON.parse(post.stdout).hookSpecificOutput.updatedToolOutput as { results: { title: string; snippet: string }[] };
      expect(JSON.stringify(shown)).not.toMatch(/nowell/i);
      const alias = shown.results[0]!.title.replace(" - Leeds", "");
      expect(alias).toMatch(/^\p{Lu}\p{Ll}+ \p{Lu}[\p{L}-]+$/u);
      // The record after the alias rule stored the search in alias space too.
      expect(readFileSync(join(dir, "alias-transcript.jsonl"), "utf8")).not.toMatch(/nowell/i);

      // A later process (no --seed: the session kept the seeds) maps the agent's alias back for the tool.
      const pre = hook({ hook_event_name: "PreToolUse", tool_name: "WebSearch", tool_input: { query: `${alias} Leeds` } }, []);
      expect(pre.status).toBe(0);
      expect(JSON.parse(pre.stdout).hookSpecificOutput).toEqual({
        hookEventName: "PreToolUse",
        updatedInput: { query: "Matthew Nowell Leeds" },
      });
      const unknown = hook({ hook_event_name: "PreToolUse", tool_name: "WebSearch", tool_input: { query: "x@nobody.alias" } });
      expect([unknown.status, unknown.stderr.trim()]).toEqual([2, "alias door: a email alias that resolves to no seeded value"]);

      // The agent's answer in alias space passes; the legend is kept for the grader with the session's key.
      const stop = hook({ hook_event_name: "Stop", stop_hook_active: false, last_assistant_message: `${alias} works in Leeds.` });
      expect([stop.status, stop.stderr]).toEqual([0, ""]);
      const state = JSON.parse(readFileSync(join(dir, ".rayrun/hooks", session, "state.json"), "utf8")) as { key: string };
      const legend = JSON.parse(readFileSync(join(dir, ".rayrun/hooks", session, "legend.json"), "utf8")) as {
        run_key: string;
        entries: unknown[];
      };
      expect(legend.run_key).toBe(state.key);
      expect(legend.entries).toContainEqual(expect.objectContaining({ value: "Matthew Nowell", alias }));

      // An answer that names the real person fails the run, naming the kind and place only.
      const leaked = hook({
        hook_event_name: "Stop",
        session_id: "alias-session-2",
        stop_hook_active: false,
        last_assistant_message: "Matthew Nowell works in Leeds.",
      });
      expect(leaked.status).toBe(2);
      expect(leaked.stderr.trim()).toBe(
        "the rules failed the run: alias check: 1 real value(s) reached the report or artifacts (person_name at report.last_assistant_message)",
      );
    });

    it("meters leaks over the whole session: each process adds its counts to the session's counts.json, Stop reports the sum", ({
      expect,
    }) => {
      const dir = mkdtempSync(join(tmpdir(), "rayrun-meter-"));
      // The alias rule guards web searches only, so what Read returns reaches the agent as it is.
      const rules = `[[hooks.PreToolUse]]\nhandlers = [{ type = "alias" }]\n\n[[hooks.PostToolUse]]\nmatcher = "^WebSearch$"\nhandlers = [{ type = "alias" }]\n`;
      writeFileSync(join(dir, "gateway-hooks.toml"), rules);
      writeFileSync(join(dir, "seeds.json"), JSON.stringify(aliasSeeds));
      const session = "meter-session";
      const state = join(dir, ".rayrun/hooks", session);
      const common = { session_id: session, transcript_path: join(dir, "transcript.jsonl"), cwd: dir, permission_mode: "default" };
      const hook = (event: object) =>
        rayrun(["hooks", "run", "--seed", "seeds.json"], { node, cwd: dir, stdin: JSON.stringify({ ...common, ...event }) });
      const read = (content: string) => ({
        hook_event_name: "PostToolUse",
        tool_name: "Read",
        tool_input: { file_path: "/notes.md" },
        tool_response: { type: "text", file: { filePath: "/notes.md", content } },
      });

      const search = hook({
        hook_event_name: "PostToolUse",
        tool_name: "WebSearch",
        tool_input: { query: "Leeds" },
        tool_response: { results: [{ title: "Matthew Nowell - Leeds" }] },
      });
      const alias = (JSON.parse(search.stdout).hookSpecificOutput.updatedToolOutput.results[0].title as string).replace(" - Leeds", "");
      const pre = hook({ hook_event_name: "PreToolUse", tool_name: "WebSearch", tool_input: { query: `${alias} Leeds` } });
      expect(JSON.parse(pre.stdout).hookSpecificOutput.updatedInput).toEqual({ query: "Matthew Nowell Leeds" });
      // Two Read results let a real value through, each in its own process; a third has none.
      for (const content of ["Met MATTHEW   NOWELL on Monday.", "Nothing personal here.", "Write to matthew.nowell@nowell-ltd.com"])
        expect(hook(read(content))).toMatchObject({ status: 0, stdout: "", stderr: "" });

      // Between the processes the session keeps counts only: no value, owner-only, written whole (no temp or lock left).
      const kept = readFileSync(join(state, "counts.json"), "utf8");
      expect(JSON.parse(kept)).toEqual({ calls: 1, requests: 0, denied: 0, rewritten: 2, leak_through_inbound: 2 });
      expect(kept).not.toMatch(/nowell/i);
      expect(statSync(join(state, "counts.json")).mode & 0o777).toBe(0o600);
      expect(readdirSync(state).filter((name) => name.startsWith("counts") || name.endsWith(".lock"))).toEqual(["counts.json"]);

      const stop = hook({ hook_event_name: "Stop", stop_hook_active: false });
      expect([stop.status, stop.stderr]).toEqual([0, ""]);
      const verdict = JSON.parse(readFileSync(join(state, "verdict.json"), "utf8"));
      expect(verdict.summary).toMatchObject({ calls: 1, denied: 0, rewritten: 2, leak_through_inbound: 2, ended: true });
      // A second end adds nothing twice.
      hook({ hook_event_name: "SessionEnd", reason: "exit" });
      expect(JSON.parse(readFileSync(join(state, "verdict.json"), "utf8")).summary.leak_through_inbound).toBe(2);
    });

    it("refuses an unknown hook_event_name and fails closed on a broken rules file", ({ expect }) => {
      const dir = exampleCopy();
      const unknown = rayrun(["hooks", "run"], {
        node,
        cwd: dir,
        stdin: JSON.stringify({ session_id: "s1", cwd: dir, hook_event_name: "UserPromptSubmit", prompt: "hi" }),
      });
      expect(unknown.status).toBe(1);
      expect(unknown.stderr).toContain("rayrun hooks run: unknown_hook_event:");
      writeFileSync(join(dir, "broken.toml"), `[[hooks.PreToolUse]]\nhandlers = [{ type = "deny", because = "x" }]\n`);
      const broken = rayrun(["hooks", "run", "--config", "broken.toml"], {
        node,
        cwd: dir,
        stdin: JSON.stringify({
          session_id: "s1",
          cwd: dir,
          hook_event_name: "PreToolUse",
          tool_name: "Bash",
          tool_input: { command: "ls" },
        }),
      });
      expect(broken.status).toBe(2);
      expect(broken.stderr).toMatch(
        /^rayrun hooks run: rules_unknown_key: \/.*\/broken\.toml:2: hooks\.PreToolUse\[0\]\.handlers\[0\]\.because: unknown key/,
      );
      const noSession = rayrun(["hooks", "run"], {
        node,
        cwd: dir,
        stdin: JSON.stringify({ hook_event_name: "Stop", session_id: "../x" }),
      });
      expect(noSession.status).toBe(2);
      expect(noSession.stderr).toContain("invalid_session_id");
    });
  });

  describe(`rayrun hooks check on Node ${version}`, () => {
    it("reports the example file as JSON, with a real sample run through its matching rules", ({ expect }) => {
      const dir = exampleCopy();
      const report = rayrun(["hooks", "check", "gateway-hooks.toml", "--json"], { node, cwd: dir });
      expect(report.status).toBe(0);
      const parsed = JSON.parse(report.stdout);
      expect(parsed).toMatchObject({ file: "gateway-hooks.toml", ok: true, problems: [], vendors: { search: "web_search | websearch" } });
      expect(parsed.rules.map((rule: { event: string }) => rule.event)).toEqual([
        "pre_tool_call",
        "pre_tool_call",
        "post_tool_call",
        "post_tool_call",
        "run_end",
      ]);
      expect(parsed.sample).toMatchObject({ event: "pre_tool_call", tool_name: "example_tool", matched_rules: 0, decision: "allow" });

      const deny = JSON.parse(
        rayrun(["hooks", "check", "gateway-hooks.toml", "--tool", "Bash", "--input", '{"command":"rm -rf /"}', "--json"], {
          node,
          cwd: dir,
        }).stdout,
      );
      expect(deny.sample).toMatchObject({ matched_rules: 1, decision: "deny", reason: "recursive delete refused: rm -rf /" });
      const cap = JSON.parse(
        rayrun(["hooks", "check", "gateway-hooks.toml", "--tool", "web_search", "--input", '{"query":"x"}', "--json"], { node, cwd: dir })
          .stdout,
      );
      expect(cap.sample).toMatchObject({
        decision: "rewrite",
        rewritten: { tool_input: { query: "x", max_results: 50 } },
        contexts: ["[hook cap] capped at 50 results"],
      });
      const post = JSON.parse(
        rayrun(["hooks", "check", "gateway-hooks.toml", "--event", "PostToolUse", "--tool", "web_search", "--json"], { node, cwd: dir })
          .stdout,
      );
      expect(post.sample.contexts).toEqual([expect.stringMatching(/^\[hook provenance\] web_search answered in run run-/)]);
    });

    it("writes no real sink: a record handler's line is shown, not appended; --result supplies the sample's tool_result", ({ expect }) => {
      const dir = exampleCopy();
      const result = { hits: [{ title: "Release 1.2" }] };
      const check = rayrun(
        [
          "hooks",
          "check",
          "gateway-hooks.toml",
          "--event",
          "PostToolUse",
          "--tool",
          "web_search",
          "--result",
          JSON.stringify(result),
          "--json",
        ],
        { node, cwd: dir },
      );
      expect([check.status, check.stderr]).toEqual([0, ""]);
      const report = JSON.parse(check.stdout);
      // The example's record rule (sink runs/{run_id}/transcript.jsonl) would have written this line; nothing was.
      expect(report.sample.records).toEqual([
        {
          sink: expect.stringMatching(/\/runs\/run-[0-9a-f]{6}\/transcript\.jsonl$/),
          line: expect.objectContaining({ event: "post_tool_call", source: "example", tool_name: "web_search", tool_result: result }),
        },
      ]);
      expect(existsSync(join(dir, "runs"))).toBe(false);
      const text = rayrun(["hooks", "check", "gateway-hooks.toml", "--event", "post_tool_call", "--result", "null"], { node, cwd: dir });
      expect(text.stdout).toMatch(/\n {2}record \(not written\) → .*transcript\.jsonl: \{.*"tool_result":null/);
      expect(existsSync(join(dir, "runs"))).toBe(false);
      const misplaced = rayrun(["hooks", "check", "gateway-hooks.toml", "--result", "{}", "--json"], { node, cwd: dir });
      expect([misplaced.status, JSON.parse(misplaced.stdout)]).toEqual([
        2,
        { error: { code: "usage", message: "--result is for post_tool_call, post_response or run_end, not pre_tool_call" } },
      ]);
      const notJson = rayrun(["hooks", "check", "gateway-hooks.toml", "--event", "run_end", "--result", "{", "--json"], { node, cwd: dir });
      expect([notJson.status, JSON.parse(notJson.stdout).error.message]).toEqual([2, "--result must be JSON"]);
    });

    it("seeds the alias door with --seed before the sample, and names a bad seed file", ({ expect }) => {
      const dir = mkdtempSync(join(tmpdir(), "rayrun-alias-"));
      writeFileSync(join(dir, "gateway-hooks.toml"), aliasRules);
      writeFileSync(join(dir, "seeds.json"), JSON.stringify(aliasSeeds));
      writeFileSync(join(dir, "bad-seeds.json"), JSON.stringify([{ type: "email", value: "nobody" }]));
      const check = (...args: string[]) => rayrun(["hooks", "check", "gateway-hooks.toml", "--json", ...args], { node, cwd: dir });
      const seeded = check("--seed", "seeds.json", "--event", "PostToolUse", "--input", JSON.stringify({ who: "Matthew Nowell" }));
      expect(seeded.status).toBe(0);
      const report = JSON.parse(seeded.stdout);
      expect(report).toMatchObject({ ok: true, seeded: 3, sample: { event: "post_tool_call", decision: "rewrite" } });
      expect(report.sample.rewritten.tool_input.who).toMatch(/^\p{Lu}\p{Ll}+ \p{Lu}[\p{L}-]+$/u);
      expect(seeded.stdout).not.toMatch(/Matthew Nowell"/);
      const bad = check("--seed", "bad-seeds.json");
      expect(bad.status).toBe(1);
      expect(JSON.parse(bad.stdout).problems).toEqual([
        { code: "rules_alias_bad_seed", message: "seed 0: an email needs one @ and a domain with a dot" },
      ]);
    });

    it("exits 1 on a failing handler, two rewriters or an invalid file, naming each problem", ({ expect }) => {
      const dir = exampleCopy({
        "failing.toml": `[[hooks.pre_tool_call]]\nhandlers = [{ type = "command", name = "lint", command = "echo nope >&2; exit 5" }]\n`,
        "two.toml": `[[hooks.pre_tool_call]]\nhandlers = [\n  { type = "callable", target = "./guards.mjs#capResults", name = "a" },\n  { type = "callable", target = "./guards.mjs#capResults", name = "b" },\n]\n`,
        "invalid.toml": `[vendors]\nsearch = 3\n`,
      });
      const failing = rayrun(["hooks", "check", "failing.toml", "--json"], { node, cwd: dir });
      expect(failing.status).toBe(1);
      expect(JSON.parse(failing.stdout).problems).toEqual([{ code: "hook_exit", hook: "lint", message: "lint exited 5: nope" }]);
      const two = rayrun(["hooks", "check", "two.toml", "--json"], { node, cwd: dir });
      expect(two.status).toBe(1);
      expect(JSON.parse(two.stdout).problems).toEqual([
        { code: "hook_two_rewriters", message: expect.stringContaining("hooks a and b both rewrote pre_tool_call") },
      ]);
      const invalid = rayrun(["hooks", "check", "invalid.toml"], { node, cwd: dir });
      expect(invalid.status).toBe(1);
      expect(invalid.stdout).toContain("problem rules_wrong_type: invalid.toml:2: vendors.search: must be a string");
      const usage = rayrun(["hooks", "check", "gateway-hooks.toml", "--input", "[1]", "--json"], { node, cwd: dir });
      expect(usage.status).toBe(2);
      expect(JSON.parse(usage.stdout)).toEqual({ error: { code: "usage", message: "--input must be a JSON object" } });
      const event = rayrun(["hooks", "check", "gateway-hooks.toml", "--event", "BeforeTool", "--json"], { node, cwd: dir });
      expect([event.status, JSON.parse(event.stdout)]).toEqual([
        2,
        { error: { code: "usage", message: "--event BeforeTool is not an event" } },
      ]);
    });
  });

  describe(`the rayrun/hooks bundle on Node ${version}`, () => {
    it("imports by its package name and wraps tools with the example's rules", ({ expect }) => {
      const dir = exampleCopy({
        "agent.mjs": `
import { HookRun, HookDenied } from "rayrun/hooks";
const run = await HookRun.fromConfig("gateway-hooks.toml");
const tools = run.wrapTools({ web_search: async (input) => ({ results: input.max_results }), Bash: async () => "ran" });
const out = { search: await tools.web_search({ query: "q", max_results: 500 }) };
try { await tools.Bash({ command: "rm -rf /" }); } catch (error) { out.denied = error instanceof HookDenied && error.reason; }
out.verdict = await run.end({ failed_checks: ["citations"] });
console.log(JSON.stringify(out));
`,
      });
      mkdirSync(join(dir, "node_modules"));
      symlinkSync(join(root, "cli"), join(dir, "node_modules/rayrun"));
      const result = spawnSync(node, ["agent.mjs"], { cwd: dir, encoding: "utf8" });
      expect(result.stderr).toBe("");
      const out = JSON.parse(result.stdout);
      expect(out.search).toEqual({
        results: 50,
        hook_context: ["[hook cap] capped at 50 results", expect.stringMatching(/^\[hook provenance\] web_search answered/)],
      });
      expect(out.denied).toBe("recursive delete refused: rm -rf /");
      expect(out.verdict).toMatchObject({
        passed: false,
        reasons: ["1 check(s) failed"],
        findings: [{ check: "citations", hook: "checks", event: "run_end" }],
      });
      expect(existsSync(join(dir, "runs"))).toBe(true);
    });
  });
}

describe("rayrun hooks run, parallel events of one session", () => {
  it("lose no count: processes that end together take turns on counts.json", async ({ expect }) => {
    const dir = mkdtempSync(join(tmpdir(), "rayrun-parallel-"));
    writeFileSync(join(dir, "gateway-hooks.toml"), `[[hooks.PreToolUse]]\nhandlers = [{ type = "alias" }]\n`);
    writeFileSync(join(dir, "seeds.json"), JSON.stringify(aliasSeeds));
    const event = (n: number) =>
      JSON.stringify({
        session_id: "parallel-session",
        cwd: dir,
        hook_event_name: "PostToolUse",
        tool_name: "Read",
        tool_input: { file_path: `/notes-${n}.md` },
        tool_response: { content: `note ${n}: call Matthew Nowell` },
      });
    // The first event writes the session's state; then six at once, as Claude Code runs parallel tool calls' hooks.
    expect(rayrun(["hooks", "run", "--seed", "seeds.json"], { node: nodes["22"], cwd: dir, stdin: event(0) }).status).toBe(0);
    const codes = await Promise.all(
      [1, 2, 3, 4, 5, 6].map(
        (n) =>
          new Promise<number | null>((resolve) => {
            const child = spawn(nodes["22"], [bundle, "hooks", "run"], {
              cwd: dir,
              env: hookEnv(dir),
              stdio: ["pipe", "ignore", "ignore"],
            });
            child.on("close", resolve);
            child.stdin.end(event(n));
          }),
      ),
    );
    expect(codes).toEqual([0, 0, 0, 0, 0, 0]);
    const counts = JSON.parse(readFileSync(join(dir, ".rayrun/hooks/parallel-session/counts.json"), "utf8"));
    expect(counts.leak_through_inbound).toBe(7);
    expect(
      readdirSync(join(dir, ".rayrun/hooks/parallel-session")).filter((name) => name.startsWith("counts") || name.endsWith(".lock")),
    ).toEqual(["counts.json"]);
  });
});

/** `hooks run` as a real process, spawned (not spawnSync) so several run at once. */
function hookProcess(
  dir: string,
  event: object | string,
  args: string[] = [],
): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(nodes["22"], [bundle, "hooks", "run", ...args], { cwd: dir, env: hookEnv(dir), stdio: ["pipe", "pipe", "pipe"] });
    const output = { stdout: "", stderr: "" };
    child.stdout.on("data", (chunk: Buffer) => (output.stdout += chunk.toString("utf8")));
    child.stderr.on("data", (chunk: Buffer) => (output.stderr += chunk.toString("utf8")));
    child.on("close", (status) => resolve({ status, ...output }));
    child.stdin.end(typeof event === "string" ? event : JSON.stringify(event));
  });
}

const modeOf = (path: string) => statSync(path).mode & 0o777;

/** The PostToolUse answer of an event rayrun refused: blocked, and the model reads `[withheld: code]` instead of the output. */
const blocked = (reason: unknown, code: string) => ({
  decision: "block",
  reason,
  hookSpecificOutput: {
    hookEventName: "PostToolUse",
    updatedToolOutput: `[withheld: ${code}]`,
    updatedMCPToolOutput: `[withheld: ${code}]`,
  },
});

describe("rayrun hooks run, the session's files", () => {
  // Every kind of run file: findings, a hook error, an async answer, seeds, counts, the verdict and the legend.
  const rules = `
[[hooks.PreToolUse]]
handlers = [{ type = "alias" }]

[[hooks.PostToolUse]]
handlers = [
  { type = "callable", target = "./rules.mjs#note", name = "note" },
  { type = "callable", target = "./rules.mjs#broken", name = "broken" },
  { type = "callable", target = "./rules.mjs#note", name = "later", async = true },
]

[[hooks.Stop]]
handlers = [{ type = "alias", check = "outgoing" }]
`;
  const module = `
export function note(event) {
  return { findings: [{ check: "seen", n: event.tool_input.n, payload: String(event.tool_input.n).repeat(event.tool_input.size ?? 1) }] };
}
export function broken() {
  throw new Error("no budget");
}
`;
  function project(): string {
    const dir = mkdtempSync(join(tmpdir(), "rayrun-files-"));
    writeFileSync(join(dir, "gateway-hooks.toml"), rules);
    writeFileSync(join(dir, "rules.mjs"), module);
    writeFileSync(join(dir, "seeds.json"), JSON.stringify(aliasSeeds));
    return dir;
  }
  const read = (dir: string, session: string, n: number, size?: number) => ({
    session_id: session,
    cwd: dir,
    hook_event_name: "PostToolUse",
    tool_name: "Read",
    tool_input: { file_path: `/notes-${n}.md`, n, size },
    tool_response: { content: `note ${n}` },
  });

  it("are the owner's alone: the folders it makes 0700, every file 0600", async ({ expect }) => {
    const dir = project();
    const state = join(dir, ".rayrun/hooks/private-session");
    expect((await hookProcess(dir, read(dir, "private-session", 1), ["--seed", "seeds.json"])).status).toBe(0);
    const stop = await hookProcess(dir, { session_id: "private-session", cwd: dir, hook_event_name: "Stop", stop_hook_active: false });
    expect([stop.status, stop.stderr]).toEqual([0, ""]);
    const files = readdirSync(state).sort();
    expect(files).toEqual([
      "async.jsonl",
      "counts.json",
      "errors.jsonl",
      "findings.jsonl",
      "legend.json",
      "seeds.json",
      "state.json",
      "verdict.json",
    ]);
    expect(Object.fromEntries(files.map((name) => [name, modeOf(join(state, name))]))).toEqual(
      Object.fromEntries(files.map((name) => [name, 0o600])),
    );
    for (const folder of [".rayrun", ".rayrun/hooks", ".rayrun/hooks/private-session"]) expect(modeOf(join(dir, folder))).toBe(0o700);
    expect(JSON.parse(readFileSync(join(state, "errors.jsonl"), "utf8"))).toMatchObject({ hook: "broken", code: "hook_threw" });
  });

  it("tighten a folder and files an earlier version left readable by others, keeping what they hold", async ({ expect }) => {
    const dir = project();
    const state = join(dir, ".rayrun/hooks/old-session");
    mkdirSync(state, { recursive: true, mode: 0o755 });
    chmodSync(state, 0o755);
    const earlier = { check: "seen", n: 0, payload: "0", hook: "note", event: "post_tool_call" };
    writeFileSync(join(state, "findings.jsonl"), `${JSON.stringify(earlier)}\n`, { mode: 0o644 });
    // A verdict as versions before run_end events were recorded wrote it: one end, passed.
    writeFileSync(
      join(state, "verdict.json"),
      `${JSON.stringify({ passed: true, reasons: [], findings: [], ended_at: "2026-01-01T00:01:00.000Z" })}\n`,
      {
        mode: 0o644,
      },
    );
    writeFileSync(join(state, "legend.json"), "{}\n", { mode: 0o666 });
    chmodSync(join(state, "legend.json"), 0o666);
    const key = "ab".repeat(32);
    writeFileSync(join(state, "state.json"), JSON.stringify({ run_id: "run-0ld000", key, started_at: "2026-01-01T00:00:00.000Z" }), {
      mode: 0o644,
    });

    expect((await hookProcess(dir, read(dir, "old-session", 1), ["--seed", "seeds.json"])).status).toBe(0);
    expect(modeOf(state)).toBe(0o700);
    for (const name of readdirSync(state)) expect([name, modeOf(join(state, name))]).toEqual([name, 0o600]);
    // Tightened, not replaced: the session keeps its key and its earlier finding.
    expect(JSON.parse(readFileSync(join(state, "state.json"), "utf8")).key).toBe(key);
    await hookProcess(dir, { session_id: "old-session", cwd: dir, hook_event_name: "Stop", stop_hook_active: false });
    const verdict = JSON.parse(readFileSync(join(state, "verdict.json"), "utf8"));
    expect(verdict.findings.map((finding: { n: number }) => finding.n)).toEqual([0, 1]);
    expect(verdict.ends.map((end: { event: string; at: string }) => [end.event, end.at.slice(0, 4)])).toEqual([
      ["run_end", "2026"],
      ["Stop", expect.stringMatching(/^\d{4}$/)],
    ]);
    expect(JSON.parse(readFileSync(join(state, "legend.json"), "utf8")).run_key).toBe(key);
    expect([modeOf(join(state, "verdict.json")), modeOf(join(state, "legend.json"))]).toEqual([0o600, 0o600]);
  });

  it("refuse a symlink in the session folder (or as it) instead of writing through it: PreToolUse exit 2", async ({ expect }) => {
    const dir = project();
    const state = join(dir, ".rayrun/hooks/linked-session");
    mkdirSync(state, { recursive: true });
    const elsewhere = join(dir, "elsewhere.txt");
    writeFileSync(elsewhere, "not a run file\n", { mode: 0o644 });
    symlinkSync(elsewhere, join(state, "findings.jsonl"));
    const pre = { session_id: "linked-session", cwd: dir, hook_event_name: "PreToolUse", tool_name: "Read", tool_input: { n: 1 } };
    const refused = await hookProcess(dir, pre);
    expect([refused.status, refused.stdout, refused.stderr.trim()]).toEqual([
      2,
      "",
      `rayrun hooks run: run_state_unsafe: ${join(state, "findings.jsonl")} is not a regular file (a symlink is never followed)`,
    ]);
    // After the tool ran: blocked, its output withheld (exit 1 would leave the model the real output).
    const post = await hookProcess(dir, read(dir, "linked-session", 1));
    const unsafe = `rayrun hooks run: run_state_unsafe: ${join(state, "findings.jsonl")} is not a regular file (a symlink is never followed)`;
    expect([post.status, JSON.parse(post.stdout), post.stderr.trim()]).toEqual([0, blocked(unsafe, "run_state_unsafe"), unsafe]);
    expect([readFileSync(elsewhere, "utf8"), modeOf(elsewhere)]).toEqual(["not a run file\n", 0o644]);

    // The session folder itself a link to another folder.
    const other = mkdtempSync(join(tmpdir(), "rayrun-other-"));
    symlinkSync(other, join(dir, ".rayrun/hooks/pointed-session"));
    const pointed = await hookProcess(dir, { ...pre, session_id: "pointed-session" });
    expect([pointed.status, pointed.stderr.trim()]).toEqual([
      2,
      `rayrun hooks run: run_state_unsafe: ${join(dir, ".rayrun/hooks/pointed-session")} is not a directory (a symlink is never followed)`,
    ]);
    expect(readdirSync(other)).toEqual([]);
  });

  it("lose and interleave no line: parallel processes of one session append in turn", async ({ expect }) => {
    const dir = project();
    const state = join(dir, ".rayrun/hooks/busy-session");
    expect((await hookProcess(dir, read(dir, "busy-session", 0), ["--seed", "seeds.json"])).status).toBe(0);
    // Each process appends a 600 kB finding (more than one write), a hook error and an async answer, all at once.
    const size = 600_000;
    const parallel = [1, 2, 3, 4, 5, 6, 7, 8];
    const results = await Promise.all(parallel.map((n) => hookProcess(dir, read(dir, "busy-session", n, size))));
    expect(results.map((result) => result.status)).toEqual(parallel.map(() => 0));
    const lines = (name: string) => readFileSync(join(state, name), "utf8").split("\n");
    for (const name of ["findings.jsonl", "errors.jsonl", "async.jsonl"]) {
      const rows = lines(name);
      // N + the first event's line, each whole, and the file ends with a newline.
      expect([name, rows.length, rows.at(-1)]).toEqual([name, parallel.length + 2, ""]);
      for (const row of rows.slice(0, -1)) expect(() => JSON.parse(row)).not.toThrow();
    }
    const findings = lines("findings.jsonl")
      .slice(0, -1)
      .map((row) => JSON.parse(row) as { n: number; payload: string });
    expect(findings.map((finding) => finding.n).sort()).toEqual([0, ...parallel]);
    for (const finding of findings) expect(finding.payload).toBe(String(finding.n).repeat(finding.n === 0 ? 1 : size));
    const asyncNs = lines("async.jsonl")
      .slice(0, -1)
      .map((row) => (JSON.parse(row) as { answer: { findings: { n: number }[] } }).answer.findings[0]!.n);
    expect(asyncNs.sort()).toEqual([0, ...parallel]);
    expect(readdirSync(state).filter((name) => name.includes("lock") || name.endsWith(".tmp"))).toEqual([]);

    // The session's end reads all of it: every process's finding is in the verdict.
    await hookProcess(dir, { session_id: "busy-session", cwd: dir, hook_event_name: "Stop", stop_hook_active: false });
    const verdict = JSON.parse(readFileSync(join(state, "verdict.json"), "utf8"));
    expect([verdict.findings.length, verdict.errors.length, verdict.summary.async_answers]).toEqual([9, 9, 9]);
  });
});

describe("rayrun hooks run, an unforeseen failure", () => {
  it("refuses the guarded call (exit 2 on PreToolUse, a block with the output withheld after it) when the session's state is damaged", ({
    expect,
  }) => {
    const dir = mkdtempSync(join(tmpdir(), "rayrun-damaged-"));
    writeFileSync(
      join(dir, "gateway-hooks.toml"),
      `[[hooks.PreToolUse]]\nmatcher = "^Bash$"\nhandlers = [{ type = "deny", reason = "no shell" }]\n`,
    );
    const session = "damaged-session";
    const common = { session_id: session, transcript_path: join(dir, "transcript.jsonl"), cwd: dir, permission_mode: "default" };
    const hook = (event: object) =>
      rayrun(["hooks", "run"], { node: nodes["22"], cwd: dir, stdin: JSON.stringify({ ...common, ...event }) });
    const read = { hook_event_name: "PreToolUse", tool_name: "Read", tool_input: { file_path: "/notes.md" } };
    expect(hook(read)).toMatchObject({ status: 0 });
    writeFileSync(join(dir, ".rayrun/hooks", session, "state.json"), "{ not json", { mode: 0o600 });
    const pre = hook(read);
    expect(pre.status).toBe(2);
    expect(pre.stderr).toMatch(/^rayrun hooks run: hooks_run_failed: unexpected failure: /);
    const post = hook({
      ...read,
      hook_event_name: "PostToolUse",
      tool_response: { type: "text", file: { filePath: "/notes.md", content: "x" } },
    });
    expect(post.status).toBe(0);
    expect(JSON.parse(post.stdout)).toEqual(blocked(expect.stringMatching(/^rayrun hooks run: hooks_run_failed: /), "hooks_run_failed"));

    // A damaged line of what the session found is not read as nothing found.
    rmSync(join(dir, ".rayrun/hooks", session), { recursive: true });
    expect(hook(read)).toMatchObject({ status: 0 });
    writeFileSync(join(dir, ".rayrun/hooks", session, "findings.jsonl"), '{"check":"seen"}\n{"check": \n', { mode: 0o600 });
    const damaged = hook(read);
    expect(damaged.status).toBe(2);
    expect(damaged.stderr).toContain("findings.jsonl: line 2 is not JSON; the session's record is damaged");
  });
});

describe("rayrun hooks run, what a PostToolUse rule tells the model", () => {
  it("crosses the alias door and the meter like the tool's output: context and a denial's reason", async ({ expect }) => {
    const dir = mkdtempSync(join(tmpdir(), "rayrun-post-texts-"));
    // Rules that echo what the tool returned (the real name) back to the model. An alias rule guards
    // WebSearch (the echo runs before it, so it sees real values) and Fetch (where the deny comes first); none guards Read.
    writeFileSync(
      join(dir, "gateway-hooks.toml"),
      `
[[hooks.PostToolUse]]
matcher = "^(WebSearch|Read)$"
handlers = [{ type = "callable", target = "./echo.mjs#echo", name = "echo" }]

[[hooks.PostToolUse]]
matcher = "^Fetch$"
handlers = [{ type = "callable", target = "./echo.mjs#refuse", name = "refuse" }]

[[hooks.PostToolUse]]
matcher = "^(WebSearch|Fetch)$"
handlers = [{ type = "alias" }]
`,
    );
    writeFileSync(
      join(dir, "echo.mjs"),
      `export const echo = (event) => ({ additional_context: "top hit: " + event.tool_result.title });
export const refuse = (event) => ({ decision: "deny", reason: "this page is about " + event.tool_result.title });
`,
    );
    writeFileSync(join(dir, "seeds.json"), JSON.stringify(aliasSeeds));
    const session = "post-texts";
    const state = join(dir, ".rayrun/hooks", session);
    const post = (tool_name: string) =>
      hookProcess(
        dir,
        {
          session_id: session,
          cwd: dir,
          hook_event_name: "PostToolUse",
          tool_name,
          tool_input: {},
          tool_response: { title: "Matthew Nowell" },
        },
        ["--seed", "seeds.json"],
      );
    const leaks = () => JSON.parse(readFileSync(join(state, "counts.json"), "utf8")).leak_through_inbound as number;

    const search = await post("WebSearch");
    expect([search.status, search.stderr]).toEqual([0, ""]);
    const alias = JSON.parse(search.stdout).hookSpecificOutput.updatedToolOutput.title as string;
    expect(alias).toMatch(/^\p{Lu}\p{Ll}+ \p{Lu}[\p{L}-]+$/u);
    expect(alias).not.toMatch(/nowell/i);
    expect(JSON.parse(search.stdout)).toEqual({
      hookSpecificOutput: {
        hookEventName: "PostToolUse",
        updatedToolOutput: { title: alias },
        updatedMCPToolOutput: { title: alias },
        additionalContext: `[hook echo] top hit: ${alias}`,
      },
    });
    expect(leaks()).toBe(0);

    // Denied before the alias rule ran: the reason is in alias space all the same, and the answer blocks with the output
    // in alias space too (exit 2 could not replace it, and the model would read the tool's own output).
    const fetched = await post("Fetch");
    expect([fetched.status, fetched.stderr]).toEqual([0, ""]);
    expect(JSON.parse(fetched.stdout)).toEqual({
      decision: "block",
      reason: `this page is about ${alias}`,
      hookSpecificOutput: { hookEventName: "PostToolUse", updatedToolOutput: { title: alias }, updatedMCPToolOutput: { title: alias } },
    });
    expect(leaks()).toBe(0);

    // No alias rule guards Read: output and context reach the model as they are, and both real names are counted.
    const read = await post("Read");
    expect(JSON.parse(read.stdout)).toEqual({
      hookSpecificOutput: { hookEventName: "PostToolUse", additionalContext: "[hook echo] top hit: Matthew Nowell" },
    });
    expect(leaks()).toBe(2);

    const stop = await hookProcess(dir, { session_id: session, cwd: dir, hook_event_name: "Stop", stop_hook_active: false });
    expect([stop.status, stop.stderr]).toEqual([0, ""]);
    expect(JSON.parse(readFileSync(join(state, "verdict.json"), "utf8")).summary).toMatchObject({ leak_through_inbound: 2, denied: 1 });
  });
});

describe("rayrun hooks run, a failed tool's output (PostToolUseFailure)", () => {
  /** A session whose rules are the alias example's, with a rule that rewrites one tool's errors and one that refuses another's. */
  function failureProject() {
    const dir = mkdtempSync(join(tmpdir(), "rayrun-failure-"));
    const rules = `${aliasRules}
[[hooks.PostToolUse]]
matcher = "^Redact$"
handlers = [{ type = "callable", target = "./rules.mjs#redact", name = "redact" }]

[[hooks.PostToolUse]]
matcher = "^Guarded$"
handlers = [{ type = "callable", target = "./rules.mjs#refuse", name = "refuse" }]
`;
    writeFileSync(join(dir, "gateway-hooks.toml"), rules);
    writeFileSync(
      join(dir, "rules.mjs"),
      `export const redact = (event) => ({ decision: "rewrite", updated_error: event.error.replace(/s3cr3t/g, "[secret]") });
export const refuse = (event) => ({ decision: "deny", reason: "refused: " + event.error });
`,
    );
    writeFileSync(join(dir, "seeds.json"), JSON.stringify(aliasSeeds));
    return dir;
  }
  const failed = (session: string, dir: string, tool_name: string, error: unknown) => ({
    session_id: session,
    cwd: dir,
    hook_event_name: "PostToolUseFailure",
    tool_name,
    tool_input: { command: "cat people.txt; exit 1" },
    tool_use_id: "toolu_02",
    error,
    is_interrupt: false,
  });
  const told = (reason: string) =>
    `[hook rayrun] the output of this failed call could not be guarded: ${reason}. The run has failed. Do not repeat or use what it names.`;

  it("counts a real value in the error text as a leak, tells the model, and fails the run at once; a later Stop keeps it failed", async ({
    expect,
  }) => {
    const dir = failureProject();
    const session = "failure-leak";
    const state = join(dir, ".rayrun/hooks", session);
    const reason = "alias: 1 real value(s) (person_name) reached the model in Bash's failed output, which no hook can replace";
    const leak = await hookProcess(dir, failed(session, dir, "Bash", "Exit code 1\nDear Matthew Nowell,"), ["--seed", "seeds.json"]);
    expect([leak.status, leak.stderr]).toEqual([0, ""]);
    // Claude Code takes only additionalContext from this event: the model reads the error as it was, and this beside it.
    expect(JSON.parse(leak.stdout)).toEqual({
      hookSpecificOutput: { hookEventName: "PostToolUseFailure", additionalContext: told(reason) },
    });
    expect(JSON.parse(readFileSync(join(state, "counts.json"), "utf8"))).toMatchObject({ leak_through_inbound: 1 });
    const verdict = JSON.parse(readFileSync(join(state, "verdict.json"), "utf8"));
    expect(verdict).toMatchObject({
      passed: false,
      reasons: [reason],
      ends: [{ event: "PostToolUseFailure", passed: false, reasons: [reason] }],
      findings: [{ check: "alias_leak", kind: "person_name", where: "PostToolUseFailure Bash error", count: 1, hook: "rayrun" }],
    });
    expect(JSON.stringify(verdict)).not.toMatch(/nowell/i);
    // The record rule after the alias rule logged the failure in alias space, as it logs a PostToolUse.
    const record = readFileSync(join(dir, "alias-transcript.jsonl"), "utf8");
    expect(record).toContain('"error":"Exit code 1\\nDear ');
    expect(record).not.toMatch(/nowell/i);

    // The Stop's own check passes, but the run failed earlier: the user is told, the model is not asked again.
    const stop = await hookProcess(dir, { session_id: session, cwd: dir, hook_event_name: "Stop", stop_hook_active: false });
    expect([stop.status, stop.stderr]).toEqual([0, ""]);
    expect(JSON.parse(stop.stdout)).toEqual({ systemMessage: `the rules failed the run: ${reason}` });
    const ended = JSON.parse(readFileSync(join(state, "verdict.json"), "utf8"));
    expect(ended.ends.map((end: { event: string; passed: boolean }) => [end.event, end.passed])).toEqual([
      ["PostToolUseFailure", false],
      ["Stop", true],
    ]);
    expect(ended.summary).toMatchObject({ leak_through_inbound: 1, ended: true });
  });

  it("passes an error with no real value untouched, and fails the run on a rewrite Claude Code cannot apply", async ({ expect }) => {
    const dir = failureProject();
    const session = "failure-clean";
    const state = join(dir, ".rayrun/hooks", session);
    const clean = await hookProcess(dir, failed(session, dir, "Bash", "Exit code 1\nno such file"), ["--seed", "seeds.json"]);
    expect(clean).toEqual({ status: 0, stdout: "", stderr: "" });
    expect(existsSync(join(state, "verdict.json"))).toBe(false);
    expect(JSON.parse(readFileSync(join(state, "counts.json"), "utf8"))).toMatchObject({ leak_through_inbound: 0 });

    const reason = "a rule rewrote Redact's failed output, which no hook can replace: the model read it as it was";
    const redacted = await hookProcess(dir, failed(session, dir, "Redact", "token s3cr3t refused"));
    expect([redacted.status, redacted.stderr]).toEqual([0, ""]);
    expect(JSON.parse(redacted.stdout)).toEqual({
      hookSpecificOutput: { hookEventName: "PostToolUseFailure", additionalContext: told(reason) },
    });
    expect(JSON.parse(readFileSync(join(state, "verdict.json"), "utf8"))).toMatchObject({ passed: false, reasons: [reason] });
  });

  it("shows a rule's denial beside the output (exit 2, in alias space), and refuses what it cannot read with exit 2", async ({
    expect,
  }) => {
    const dir = failureProject();
    const session = "failure-deny";
    const denied = await hookProcess(dir, failed(session, dir, "Guarded", "Matthew Nowell"), ["--seed", "seeds.json"]);
    expect(denied.status).toBe(2);
    const [first, second] = denied.stderr.trim().split("\n");
    expect(first).toMatch(/^refused: \p{Lu}\p{Ll}+ \p{Lu}[\p{L}-]+$/u);
    expect(first).not.toMatch(/nowell/i);
    expect(second).toBe(
      told("alias: 1 real value(s) (person_name) reached the model in Guarded's failed output, which no hook can replace"),
    );

    // A refusal cannot withhold this output either: exit 2, the reason beside it.
    const badSession = await hookProcess(dir, failed("../x", dir, "Bash", "Matthew Nowell"));
    expect([badSession.status, badSession.stdout]).toEqual([2, ""]);
    expect(badSession.stderr.trim()).toBe(
      "rayrun hooks run: invalid_session_id: session_id must be a plain name: 1–128 letters, digits, '.', '_' or '-', and not only dots",
    );
    const noRules = await hookProcess(dir, failed(session, dir, "Bash", "x"), ["--config", "missing.toml"]);
    expect([noRules.status, noRules.stdout]).toEqual([2, ""]);
    expect(noRules.stderr).toMatch(/^rayrun hooks run: rules_file_unreadable: /);
    const notJson = await hookProcess(dir, '{"hook_event_name":"PostToolUseFailure","error":"Matthew Nowell"');
    expect([notJson.status, notJson.stdout, notJson.stderr.trim()]).toEqual([
      2,
      "",
      "rayrun hooks run: invalid_hook_input: stdin must be the agent's hook event as a JSON object",
    ]);
  });
});

describe("Object.prototype's names on the command line and on stdin", () => {
  it("are no event: hooks run answers unknown_hook_event (exit 1) and writes nothing; hooks check --event is a usage error", ({
    expect,
  }) => {
    const dir = exampleCopy();
    for (const name of ["constructor", "__proto__", "toString", "hasOwnProperty"]) {
      const reply = rayrun(["hooks", "run"], {
        node: nodes["22"],
        cwd: dir,
        stdin: JSON.stringify({ session_id: "proto", cwd: dir, hook_event_name: name, stop_hook_active: false }),
      });
      expect(reply).toEqual({
        status: 1,
        stdout: "",
        stderr: `rayrun hooks run: unknown_hook_event: hook_event_name "${name}" is not one rayrun answers (PreToolUse, PostToolUse, PostToolUseFailure, Stop, SessionEnd)\n`,
      });
      const check = rayrun(["hooks", "check", "gateway-hooks.toml", "--event", name], { node: nodes["22"], cwd: dir });
      expect(check).toEqual({ status: 2, stdout: "", stderr: `rayrun: --event ${name} is not an event\n` });
    }
    expect(existsSync(join(dir, ".rayrun/hooks/proto/verdict.json"))).toBe(false);
  });
});

describe("rayrun hooks run, the session's project folder", () => {
  /** The example's rules (a guard that refuses `rm -r`) and the alias seeds; `w/` holds an empty rules file of the agent's making. */
  function swapProject() {
    const dir = exampleCopy({ "seeds.json": JSON.stringify(aliasSeeds) });
    mkdirSync(join(dir, "w"));
    writeFileSync(join(dir, "w/gateway-hooks.toml"), "[vendors]\n");
    return dir;
  }
  const rmRf = (session: string, cwd: string) =>
    JSON.stringify({
      session_id: session,
      cwd,
      hook_event_name: "PreToolUse",
      tool_name: "Bash",
      tool_input: { command: "rm -rf ../victim" },
    });
  const refusedRm = "recursive delete refused: rm -rf ../victim";

  it("after the agent's `cd` into a folder with an empty rules file, keeps the project's rules (CLAUDE_PROJECT_DIR)", ({ expect }) => {
    const dir = swapProject();
    const w = join(dir, "w");
    const env = hookEnv(dir, { CLAUDE_PROJECT_DIR: dir });
    // The agent's cd moves the event's cwd and the hook process's own folder; --seed and --config relative to the project.
    for (const args of [[], ["--seed", "seeds.json"], ["--config", "gateway-hooks.toml", "--seed", "seeds.json"]]) {
      const moved = rayrun(["hooks", "run", ...args], { node: nodes["22"], cwd: w, env, stdin: rmRf("cd-env", w) });
      expect([moved.status, moved.stderr.trim()]).toEqual([2, refusedRm]);
    }
    expect(existsSync(join(w, ".rayrun"))).toBe(false);
    expect(existsSync(join(dir, ".state"))).toBe(false);
    const state = JSON.parse(readFileSync(join(dir, ".rayrun/hooks/cd-env/state.json"), "utf8"));
    expect(state.project_dir).toBe(dir);
  });

  it("without CLAUDE_PROJECT_DIR, keeps the session's first cwd, in the user's state folder, for every later event", ({ expect }) => {
    const dir = swapProject();
    const w = join(dir, "w");
    const first = rayrun(["hooks", "run", "--seed", "seeds.json"], { node: nodes["22"], cwd: dir, stdin: rmRf("cd-first", dir) });
    expect([first.status, first.stderr.trim()]).toEqual([2, refusedRm]);
    const pointer = join(dir, ".state/rayrun/hooks/cd-first.json");
    expect(JSON.parse(readFileSync(pointer, "utf8")).project_dir).toBe(dir);
    expect([modeOf(pointer), modeOf(join(dir, ".state/rayrun/hooks"))]).toEqual([0o600, 0o700]);
    const key = JSON.parse(readFileSync(join(dir, ".rayrun/hooks/cd-first/state.json"), "utf8")).key;

    // cd w: the same rules, the same session folder and key (the aliases do not change), seeds found in the project.
    const moved = rayrun(["hooks", "run", "--seed", "seeds.json"], {
      node: nodes["22"],
      cwd: w,
      stdin: rmRf("cd-first", w),
      env: hookEnv(dir),
    });
    expect([moved.status, moved.stderr.trim()]).toEqual([2, refusedRm]);
    const relative = rayrun(["hooks", "run"], { node: nodes["22"], cwd: w, stdin: rmRf("cd-first", "."), env: hookEnv(dir) });
    expect([relative.status, relative.stderr.trim()]).toEqual([2, refusedRm]);
    expect(existsSync(join(w, ".rayrun"))).toBe(false);
    expect(JSON.parse(readFileSync(join(dir, ".rayrun/hooks/cd-first/state.json"), "utf8")).key).toBe(key);

    // A session whose first event was already in w is w's session: the rules file there applies to it.
    const own = rayrun(["hooks", "run"], { node: nodes["22"], cwd: w, stdin: rmRf("cd-other", w), env: hookEnv(dir) });
    expect([own.status, own.stderr]).toEqual([0, ""]);
  });

  it("refuses a pointer that is a symlink or names no folder, and starts over where a stale one's session state is gone", ({ expect }) => {
    const dir = swapProject();
    const sessions = join(dir, ".state/rayrun/hooks");
    mkdirSync(sessions, { recursive: true, mode: 0o700 });
    writeFileSync(join(dir, "elsewhere.json"), JSON.stringify({ project_dir: join(dir, "w") }));
    symlinkSync(join(dir, "elsewhere.json"), join(sessions, "linked.json"));
    const linked = rayrun(["hooks", "run"], { node: nodes["22"], cwd: dir, stdin: rmRf("linked", dir) });
    expect([linked.status, linked.stderr.trim()]).toEqual([
      2,
      `rayrun hooks run: run_state_unsafe: ${join(sessions, "linked.json")} is not a regular file (a symlink is never followed)`,
    ]);
    writeFileSync(join(sessions, "garbled.json"), JSON.stringify({ project_dir: "w" }));
    const garbled = rayrun(["hooks", "run"], { node: nodes["22"], cwd: dir, stdin: rmRf("garbled", dir) });
    expect([garbled.status, garbled.stderr.trim()]).toEqual([
      2,
      `rayrun hooks run: hooks_run_failed: unexpected failure: ${join(sessions, "garbled.json")} names no project folder; the session's state is damaged`,
    ]);

    // A pointer to a folder that holds no state of the session: kept for a minute (a first event may be making it), and
    // an event from outside that folder meanwhile is refused (another project, or a cd out of it); then replaced.
    const gone = join(sessions, "gone.json");
    writeFileSync(gone, JSON.stringify({ project_dir: join(dir, "w") }), { mode: 0o600 });
    const fresh = rayrun(["hooks", "run"], { node: nodes["22"], cwd: dir, stdin: rmRf("gone", dir) });
    expect([fresh.status, fresh.stderr.trim()]).toEqual([
      2,
      `rayrun hooks run: session_project_mismatch: session gone belongs to ${join(dir, "w")}, and this event's cwd ${dir} is outside it; use another session id for another project`,
    ]);
    const inside = rayrun(["hooks", "run"], { node: nodes["22"], cwd: join(dir, "w"), stdin: rmRf("gone", join(dir, "w")) });
    expect([inside.status, inside.stderr]).toEqual([0, ""]);
    const old = new Date(Date.now() - 120_000);
    utimesSync(gone, old, old);
    rmSync(join(dir, "w/.rayrun"), { recursive: true });
    const stale = rayrun(["hooks", "run"], { node: nodes["22"], cwd: dir, stdin: rmRf("gone", dir) });
    expect([stale.status, stale.stderr.trim()]).toEqual([2, refusedRm]);
    expect(JSON.parse(readFileSync(gone, "utf8")).project_dir).toBe(dir);
  });
});

describe("the rayrun/hooks declarations", () => {
  it("type-check a consumer that imports the package by name, and catch its mistakes", ({ expect }) => {
    const dir = mkdtempSync(join(tmpdir(), "rayrun-hooks-dts-"));
    mkdirSync(join(dir, "node_modules"));
    symlinkSync(join(root, "cli"), join(dir, "node_modules/rayrun"));
    writeFileSync(join(dir, "package.json"), JSON.stringify({ type: "module" }));
    const compilerOptions = {
      strict: true,
      noEmit: true,
      target: "es2022",
      module: "nodenext",
      moduleResolution: "nodenext",
      lib: ["es2023", "dom"],
      types: [],
      skipLibCheck: true,
    };
    writeFileSync(join(dir, "tsconfig.json"), JSON.stringify({ compilerOptions, files: ["agent.ts"] }));
    const agent = `
import { HookRun, HookDenied, DenyHandler, type HookEvent, type Verdict } from "rayrun/hooks";
import { parseRules } from "rayrun/hooks/core";
const run = await HookRun.fromConfig("gateway-hooks.toml");
run.on("PreToolUse", (event: HookEvent) => (event.tool_name === "x" ? { decision: "deny" } : undefined));
run.on("pre_tool_call", new DenyHandler("no"), { matcher: "^rm$" });
const tools = run.wrapTools({ search: async (input: Record<string, unknown>) => input.q });
const verdict: Verdict = await run.end({});
console.log(await tools.search({ q: 1 }), verdict.passed, new HookDenied("r").reason, parseRules("", "toml").rules);
`;
    const tsc = (source: string) => {
      writeFileSync(join(dir, "agent.ts"), source);
      return spawnSync(join(root, "cli/node_modules/.bin/tsc"), ["-p", "."], { cwd: dir, encoding: "utf8" });
    };
    expect(tsc(agent).stdout).toBe("");
    const wrong = tsc(`${agent}\nrun.on("pre_tool_call", () => 1, { matcher: 3 });\n`);
    expect(wrong.status).not.toBe(0);
    expect(wrong.stdout).toContain("agent.ts(11,");
  });
});

describe("rayrun hooks --help", () => {
  it("says which verbs work on the local rules file", ({ expect }) => {
    const help = rayrun(["hooks", "--help"], { node: nodes["20"], cwd: root }).stdout.replace(/\s+/g, " ");
    expect(help).toContain("`check` and `run` work on a local rules file (gateway-hooks.toml)");
    expect(help).toContain(" check [options] <file> Local rules file: validate it");
    expect(help).toContain(" run [options] Local rules file as a Claude Code hook");
    for (const verb of ["pull", "push", "apply", "logs", "history"]) expect(help).toContain(` ${verb} `);
  });

  it("says in what order hooks logs prints its rows (each page oldest first)", ({ expect }) => {
    const help = rayrun(["hooks", "logs", "--help"], { node: nodes["20"], cwd: root }).stdout.replace(/\s+/g, " ");
    expect(help).toContain("the newest rows (--limit), printed oldest first, in time order");
    expect(help).not.toContain("newest first");
  });
});

describe("rayrun hooks run, its own time and the event's size", () => {
  function project(): string {
    const dir = mkdtempSync(join(tmpdir(), "rayrun-bounds-"));
    writeFileSync(
      join(dir, "gateway-hooks.toml"),
      `[[hooks.PreToolUse]]\nhandlers = [{ type = "alias" }]\n\n[[hooks.PostToolUse]]\nhandlers = [{ type = "alias" }]\n\n` +
        `[[hooks.PreToolUse]]\nmatcher = "^Hang"\nhandlers = [{ type = "callable", target = "./hang.mjs#hang" }]\n\n` +
        `[[hooks.PostToolUse]]\nmatcher = "^Hang"\nhandlers = [{ type = "callable", target = "./hang.mjs#hang" }]\n\n` +
        // A command that notes its process group and then outlasts any answer, with a child of its own.
        `[[hooks.PreToolUse]]\nmatcher = "^Sleeper$"\nhandlers = [{ type = "command", command = "echo $$ > group.pid; sleep 300 & sleep 300" }]\n`,
    );
    // Never settles; HangTicking keeps a timer running meanwhile, HangIdle leaves Node nothing to wait on.
    writeFileSync(
      join(dir, "hang.mjs"),
      `export const hang = (event) => new Promise(() => { if (event.tool_name === "HangTicking") setInterval(() => {}, 100); });\n`,
    );
    writeFileSync(join(dir, "seeds.json"), JSON.stringify(aliasSeeds));
    return dir;
  }
  const post = (dir: string, tool: string, response: string) =>
    `{"session_id":"bounds","cwd":${JSON.stringify(dir)},"hook_event_name":"PostToolUse","tool_name":"${tool}","tool_input":{},"tool_response":${response}}`;
  const pre = (dir: string, tool: string, input: string) =>
    `{"session_id":"bounds","cwd":${JSON.stringify(dir)},"hook_event_name":"PreToolUse","tool_name":"${tool}","tool_input":${input}}`;

  it("refuses, unparsed, an event of more than 2,000,000 '{', '[' and ',' outside strings: blocked after a call, denied before", ({
    expect,
  }) => {
    const dir = project();
    const message =
      "rayrun hooks run: hook_input_too_large: the event on stdin holds more than 2000000 objects, arrays and elements ('{', '[' and ',' outside strings); it was not parsed";
    // A million empty objects and the subject: about 3 MB, which would parse into a million objects.
    const many = `["Matthew Nowell",${"{},".repeat(1_000_000)}{}]`;
    const withheld = rayrun(["hooks", "run", "--seed", "seeds.json"], { node: nodes["22"], cwd: dir, stdin: post(dir, "Read", many) });
    expect([withheld.status, JSON.parse(withheld.stdout), withheld.stderr.trim()]).toEqual([
      0,
      blocked(message, "hook_input_too_large"),
      message,
    ]);
    const denied = rayrun(["hooks", "run"], { node: nodes["22"], cwd: dir, stdin: pre(dir, "Bash", `{"a":${many}}`) });
    expect([denied.status, denied.stdout, denied.stderr.trim()]).toEqual([2, "", message]);
    // Inside a string they are text, not structure: three million commas are read and the name in them aliased.
    const text = JSON.stringify(`Matthew Nowell${",".repeat(3_000_000)}`);
    const read = rayrun(["hooks", "run", "--seed", "seeds.json"], { node: nodes["22"], cwd: dir, stdin: post(dir, "Read", text) });
    expect([read.status, read.stderr]).toEqual([0, ""]);
    const shown = JSON.parse(read.stdout).hookSpecificOutput.updatedToolOutput as string;
    expect([shown.endsWith(",".repeat(3_000_000)), /nowell/i.test(shown)]).toEqual([true, false]);
  });

  it("refuses a call whose rules have not answered a margin before Claude Code's hook timeout, and exits", async ({ expect }) => {
    const dir = project();
    const message = "rayrun hooks run: hook_timeout: the rules did not answer in time (hooks run --timeout, less a margin)";
    for (const tool of ["HangIdle", "HangTicking"]) {
      const started = performance.now();
      // --timeout 2 (Claude Code's settings' timeout): answered by 1.6 s.
      const denied = rayrun(["hooks", "run", "--timeout", "2"], { node: nodes["22"], cwd: dir, stdin: pre(dir, tool, "{}") });
      expect([denied.status, denied.stdout, denied.stderr.trim()]).toEqual([2, "", message]);
      const after = rayrun(["hooks", "run", "--timeout", "2"], { node: nodes["22"], cwd: dir, stdin: post(dir, tool, '"out"') });
      expect([after.status, JSON.parse(after.stdout)]).toEqual([0, blocked(message, "hook_timeout")]);
      expect(performance.now() - started).toBeLessThan(2 * 2000);
    }
    const usage = rayrun(["hooks", "run", "--timeout", "0"], { node: nodes["22"], cwd: dir, stdin: pre(dir, "Bash", "{}") });
    expect(usage).toEqual({ status: 2, stdout: "", stderr: "rayrun: --timeout must be a positive number of seconds, not 0\n" });
  });

  it("kills what a command handler still runs when the answer is due, its children too", async ({ expect }) => {
    const dir = project();
    const denied = rayrun(["hooks", "run", "--timeout", "2"], { node: nodes["22"], cwd: dir, stdin: pre(dir, "Sleeper", "{}") });
    expect([denied.status, denied.stderr.trim()]).toEqual([
      2,
      "rayrun hooks run: hook_timeout: the rules did not answer in time (hooks run --timeout, less a margin)",
    ]);
    const group = Number(readFileSync(join(dir, "group.pid"), "utf8"));
    expect(group).toBeGreaterThan(1);
    // SIGKILL went to the whole group before the process exited; what is left of it at most awaits reaping.
    const living = () =>
      readdirSync("/proc")
        .filter((name) => /^\d+$/.test(name))
        .filter((pid) => {
          try {
            const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
            // Fields after the command's closing parenthesis: state, ppid, pgrp.
            const [state, , pgrp] = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
            return Number(pgrp) === group && state !== "Z";
          } catch {
            return false;
          }
        });
    for (let tries = 0; living().length && tries < 50; tries++) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(living()).toEqual([]);
  });
});

describe("rayrun hooks run never fails open", () => {
  // An alias rule on every call, and a command that reads the whole event (so its JSON must be written out).
  const rules = `
[[hooks.PreToolUse]]
handlers = [{ type = "alias" }]

[[hooks.PostToolUse]]
matcher = "^WebSearch$"
handlers = [{ type = "alias" }]

[[hooks.PostToolUse]]
handlers = [{ type = "command", command = "cat > /dev/null", name = "reader" }]
`;
  function project(): string {
    const dir = mkdtempSync(join(tmpdir(), "rayrun-closed-"));
    writeFileSync(join(dir, "gateway-hooks.toml"), rules);
    writeFileSync(join(dir, "seeds.json"), JSON.stringify(aliasSeeds));
    return dir;
  }
  /** The raw stdin of a PostToolUse whose output names the subject beside an array nested `levels` deep. */
  const nestedOutput = (dir: string, session: string, tool: string, levels: number) =>
    `{"session_id":${JSON.stringify(session)},"cwd":${JSON.stringify(dir)},"hook_event_name":"PostToolUse","tool_name":"${tool}",` +
    `"tool_input":{"query":"x"},"tool_response":{"who":"Matthew Nowell","nested":${"[".repeat(levels)}${"]".repeat(levels)}}}`;
  const counts = (dir: string, session: string) => JSON.parse(readFileSync(join(dir, ".rayrun/hooks", session, "counts.json"), "utf8"));
  const tooDeep = "event_too_deep: the event's tool_result nests objects and arrays deeper than 64 levels";

  for (const levels of [2_000, 3_000, 100_000])
    it(`blocks a PostToolUse output nested ${levels} levels deep, withheld, metered, with or without an alias rule`, ({ expect }) => {
      const dir = project();
      for (const tool of ["WebSearch", "Read"]) {
        const session = `deep-${tool}`;
        const reply = rayrun(["hooks", "run", "--seed", "seeds.json"], {
          node: nodes["22"],
          cwd: dir,
          stdin: nestedOutput(dir, session, tool, levels),
        });
        expect([reply.status, reply.stderr]).toEqual([0, ""]);
        expect(JSON.parse(reply.stdout)).toEqual(blocked(tooDeep, "event_too_deep"));
        expect(reply.stdout).not.toMatch(/nowell/i);
        // Counted as refused; nothing real reached the model, so the meter counts none.
        expect(counts(dir, session)).toMatchObject({ denied: 1, leak_through_inbound: 0 });
        const errors = readFileSync(join(dir, ".rayrun/hooks", session, "errors.jsonl"), "utf8");
        expect(JSON.parse(errors)).toMatchObject({ hook: "rayrun", code: "event_too_deep", event: "post_tool_call" });
      }
    });

  it("rewrites output nested exactly 64 levels as usual, and refuses a PreToolUse input nested 100,000 levels with exit 2", ({
    expect,
  }) => {
    const dir = project();
    const at64 = rayrun(["hooks", "run", "--seed", "seeds.json"], {
      node: nodes["22"],
      cwd: dir,
      stdin: nestedOutput(dir, "s64", "WebSearch", 63),
    });
    expect(at64.status).toBe(0);
    const shown = JSON.parse(at64.stdout).hookSpecificOutput.updatedToolOutput as { who: string };
    expect(shown.who).not.toMatch(/nowell/i);
    const deepInput = `{"session_id":"pre","cwd":${JSON.stringify(dir)},"hook_event_name":"PreToolUse","tool_name":"WebSearch","tool_input":{"q":${"[".repeat(100_000)}${"]".repeat(100_000)}}}`;
    const pre = rayrun(["hooks", "run", "--seed", "seeds.json"], { node: nodes["22"], cwd: dir, stdin: deepInput });
    expect([pre.status, pre.stdout, pre.stderr.trim()]).toEqual([
      2,
      "",
      "event_too_deep: the event's tool_input nests objects and arrays deeper than 64 levels",
    ]);
  });

  it("withholds output at the size bounds: past the door's text bound, and an event past 64 MiB on stdin", ({ expect }) => {
    const dir = project();
    const event = (session: string, tool: string, text: string) =>
      JSON.stringify({
        session_id: session,
        cwd: dir,
        hook_event_name: "PostToolUse",
        tool_name: tool,
        tool_input: {},
        tool_response: { text },
      });
    // 16 Mi characters and one more, naming the subject: the alias rule cannot read it, so nobody sees it.
    const large = rayrun(["hooks", "run", "--seed", "seeds.json"], {
      node: nodes["22"],
      cwd: dir,
      stdin: event("text-bound", "WebSearch", `Matthew Nowell ${"x".repeat(16 * 1024 * 1024)}`),
    });
    expect(large.status).toBe(0);
    expect(JSON.parse(large.stdout)).toMatchObject({
      decision: "block",
      reason: expect.stringMatching(/^rules_alias_text_too_large: /),
      hookSpecificOutput: { updatedToolOutput: "[withheld: rules_alias_text_too_large]" },
    });
    const huge = rayrun(["hooks", "run"], {
      node: nodes["22"],
      cwd: dir,
      stdin: event("stdin-bound", "Read", "y".repeat(64 * 1024 * 1024)),
    });
    const message = `rayrun hooks run: hook_input_too_large: the event on stdin is larger than ${64 * 1024 * 1024} bytes; it was not read`;
    expect([huge.status, JSON.parse(huge.stdout), huge.stderr.trim()]).toEqual([0, blocked(message, "hook_input_too_large"), message]);
  });

  it("refuses a session_id that is not a plain name, closed on every event", ({ expect }) => {
    const dir = project();
    const ids: unknown[] = [".", "..", "...", "a/b", "..\\\\x", "a\u0000b", "tab\there", "x".repeat(129), "é", "", 7];
    for (const id of ids) {
      const common = { session_id: id, cwd: dir, tool_name: "Read", tool_input: {} };
      const message =
        "rayrun hooks run: invalid_session_id: session_id must be a plain name: 1–128 letters, digits, '.', '_' or '-', and not only dots";
      const post = rayrun(["hooks", "run"], {
        node: nodes["22"],
        cwd: dir,
        stdin: JSON.stringify({ ...common, hook_event_name: "PostToolUse", tool_response: { who: "Matthew Nowell" } }),
      });
      expect([id, post.status, JSON.parse(post.stdout)]).toEqual([id, 0, blocked(message, "invalid_session_id")]);
      const pre = rayrun(["hooks", "run"], {
        node: nodes["22"],
        cwd: dir,
        stdin: JSON.stringify({ ...common, hook_event_name: "PreToolUse" }),
      });
      expect([id, pre.status, pre.stderr.trim()]).toEqual([id, 2, message]);
      const stop = rayrun(["hooks", "run"], { node: nodes["22"], cwd: dir, stdin: JSON.stringify({ ...common, hook_event_name: "Stop" }) });
      expect([id, stop.status]).toEqual([id, 2]);
    }
    // Nothing was written above or beside the sessions.
    expect(existsSync(join(dir, ".rayrun"))).toBe(false);
    expect(
      rayrun(["hooks", "run"], {
        node: nodes["22"],
        cwd: dir,
        stdin: JSON.stringify({ session_id: "x".repeat(128), cwd: dir, hook_event_name: "PreToolUse", tool_name: "Read", tool_input: {} }),
      }).status,
    ).toBe(0);
  });

  it("blocks a PostToolUse whose stdin is not JSON, and answers ^(a+)+$ against a hostile tool name within the hook's timeout", ({
    expect,
  }) => {
    const dir = project();
    const garbled = rayrun(["hooks", "run"], {
      node: nodes["22"],
      cwd: dir,
      stdin: `{"hook_event_name":"PostToolUse","tool_response":{"who":"Matthew Nowell"`,
    });
    const message = "rayrun hooks run: invalid_hook_input: stdin must be the agent's hook event as a JSON object";
    expect([garbled.status, JSON.parse(garbled.stdout)]).toEqual([0, blocked(message, "invalid_hook_input")]);
    expect(rayrun(["hooks", "run"], { node: nodes["22"], cwd: dir, stdin: "not json" }).status).toBe(2);

    writeFileSync(
      join(dir, "backtrack.toml"),
      `[[hooks.PreToolUse]]\nmatcher = "^(a+)+$"\nhandlers = [{ type = "deny", reason = "all a" }]\n`,
    );
    const hook = (tool: string) =>
      spawnSync(nodes["22"], [bundle, "hooks", "run", "--config", "backtrack.toml"], {
        cwd: dir,
        input: JSON.stringify({ session_id: "backtrack", cwd: dir, hook_event_name: "PreToolUse", tool_name: tool, tool_input: {} }),
        encoding: "utf8",
        env: hookEnv(dir),
        // Claude Code's hook timeout is 60 s; a backtracking engine would still be at it then.
        timeout: 20_000,
      });
    const hostile = hook(`${"a".repeat(40)}!`);
    expect([hostile.status, hostile.signal, hostile.stderr]).toEqual([0, null, ""]);
    const matching = hook("a".repeat(40));
    expect([matching.status, matching.stderr.trim()]).toEqual([2, "all a"]);
  });
});
