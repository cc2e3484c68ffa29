// The rules file SDK (`rayrun/hooks`) in-process: the file's validation, every
// handler type with real subprocesses and a real HTTP server, the merge rules and
// the SDK surface. The bundle itself is run on Node 20 and 22 in rules.cli.test.ts.
import { createServer, type IncomingMessage, type Server } from "node:http";
import { mkdtempSync, readFileSync, statSync, writeFileSync } from "node:fs";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, it, vi } from "vitest";
import { jsonStructureOver } from "../src/rules/core/bounds.ts";
import {
  defaultTimeoutSeconds,
  DenyHandler,
  FunctionHandler,
  HookDenied,
  HookError,
  HookRun,
  RulesFileError,
  type HookEvent,
} from "../src/rules/index.ts";

/** A folder holding a rules file (and whatever scripts it names). */
function folder(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), "rayrun-rules-"));
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  return dir;
}

async function runOf(toml: string, files: Record<string, string> = {}, name = "gateway-hooks.toml"): Promise<HookRun> {
  const dir = folder({ [name]: toml, ...files });
  return HookRun.fromConfig(join(dir, name), { cwd: dir });
}

async function loadError(toml: string, name = "gateway-hooks.toml", files: Record<string, string> = {}): Promise<RulesFileError> {
  try {
    await runOf(toml, files, name);
  } catch (error) {
    if (error instanceof RulesFileError) return error;
    throw error;
  }
  throw new Error("the file loaded");
}

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error("it resolved");
}

/** A process's state letter from /proc (Z: killed, awaiting its reaper), or "gone". */
function processState(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ")[0]!;
  } catch {
    return "gone";
  }
}

const node = JSON.stringify(process.execPath);
/** A command handler line running inline JavaScript on the event (read from stdin as `event`). */
const script = (body: string) =>
  `${node} -e ${JSON.stringify(`let t="";process.stdin.on("data",c=>t+=c).on("end",()=>{const event=JSON.parse(t);${body}})`)}`;
const toml = (value: string) => JSON.stringify(value);

let server: Server;
let origin: string;
const seen: { headers: IncomingMessage["headers"]; body: string }[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = "";
    req.on("data", (chunk) => (body += chunk));
    req.on("end", () => {
      seen.push({ headers: req.headers, body });
      const route = req.url ?? "";
      if (route === "/500") return res.writeHead(500).end("boom");
      if (route === "/bad-json") return res.writeHead(200, { "content-type": "application/json" }).end("{nope");
      if (route === "/text") return res.writeHead(200, { "content-type": "text/plain" }).end("looked it up");
      if (route === "/hang") return; // never answers
      if (route === "/flood") return res.writeHead(200, { "content-type": "text/plain" }).end("x".repeat(2 * 1024 * 1024));
      if (route === "/rewrite")
        return res
          .writeHead(200, { "content-type": "application/json" })
          .end(JSON.stringify({ decision: "rewrite", updated_input: { q: "rewritten", auth: req.headers.authorization } }));
      if (route.startsWith("/api/"))
        return res
          .writeHead(route === "/api/missing" ? 404 : 200, { "content-type": "application/json" })
          .end(JSON.stringify({ path: route, body }));
      res.writeHead(404).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => {
  server.closeAllConnections();
  server.close();
});

describe("the rules file is validated when the run starts", () => {
  it("names the key path and line of an unknown key", async ({ expect }) => {
    const error = await loadError(`[[hooks.pre_tool_call]]\nmatchr = "x"\nhandlers = [{ type = "deny" }]\n`);
    expect([error.code, error.path, error.line]).toEqual(["rules_unknown_key", "hooks.pre_tool_call[0].matchr", 2]);
    expect(error.message).toMatch(/gateway-hooks\.toml:2: hooks\.pre_tool_call\[0\]\.matchr: unknown key in a rule/);
  });

  it("names a wrong type inside an inline handler table", async ({ expect }) => {
    const error = await loadError(
      `\n[[hooks.pre_tool_call]]\nhandlers = [\n  { type = "deny" },\n  { type = "command", command = "true", timeout = "10" },\n]\n`,
    );
    expect([error.code, error.path, error.line]).toEqual(["rules_wrong_type", "hooks.pre_tool_call[0].handlers[1].timeout", 5]);
  });

  it("refuses deny on a post event and record on a pre event", async ({ expect }) => {
    const deny = await loadError(`[[hooks.post_tool_call]]\nhandlers = [{ type = "deny" }]\n`);
    expect([deny.code, deny.path, deny.line]).toEqual(["rules_handler_not_allowed", "hooks.post_tool_call[0].handlers[0].type", 2]);
    const record = await loadError(`[[hooks.PreToolUse]]\n\nhandlers = [{ type = "record", sink = "x.jsonl" }]\n`);
    expect([record.code, record.path, record.line]).toEqual(["rules_handler_not_allowed", "hooks.PreToolUse[0].handlers[0].type", 3]);
  });

  it("refuses two alias handlers under one matcher", async ({ expect }) => {
    const error = await loadError(
      `[[hooks.post_tool_call]]\nhandlers = [\n  { type = "alias" },\n  { type = "alias", args = "keep" },\n]\n`,
    );
    expect([error.code, error.path, error.line]).toEqual(["rules_two_alias_handlers", "hooks.post_tool_call[0].handlers[1]", 4]);
  });

  it("refuses a header that reads an env name allowed_env does not list", async ({ expect }) => {
    const error = await loadError(
      `[[hooks.pre_tool_call]]\nhandlers = [{ type = "http", url = "http://x.test", allowed_env = ["OTHER"], headers = { Authorization = "Bearer $TOKEN" } }]\n`,
    );
    expect([error.code, error.path, error.line]).toEqual([
      "rules_env_not_allowed",
      "hooks.pre_tool_call[0].handlers[0].headers.Authorization",
      2,
    ]);
    expect(error.message).toContain("$TOKEN is not listed");
  });

  it("refuses a JSON rules file nested past 64 levels before parsing it, naming the line", async ({ expect }) => {
    // 50,000 deep once took 10 s of CPU and ended in "Maximum call stack size exceeded" with no line (round 5, finding 10).
    const deep = await loadError(`{\n"hooks":\n${"[".repeat(50_000)}${"]".repeat(50_000)}}`, "gateway-hooks.json");
    expect([deep.code, deep.line]).toEqual(["rules_file_syntax", 3]);
    expect(deep.message).toContain("objects and arrays nest deeper than 64 levels");
    // 64 levels are read (and then validated as any file is).
    const fine = await loadError(
      `{"hooks": {"pre_tool_call": [{"handlers": [{"type": "deny", "x": ${"[".repeat(58)}${"]".repeat(58)}}]}]}}`,
      "gateway-hooks.json",
    );
    expect(fine.code).not.toBe("rules_file_syntax");
  });

  it("reports TOML syntax, unknown events, bad regexes, missing handlers and unknown handler types with their lines", async ({
    expect,
  }) => {
    const syntax = await loadError(`[[hooks.pre_tool_call]]\nmatcher = \n`);
    expect([syntax.code, syntax.line]).toEqual(["rules_file_syntax", 2]);
    const event = await loadError(`[[hooks.BeforeTool]]\nhandlers = [{ type = "deny" }]\n`);
    expect([event.code, event.path, event.line]).toEqual(["rules_unknown_event", "hooks.BeforeTool", 1]);
    const regex = await loadError(`[[hooks.pre_tool_call]]\nmatcher = "a | (b"\nhandlers = [{ type = "deny" }]\n`);
    expect([regex.code, regex.path, regex.line]).toEqual(["rules_bad_matcher", "hooks.pre_tool_call[0].matcher", 2]);
    // A pattern the linear-time engine cannot run is a load error naming the rule, not a matcher that may hang.
    const lookaround = await loadError(
      `[[hooks.pre_tool_call]]\nhandlers = [{ type = "deny" }]\n\n[[hooks.pre_tool_call]]\nmatcher = "^(?!safe_)"\nhandlers = [{ type = "deny" }]\n`,
    );
    expect([lookaround.code, lookaround.path, lookaround.line]).toEqual(["rules_bad_matcher", "hooks.pre_tool_call[1].matcher", 5]);
    expect(lookaround.message).toContain('hooks.pre_tool_call[1].matcher: cannot be a matcher: "^(?!safe_)" uses lookaround');
    const backreference = await loadError(`[vendors]\nsearch = "(a)\\\\1"\n`);
    expect([backreference.code, backreference.path, backreference.line]).toEqual(["rules_bad_matcher", "vendors.search", 2]);
    expect(backreference.message).toContain("uses a backreference");
    const missing = await loadError(`[[hooks.pre_tool_call]]\nmatcher = "a"\n`);
    expect([missing.code, missing.path, missing.line]).toEqual(["rules_missing_key", "hooks.pre_tool_call[0].handlers", 1]);
    const type = await loadError(`[[hooks.pre_tool_call]]\nhandlers = [{ type = "webhook" }]\n`);
    expect([type.code, type.path]).toEqual(["rules_unknown_handler", "hooks.pre_tool_call[0].handlers[0].type"]);
    const top = await loadError(`[hosts]\nrecord = "x"\n`);
    expect([top.code, top.path, top.line]).toEqual(["rules_unknown_key", "hosts", 1]);
  });

  it("reads Object.prototype's names (constructor, toString, hasOwnProperty, __proto__) as unknown like any other name", async ({
    expect,
  }) => {
    // The code and the message, from the file's name on (the folder is a temp one).
    const shown = (error: RulesFileError) => [error.code, error.message.slice(error.message.lastIndexOf("/") + 1)];
    const events = "pre_tool_call, post_tool_call, pre_request, post_response, run_end, or PreToolUse, PostToolUse, Stop, SessionEnd";
    for (const name of ["constructor", "toString", "hasOwnProperty", "valueOf"]) {
      const event = await loadError(`[[hooks.${name}]]\nhandlers = [{ type = "deny" }]\n`);
      expect(shown(event)).toEqual(["rules_unknown_event", `gateway-hooks.toml:1: hooks.${name}: unknown event (${events})`]);
      const type = await loadError(`[[hooks.pre_tool_call]]\nhandlers = [{ type = "${name}" }]\n`);
      expect(shown(type)).toEqual([
        "rules_unknown_handler",
        `gateway-hooks.toml:2: hooks.pre_tool_call[0].handlers[0].type: unknown handler type "${name}" (command, http, callable, record, deny, alias)`,
      ]);
      const field = await loadError(`[[hooks.pre_tool_call]]\nhandlers = [{ type = "deny", ${name} = "x" }]\n`);
      expect(shown(field)).toEqual([
        "rules_unknown_key",
        `gateway-hooks.toml:2: hooks.pre_tool_call[0].handlers[0].${name}: unknown key in a deny handler (allowed: type, name, timeout, async, reason)`,
      ]);
      const rule = await loadError(`[[hooks.pre_tool_call]]\n${name} = "x"\nhandlers = [{ type = "deny" }]\n`);
      expect([rule.code, rule.path]).toEqual(["rules_unknown_key", `hooks.pre_tool_call[0].${name}`]);
      const hole = await loadError(`[tools.t]\nurl = "https://x.test/{${name}}"\ninput = { q = "string" }\n`);
      expect(shown(hole)).toEqual([
        "rules_bad_template",
        `gateway-hooks.toml:2: tools.t.url: the hole {${name}} names no input field (fields: q)`,
      ]);
      const defaults = await loadError(`[tools.t]\nurl = "https://x.test/{q}"\ninput = { q = "string" }\ndefaults = { ${name} = 1 }\n`);
      expect(shown(defaults)).toEqual([
        "rules_unknown_key",
        `gateway-hooks.toml:4: tools.t.defaults.${name}: names no input field (fields: q)`,
      ]);
    }
    // JSON makes __proto__ an own key: an event, a handler type and a key by that name are refused the same way.
    const proto = await loadError(`{"hooks":{"__proto__":[{"handlers":[{"type":"deny"}]}]}}`, "gateway-hooks.json");
    expect(shown(proto)).toEqual(["rules_unknown_event", `gateway-hooks.json:1: hooks.__proto__: unknown event (${events})`]);
    const protoType = await loadError(`{"hooks":{"pre_tool_call":[{"handlers":[{"type":"__proto__"}]}]}}`, "gateway-hooks.json");
    expect([protoType.code, protoType.path]).toEqual(["rules_unknown_handler", "hooks.pre_tool_call[0].handlers[0].type"]);
    const protoKey = await loadError(`{"hooks":{"pre_tool_call":[{"handlers":[{"type":"deny","__proto__":1}]}]}}`, "gateway-hooks.json");
    expect([protoKey.code, protoKey.path]).toEqual(["rules_unknown_key", "hooks.pre_tool_call[0].handlers[0].__proto__"]);
    // A vendor may be called anything, and keeps its name.
    const vendors = await runOf(`{"vendors":{"__proto__":"^a$","constructor":"^b$"}}`, {}, "gateway-hooks.json");
    expect([vendors.vendorOf("a"), vendors.vendorOf("b"), vendors.vendorOf("c")]).toEqual(["__proto__", "constructor", undefined]);
    // From code and in a rule's arg: the same.
    expect(() => new HookRun().on("constructor", () => undefined)).toThrow(new TypeError("unknown event constructor"));
    const run = new HookRun().on("pre_tool_call", () => ({ decision: "deny", reason: "has it" }), { arg: "toString" });
    expect(await run.wrapTools({ t: async () => "ran" }).t({ q: 1 })).toBe("ran");
    expect(await rejection(run.wrapTools({ t: async () => "ran" }).t({ toString: "x" }))).toMatchObject({ reason: "has it" });
  });

  it("accepts JSON, with lines in its errors too", async ({ expect }) => {
    const run = await runOf(
      JSON.stringify({ hooks: { PreToolUse: [{ handlers: [{ type: "deny", reason: "json" }] }] } }),
      {},
      "gateway-hooks.json",
    );
    expect(await rejection(run.wrapTools({ t: async () => 1 }).t({}))).toMatchObject({ reason: "json" });
    const error = await loadError(
      `{\n  "hooks": {\n    "run_end": [\n      { "handlers": [{ "type": "deny", "why": 1 }] }\n    ]\n  }\n}\n`,
      "gateway-hooks.json",
    );
    expect([error.code, error.path, error.line]).toEqual(["rules_unknown_key", "hooks.run_end[0].handlers[0].why", 4]);
  });

  it("fails at start for a callable whose export is missing, and for alias fields that turn the door round", async ({ expect }) => {
    const callable = await loadError(`[[hooks.pre_tool_call]]\nhandlers = [{ type = "callable", target = "./g.mjs#nope" }]\n`, undefined, {
      "g.mjs": "export const yes = () => {};",
    });
    expect([callable.code, callable.path, callable.line]).toEqual([
      "rules_callable_missing",
      "hooks.pre_tool_call[0].handlers[0].target",
      2,
    ]);
    const direction = await loadError(`[[hooks.post_tool_call]]\nhandlers = [{ type = "alias", direction = "out" }]\n`);
    expect([direction.code, direction.path, direction.line]).toEqual([
      "rules_wrong_type",
      "hooks.post_tool_call[0].handlers[0].direction",
      2,
    ]);
    expect(direction.message).toMatch(/: on post_tool_call the alias door's direction is "in"$/);
    const check = await loadError(`[[hooks.pre_tool_call]]\nhandlers = [{ type = "alias", check = "outgoing" }]\n`);
    expect([check.code, check.path]).toEqual(["rules_wrong_type", "hooks.pre_tool_call[0].handlers[0].check"]);
    const args = await loadError(`[[hooks.post_tool_call]]\nhandlers = [{ type = "alias", args = "drop" }]\n`);
    expect([args.code, args.path]).toEqual(["rules_wrong_type", "hooks.post_tool_call[0].handlers[0].args"]);
    const slug = await loadError(`[alias]\nslugs = ["a:b"]\n`);
    expect([slug.code, slug.path, slug.line]).toEqual(["rules_wrong_type", "alias.slugs[0]", 2]);
  });
});

describe("matchers", () => {
  it("split on top-level | only, are unanchored, and * or omitted is every tool", async ({ expect }) => {
    const run = new HookRun();
    const hits: string[] = [];
    run.on("pre_tool_call", (e) => void hits.push(`group:${e.tool_name}`), { matcher: "^(a|b)_tool$" });
    run.on("pre_tool_call", (e) => void hits.push(`alt:${e.tool_name}`), { matcher: "spycloud_.* | websearch" });
    run.on("pre_tool_call", (e) => void hits.push(`all:${e.tool_name}`), { matcher: "*" });
    const tools = run.wrapTools({
      a_tool: async () => 1,
      c_tool: async () => 1,
      my_websearch_v2: async () => 1,
      spycloud_lookup: async () => 1,
    });
    for (const fn of Object.values(tools)) await fn({});
    expect(hits).toEqual([
      "group:a_tool",
      "all:a_tool",
      "all:c_tool",
      "alt:my_websearch_v2",
      "all:my_websearch_v2",
      "alt:spycloud_lookup",
      "all:spycloud_lookup",
    ]);
  });

  it("run in linear time: ^(a+)+$ against forty a's and a ! answers at once; a name past the step budget fails closed", async ({
    expect,
  }) => {
    const run = await runOf(`[[hooks.pre_tool_call]]\nmatcher = "^(a+)+$"\nhandlers = [{ type = "deny", reason = "all a" }]\n`);
    const hostile = `${"a".repeat(40)}!`;
    // A backtracking engine takes 2^40 steps here; the hook would be killed and the call let through.
    const tools = run.wrapTools({ [hostile]: async () => "ran", [hostile.slice(0, -1)]: async () => "ran" });
    expect(await tools[hostile]!({})).toBe("ran");
    expect(await rejection(tools[hostile.slice(0, -1)]!({}))).toMatchObject({ reason: "all a" });
    // Linear is still work: a name of two million characters runs out of MATCHER_STEP_BUDGET, and the call never runs.
    let ran = false;
    const huge = run.wrapTools({ ["a".repeat(2_000_000)]: async () => (ran = true) });
    const failed = await rejection(Object.values(huge)[0]!({}));
    expect(failed).toMatchObject({ name: "MatcherBudgetExceeded", message: expect.stringContaining('matcher "^(a+)+$" spent its') });
    expect(ran).toBe(false);
  });

  it("match a vendor through [vendors] or wrapTools, and an arg by dotted path", async ({ expect }) => {
    const run = await runOf(
      `[vendors]\nspycloud = "^spycloud_"\n[[hooks.pre_tool_call]]\nvendor = "spycloud"\narg = "filter.email"\nhandlers = [{ type = "deny", reason = "vendor+arg" }]\n`,
    );
    const tools = run.wrapTools({ spycloud_lookup: async () => "ran", other: async () => "ran" });
    expect(await rejection(tools.spycloud_lookup({ filter: { email: "a@b.test" } }))).toMatchObject({ reason: "vendor+arg" });
    expect(await tools.spycloud_lookup({ filter: {} })).toBe("ran");
    expect(await tools.other({ filter: { email: "a@b.test" } })).toBe("ran");
    const asVendor = run.wrapTools({ other: async () => "ran" }, { vendor: "spycloud" });
    expect(await rejection(asVendor.other({ filter: { email: "x" } }))).toBeInstanceOf(HookDenied);
  });
});

describe("bounded walks over event data", () => {
  const deep = (levels: number): unknown => JSON.parse(`${"[".repeat(levels)}${"]".repeat(levels)}`);

  it("refuse a result, input or report nested past 64 levels before any handler walks it: closed, recorded", async ({ expect }) => {
    const dir = folder({});
    const sink = join(dir, "calls.jsonl");
    const run = await runOf(`[[hooks.post_tool_call]]\nhandlers = [{ type = "record", sink = ${toml(sink)} }]\n`);
    const seen: string[] = [];
    run.on("pre_tool_call", (event) => void seen.push(event.tool_name!));
    for (const levels of [65, 2_000, 100_000]) {
      const tools = run.wrapTools({ nested: async () => ({ who: "x", nested: deep(levels) }) });
      const denied = await rejection(tools.nested({}));
      expect(denied).toBeInstanceOf(HookDenied);
      expect(denied).toMatchObject({
        failure: "event_too_deep",
        reason: "event_too_deep: the event's tool_result nests objects and arrays deeper than 64 levels",
      });
    }
    const input = await rejection(run.wrapTools({ t: async () => 1 }).t({ q: deep(100_000) }));
    expect(input).toMatchObject({ failure: "event_too_deep", reason: expect.stringContaining("tool_input") });
    // The record handler never ran on them (it would have had to write the JSON out).
    expect(() => readFileSync(sink, "utf8")).toThrow();
    // Three results, the input, and the post_tool_call that reports the refused call (it carries the same input).
    expect(run.errors.map((error) => [error.event, error.code])).toEqual([
      ...[1, 2, 3].map(() => ["post_tool_call", "event_too_deep"]),
      ["pre_tool_call", "event_too_deep"],
      ["post_tool_call", "event_too_deep"],
    ]);
    const verdict = await run.end({ nested: deep(100_000) });
    expect(verdict).toMatchObject({ passed: false, reasons: [expect.stringContaining("the event's report nests")] });
  });

  it("refuse an answer nested past the bound as a malformed answer, and the door refuses such a value itself", async ({ expect }) => {
    const run = new HookRun();
    run.on("post_tool_call", () => ({ decision: "rewrite", updated_result: deep(100_000) }), { name: "deep" });
    expect(await run.wrapTools({ t: async () => "ok" }).t({})).toBe("ok");
    expect(run.errors).toMatchObject([
      { hook: "deep", code: "hook_malformed_answer", message: "the answer nests objects and arrays deeper than 64 levels" },
    ]);
    expect(() => run.alias.toAlias(deep(100_000))).toThrow(expect.objectContaining({ code: "rules_alias_too_deep" }));
    expect(() => run.alias.check(deep(100_000), {})).toThrow(expect.objectContaining({ code: "rules_alias_too_deep" }));
  });
});

describe("command handlers", () => {
  it("send the event on stdin without the run key, and read a rewrite on stdout", async ({ expect }) => {
    const dir = folder({});
    const run = await runOf(
      `[[hooks.pre_tool_call]]\nhandlers = [{ type = "command", command = ${toml(script(`require("fs").writeFileSync(${JSON.stringify(join(dir, "event.json"))},t);console.log(JSON.stringify({decision:"rewrite",updated_input:{...event.tool_input,limit:50}}))`))} }]\n`,
    );
    const got: unknown[] = [];
    const result = await run.wrapTools({ search: async (input) => (got.push(input), "ok") }, { vendor: "acme" }).search({ q: "x" });
    expect(result).toBe("ok");
    expect(got).toEqual([{ q: "x", limit: 50 }]);
    const event = JSON.parse(readFileSync(join(dir, "event.json"), "utf8")) as HookEvent;
    expect(event).toMatchObject({
      hook_event_name: "pre_tool_call",
      run_id: run.runId,
      tool_name: "search",
      tool_input: { q: "x" },
      vendor: "acme",
      matcher: "",
    });
    expect(Object.keys(event).sort()).toEqual(["cwd", "hook_event_name", "matcher", "run_id", "tool_input", "tool_name", "vendor"]);
  });

  it("spawn `args` directly, without a shell", async ({ expect }) => {
    const run = await runOf(
      `[[hooks.post_tool_call]]\nhandlers = [{ type = "command", name = "direct", command = ${toml(process.execPath)}, args = ["-e", "process.stdout.write('$HOME is literal')"] }]\n`,
    );
    expect(await run.wrapTools({ t: async () => "result" }).t({})).toBe("result\n\n[hook direct] $HOME is literal");
  });

  it("exit 2 denies with stderr as the reason: the tool never runs, and post_tool_call sees the denial", async ({ expect }) => {
    const dir = folder({});
    const run = await runOf(
      `[[hooks.pre_tool_call]]\nhandlers = [{ type = "command", command = "echo 'no deletes' >&2; exit 2" }]\n[[hooks.post_tool_call]]\nhandlers = [{ type = "record", sink = ${toml(join(dir, "{run_id}.jsonl"))} }]\n`,
    );
    let ran = false;
    const error = await rejection(run.wrapTools({ rm: async () => (ran = true) }).rm({ path: "/" }));
    expect(error).toBeInstanceOf(HookDenied);
    expect(error).toMatchObject({ code: "hook_denied", reason: "no deletes", message: "denied: no deletes" });
    expect(ran).toBe(false);
    const line = JSON.parse(readFileSync(join(dir, `${run.runId}.jsonl`), "utf8"));
    expect(line).toMatchObject({
      run_id: run.runId,
      event: "post_tool_call",
      tool_name: "rm",
      tool_input: { path: "/" },
      error: "denied: no deletes",
    });
  });

  it("treat exit 1, a malformed answer, a hang past the timeout and a flood of output as hook errors that deny", async ({ expect }) => {
    const dir = folder({});
    const cases = {
      exit: `echo broken >&2; exit 1`,
      maybe: `echo '{"decision":"maybe"}'`,
      findings: `echo '{"findings":"lots"}'`,
      hang: `sleep 30 & echo $! > ${join(dir, "sleeper.pid")}; wait`,
      flood: `yes`,
    };
    const rules = Object.entries(cases)
      .map(
        ([name, command]) =>
          `[[hooks.pre_tool_call]]\nmatcher = "^${name}$"\nhandlers = [{ type = "command", name = "${name}", command = ${toml(command)}, timeout = 1 }]\n`,
      )
      .join("");
    const run = await runOf(rules);
    const tools = run.wrapTools(Object.fromEntries(Object.keys(cases).map((name) => [name, async () => "ran"])));
    const codes: Record<string, unknown> = {};
    for (const name of Object.keys(cases)) {
      const error = await rejection(tools[name]!({}));
      expect(error).toBeInstanceOf(HookDenied);
      codes[name] = (error as HookDenied).failure;
    }
    expect(codes).toEqual({
      exit: "hook_exit",
      maybe: "hook_malformed_answer",
      findings: "hook_malformed_answer",
      hang: "hook_timeout",
      flood: "hook_output_too_large",
    });
    expect(run.errors.map((e) => [e.hook, e.code])).toEqual(Object.entries(codes));
    expect(run.errors[0]!.message).toContain("exit 1: broken".replace("exit", "exited"));
    // The timed-out command's whole process group was killed, the sleep it started too.
    const sleeper = Number(readFileSync(join(dir, "sleeper.pid"), "utf8"));
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(processState(sleeper), "gone, or a zombie waiting for a reaper").toMatch(/^(gone|Z)$/);
  });

  it("read plain text as context, and leave a post result as it was when a post handler fails", async ({ expect }) => {
    const run = await runOf(
      `[[hooks.post_tool_call]]\nhandlers = [{ type = "command", name = "note", command = "echo 'from cache'" }, { type = "command", name = "bad", command = "exit 3" }]\n`,
    );
    const tools = run.wrapTools({ s: async () => "text", o: async () => ({ rows: 2 }), n: async () => 42 });
    expect(await tools.s({})).toBe("text\n\n[hook note] from cache");
    expect(await tools.o({})).toEqual({ rows: 2, hook_context: ["[hook note] from cache"] });
    expect(await tools.n({})).toEqual({ result: 42, hook_context: ["[hook note] from cache"] });
    expect(run.errors.map((e) => [e.event, e.hook, e.code])).toEqual([
      ["post_tool_call", "bad", "hook_exit"],
      ["post_tool_call", "bad", "hook_exit"],
      ["post_tool_call", "bad", "hook_exit"],
    ]);
  });
});

describe("http handlers", () => {
  it("POST the event; $VAR headers come from allowed_env; the JSON answer applies", async ({ expect }) => {
    const dir = folder({
      "gateway-hooks.toml": `[[hooks.pre_tool_call]]\nhandlers = [{ type = "http", url = "${origin}/rewrite", allowed_env = ["RULES_TOKEN"], headers = { Authorization = "Bearer $RULES_TOKEN" } }]\n`,
    });
    const run = await HookRun.fromConfig(join(dir, "gateway-hooks.toml"), { env: { RULES_TOKEN: "t0k", OTHER: "never" } });
    const got: unknown[] = [];
    await run.wrapTools({ find: async (input) => got.push(input) }).find({ q: "orig" });
    expect(got).toEqual([{ q: "rewritten", auth: "Bearer t0k" }]);
    const posted = JSON.parse(seen.at(-1)!.body) as HookEvent;
    expect(posted).toMatchObject({ hook_event_name: "pre_tool_call", tool_name: "find", tool_input: { q: "orig" } });
  });

  it("treat a 500, JSON that is not JSON, and no answer as hook errors; text/plain is context", async ({ expect }) => {
    const rule = (path: string, extra = "") =>
      `[[hooks.pre_tool_call]]\nmatcher = "^${path.slice(1).replace("-", "_")}$"\nhandlers = [{ type = "http", url = "${origin}${path}"${extra} }]\n`;
    const run = await runOf(rule("/500") + rule("/bad-json") + rule("/hang", ", timeout = 1") + rule("/text", ', name = "lookup"'));
    const tools = run.wrapTools({ "500": async () => 1, bad_json: async () => 1, hang: async () => 1, text: async () => "r" });
    expect(await rejection(tools["500"]!({}))).toMatchObject({ failure: "hook_http_status" });
    expect(await rejection(tools.bad_json({}))).toMatchObject({ failure: "hook_malformed_answer" });
    expect(await rejection(tools.hang({}))).toMatchObject({ failure: "hook_timeout" });
    expect(await tools.text({})).toBe("r\n\n[hook lookup] looked it up");
    const flood = await runOf(rule("/flood"));
    expect(await rejection(flood.wrapTools({ flood: async () => 1 }).flood({}))).toMatchObject({ failure: "hook_output_too_large" });
    expect(run.errors[0]!.message).toContain("answered 500: boom");
  });
});

describe("callable, deny and record handlers", () => {
  it("import a callable relative to the rules file; a callable that throws is a hook error", async ({ expect }) => {
    const run = await runOf(
      `[[hooks.pre_tool_call]]\nmatcher = "^ok$"\nhandlers = [{ type = "callable", target = "./lib/g.mjs#tag" }]\n[[hooks.pre_tool_call]]\nmatcher = "^boom$"\nhandlers = [{ type = "callable", target = "./lib/g.mjs#boom", name = "boomer" }]\n`,
      {},
    ).catch(() => undefined);
    expect(run).toBeUndefined(); // lib/g.mjs does not exist yet: refused at start
    const dir = folder({
      "gateway-hooks.toml": `[[hooks.pre_tool_call]]\nmatcher = "^ok$"\nhandlers = [{ type = "callable", target = "./g.mjs#tag" }]\n[[hooks.pre_tool_call]]\nmatcher = "^boom$"\nhandlers = [{ type = "callable", target = "./g.mjs#boom", name = "boomer" }]\n`,
      "g.mjs": `export const tag = (e) => ({ decision: "rewrite", updated_input: { ...e.tool_input, tagged: true } });\nexport function boom() { throw new RangeError("no budget"); }\n`,
    });
    const loaded = await HookRun.fromConfig(join(dir, "gateway-hooks.toml"));
    const tools = loaded.wrapTools({ ok: async (input) => input, boom: async () => "ran" });
    expect(await tools.ok({ a: 1 })).toEqual({ a: 1, tagged: true });
    const error = await rejection(tools.boom({}));
    expect(error).toMatchObject({ failure: "hook_threw", reason: expect.stringContaining("boomer threw RangeError: no budget") });
  });

  it("record one line per call with its documented fields, {run_id} filled in", async ({ expect }) => {
    const dir = folder({});
    const run = await runOf(
      `[[hooks.post_tool_call]]\nhandlers = [{ type = "record", sink = ${toml(join(dir, "runs/{run_id}/t.jsonl"))}, session = "s-1", source = "agent" }]\n`,
    );
    const tools = run.wrapTools({
      a: async () => ({ n: 1 }),
      b: async () => {
        throw new Error("down");
      },
    });
    await tools.a({ x: 1 });
    await rejection(tools.b({}));
    const lines = readFileSync(join(dir, "runs", run.runId, "t.jsonl"), "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(lines).toMatchObject([
      {
        run_id: run.runId,
        event: "post_tool_call",
        session: "s-1",
        source: "agent",
        tool_name: "a",
        tool_input: { x: 1 },
        tool_result: { n: 1 },
      },
      { tool_name: "b", error: "down" },
    ]);
    expect(Object.keys(lines[0]).sort()).toEqual(["event", "run_id", "session", "source", "tool_input", "tool_name", "tool_result", "ts"]);
    // Records hold what tools were given and returned: the sink and the folders it made are the owner's alone.
    expect(statSync(join(dir, "runs", run.runId, "t.jsonl")).mode & 0o777).toBe(0o600);
    expect(statSync(join(dir, "runs", run.runId)).mode & 0o777).toBe(0o700);
    expect(statSync(join(dir, "runs")).mode & 0o777).toBe(0o700);
  });
});

describe("merging and order", () => {
  it("deny beats rewrite in one rule; a second rewriter is a HookError", async ({ expect }) => {
    const run = new HookRun();
    const rewrite = () => ({ decision: "rewrite", updated_input: { x: 2 } });
    run.on("pre_tool_call", [rewrite, new DenyHandler("closed")], { matcher: "^d$" });
    run.on("pre_tool_call", [rewrite, rewrite], { matcher: "^two$" });
    const tools = run.wrapTools({ d: async () => 1, two: async () => 1 });
    expect(await rejection(tools.d({}))).toMatchObject({ reason: "closed" });
    const error = await rejection(tools.two({}));
    expect(error).toBeInstanceOf(HookError);
    expect(error).toMatchObject({ code: "hook_two_rewriters" });
  });

  it("runs rules in order, each seeing the previous rewrite; before: true goes first; findings accumulate", async ({ expect }) => {
    const run = new HookRun();
    const saw: unknown[] = [];
    run.on("pre_tool_call", (e) => ({
      decision: "rewrite",
      updated_input: { step: [...(e.tool_input!.step as number[]), 1] },
      findings: [{ check: "one" }],
    }));
    run.on("pre_tool_call", (e) => ({ decision: "rewrite", updated_input: { step: [...(e.tool_input!.step as number[]), 2] } }));
    run.on("PreToolUse", (e) => ({ decision: "rewrite", updated_input: { step: [...(e.tool_input!.step as number[]), 0] } }), {
      before: true,
    });
    run.on("post_tool_call", (e) => void saw.push(e.tool_input), { name: "watch" });
    const tools = run.wrapTools({ t: async (input) => input.step });
    expect(await tools.t({ step: [] })).toEqual([0, 1, 2]);
    await tools.t({ step: [] });
    expect(saw).toEqual([{ step: [0, 1, 2] }, { step: [0, 1, 2] }]);
    expect(run.findings).toEqual([
      { check: "one", hook: "function", event: "pre_tool_call" },
      { check: "one", hook: "function", event: "pre_tool_call" },
    ]);
  });

  it("re-throws a tool's own error class with the message post_tool_call left", async ({ expect }) => {
    class VendorError extends Error {
      readonly status = 429;
    }
    const run = new HookRun();
    run.on("post_tool_call", (e) => ({ decision: "rewrite", updated_error: e.error!.replace("secret-id", "[id]") }));
    const error = await rejection(
      run
        .wrapTools({
          t: async () => {
            throw new VendorError("limit for secret-id");
          },
        })
        .t({}),
    );
    expect(error).toBeInstanceOf(VendorError);
    expect(error).toMatchObject({ message: "limit for [id]", status: 429 });
  });

  it("logs an async handler's answer without applying it", async ({ expect }) => {
    const run = new HookRun();
    run.on("pre_tool_call", [new DenyHandler("only logged", { async: true })]);
    expect(await run.wrapTools({ t: async () => "ran" }).t({})).toBe("ran");
    await run.settled();
    expect(run.asyncAnswers).toEqual([{ event: "pre_tool_call", hook: "deny", answer: { decision: "deny", reason: "only logged" } }]);
  });

  it("accepts Claude Code's hookSpecificOutput form from a command", async ({ expect }) => {
    const run = await runOf(
      `[[hooks.pre_tool_call]]\nmatcher = "^deny$"\nhandlers = [{ type = "command", command = "cat deny.json" }]\n` +
        `[[hooks.pre_tool_call]]\nmatcher = "^edit$"\nhandlers = [{ type = "command", name = "cc", command = "cat edit.json" }]\n`,
      {
        "deny.json": JSON.stringify({
          hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "deny", permissionDecisionReason: "cc says no" },
        }),
        "edit.json": JSON.stringify({
          hookSpecificOutput: {
            hookEventName: "PreToolUse",
            permissionDecision: "allow",
            updatedInput: { path: "/safe" },
            additionalContext: "moved",
          },
        }),
      },
    );
    const tools = run.wrapTools({ deny: async () => 1, edit: async (input) => input.path });
    expect(await rejection(tools.deny({}))).toMatchObject({ reason: "cc says no" });
    expect(await tools.edit({ path: "/etc" })).toBe("/safe\n\n[hook cc] moved");
  });
});

describe("sessions and the end of the run", () => {
  it("fires pre_request and post_response around a request; a 4xx is returned, a network failure is a value", async ({ expect }) => {
    const run = new HookRun();
    run.on("pre_request", (e) => ({ decision: "rewrite", updated_request: { path: e.request!.path.replace("/v0/", "/api/") } }), {
      matcher: "^/v0/",
    });
    run.on("post_response", (e) => ({ decision: "rewrite", updated_response: { wrapped: e.response!.body } }), { matcher: "^/api/ok" });
    const session = run.session({ baseUrl: origin });
    const ok = await session.request("POST", "/v0/ok", { body: { a: 1 } });
    expect(ok).toMatchObject({ status: 200, body: { wrapped: { path: "/api/ok", body: '{"a":1}' } } });
    expect(ok.elapsed).toBeGreaterThan(0);
    expect(await session.request("GET", "/api/missing")).toMatchObject({ status: 404, body: { path: "/api/missing" } });
    const world = new HookRun();
    world.on("pre_tool_call", new DenyHandler("not in this world"), { vendor: "world", matcher: "^secret$" });
    const calls = world.session({ call: async (tool, input) => `${tool}(${JSON.stringify(input)})` }, { vendor: "world" });
    expect(await calls.call("lookup", { id: 1 })).toBe('lookup({"id":1})');
    expect(await rejection(calls.call("secret", {}))).toMatchObject({ reason: "not in this world" });
    const failing = run.session(
      {},
      {
        requestFn: async () => {
          throw new Error("ECONNREFUSED");
        },
      },
    );
    expect(await failing.request("GET", "/x")).toMatchObject({ status: null, body: null, error: "ECONNREFUSED" });
  });

  it("ends with a verdict: a deny or a failing handler on run_end fails it", async ({ expect }) => {
    const passing = new HookRun();
    passing.on("run_end", (e) => ({ findings: [{ check: "report_seen", size: JSON.stringify(e.report).length }] }));
    expect(await passing.end({ ok: true }, { "graph.json": "{}" })).toMatchObject({
      passed: true,
      reasons: [],
      findings: [{ check: "report_seen", size: 11 }],
    });
    const failing = await runOf(`[[hooks.run_end]]\nhandlers = [{ type = "command", name = "grader", command = "exit 7" }]\n`);
    const verdict = await failing.end({});
    expect(verdict.passed).toBe(false);
    expect(verdict.reasons[0]).toContain("hook grader failed (hook_exit)");
    expect(failing.summary()).toMatchObject({ run_id: failing.runId, hook_errors: 1, ended: true });
  });

  it("holds a failed verdict: every end after a failed one is recorded, adds findings, and never passes the run again", async ({
    expect,
  }) => {
    const run = new HookRun();
    run.on("run_end", (event) => {
      const text = JSON.stringify(event.report);
      return text.includes("leak")
        ? { decision: "deny", reason: "a leak", findings: [{ check: "leak" }] }
        : { findings: [{ check: "clean" }] };
    });
    expect(run.verdict()).toMatchObject({ passed: true, ends: [] });
    const first = await run.end({ text: "a leak" }, {}, "Stop");
    expect(first).toMatchObject({ passed: false, reasons: ["a leak"], ends: [{ event: "Stop", passed: false, reasons: ["a leak"] }] });
    const second = await run.end({ text: "all clean" }, {}, "SessionEnd");
    expect(second).toMatchObject({
      passed: false,
      reasons: ["a leak"],
      findings: [{ check: "leak" }, { check: "clean" }],
      ends: [
        { event: "Stop", passed: false },
        { event: "SessionEnd", passed: true, reasons: [] },
      ],
    });
    for (const end of second.ends) expect(new Date(end.at).toISOString()).toBe(end.at);
  });

  it("counts calls, denials and rewrites in the summary", async ({ expect }) => {
    const run = new HookRun();
    run.on("pre_tool_call", new DenyHandler("no"), { matcher: "^x$" });
    run.on("pre_tool_call", () => ({ decision: "rewrite", updated_input: {} }), { matcher: "^y$" });
    const tools = run.wrapTools({ x: async () => 1, y: async () => 1 });
    await rejection(tools.x({}));
    await tools.y({});
    expect(run.summary()).toEqual({
      run_id: run.runId,
      calls: 2,
      requests: 0,
      denied: 1,
      rewritten: 1,
      hook_errors: 0,
      findings: 0,
      async_answers: 0,
      ended: false,
      leak_through_inbound: 0,
    });
  });
});

describe("bounds on a handler's time and an event's size", () => {
  it("give a callable 60 s by default, so one that never settles denies the call (hook_timeout)", async ({ expect }) => {
    expect([defaultTimeoutSeconds("callable", "pre_tool_call"), defaultTimeoutSeconds("callable", "run_end")]).toEqual([60, 120]);
    vi.useFakeTimers();
    try {
      const run = new HookRun().on("pre_tool_call", new FunctionHandler(() => new Promise(() => {}), { type: "callable", name: "hang" }));
      const call = rejection(run.wrapTools({ t: async () => "ran" }).t({}));
      await vi.advanceTimersByTimeAsync(60_000);
      expect(await call).toMatchObject({
        reason: "hook hang failed (hook_timeout): hang did not answer within 60 s",
        failure: "hook_timeout",
      });
    } finally {
      vi.useRealTimers();
    }
  });

  it("count '{', '[' and ',' outside strings only, escaped quotes included, before anything is parsed", ({ expect }) => {
    expect(jsonStructureOver('[{"a,[{":"\\"{[,"},1]', 3)).toBe(false);
    expect(jsonStructureOver('[{"a,[{":"\\"{[,"},1,2]', 3)).toBe(true);
    expect(jsonStructureOver(`[${"{},".repeat(999_999)}{}]`)).toBe(false);
    expect(jsonStructureOver(`[${"{},".repeat(1_000_000)}{}]`)).toBe(true);
    expect(jsonStructureOver(JSON.stringify(",".repeat(3_000_000)))).toBe(false);
  });
});
