// `rayrun hooks run`: the rules file as a Claude Code hook. Claude Code spawns one
// process per event, so the run's id, key and findings live under
// `.rayrun/hooks/<session id>/` in the project between them (see run-files.ts).
import { createHash, randomBytes } from "node:crypto";
import { createReadStream, existsSync } from "node:fs";
import { lstat, readFile, writeFile } from "node:fs/promises";
import { homedir } from "node:os";
import { isAbsolute, join, resolve, sep } from "node:path";
import { createInterface } from "node:readline";
import { AliasError, type SeedEntity } from "../core/alias/seeds.ts";
import { jsonStructureOver, MAX_JSON_STRUCTURE } from "../core/bounds.ts";
import { HookError, RulesFileError } from "../core/errors.ts";
import { eventNamed, type EventName, type Finding, type ToolInput } from "../core/events.ts";
import { newRunId, type AsyncAnswer, type RecordedFailure, type RunEnd } from "../core/run.ts";
import { HookRun } from "./hook-run.ts";
import { readSeedFile } from "./load.ts";
import { appendLines, prepareRunDir, prepareStateDir, readLines, replaceFile, RunFilesError, withSessionLock } from "./run-files.ts";
import { SessionCounts } from "./session-counts.ts";

/** What the process prints and how it exits, in Claude Code's terms. */
export interface AgentReply {
  stdout?: unknown;
  stderr?: string;
  exitCode: 0 | 1 | 2;
  /** Answered at the deadline while rules still run: the process must exit now, not wait for them. */
  abandoned?: true;
}

/** Claude Code's timeout for a command hook when its settings give none (2.1.332: 600,000 ms). */
export const CLAUDE_HOOK_TIMEOUT_SECONDS = 600;

/**
 * How long `hooks run` may take to answer when Claude Code allows a hook `timeout` seconds: a margin short
 * of it (a fifth, at most 5 s), for starting Node and writing the answer. Past Claude Code's own timeout it
 * kills the hook and runs the call as if the hook had allowed it; refusing first keeps it closed.
 */
export const answerBudgetSeconds = (timeout: number) => timeout - Math.min(5, timeout / 5);

export interface ReplyOptions {
  config?: string;
  seed?: string;
  /** When the answer is due (epoch ms): at that moment the event is refused as hook_timeout, whatever still runs. */
  deadline?: number;
}

/** The run's lasting state: written once when the session's first event arrives. */
interface SessionState {
  run_id: string;
  /** Per-run secret for the alias door's derivations; never sent in an event. */
  key: string;
  started_at: string;
  /** The project folder the session's rules and files are found from (sessionProject). */
  project_dir?: string;
  /** The rules file's SHA-256 when the session started: it is read once per session. */
  rules_sha256?: string;
}

/** A plain name: letters, digits, `.`, `_`, `-`, at most 128 (bytes, as they are ASCII), and not only dots (`.`, `..` name folders above it). */
const SESSION_ID = /^(?!\.+$)[A-Za-z0-9._-]{1,128}$/;
/** Where a refusal has to say which event it answers before the JSON could be read: Claude Code's key, in the first bytes. */
const EVENT_NAME_IN_TEXT = /"hook_event_name"\s*:\s*"([A-Za-z_]+)"/;

/**
 * The rules event an agent's event fires: the rules file's own names and Claude Code's (events.ts), and
 * `PostToolUseFailure`, Claude Code's event for a tool that failed, whose output (`error`) is post_tool_call's
 * error text. It is not a rules-file name: a `[[hooks.post_tool_call]]` rule already runs on a failure.
 */
function agentEventNamed(name: string): EventName | undefined {
  return name === "PostToolUseFailure" ? "post_tool_call" : eventNamed(name);
}

/** Bytes of one event on stdin: what a PostToolUse carries is the tool's output, which an outsider sizes. */
export const MAX_HOOK_INPUT_BYTES = 64 * 1024 * 1024;

/** `stdin`: the event as read, at most MAX_HOOK_INPUT_BYTES of it (`truncated` when there was more). */
export async function replyToClaude(stdin: string, options: ReplyOptions, truncated = false): Promise<AgentReply> {
  const named = () => {
    const found = EVENT_NAME_IN_TEXT.exec(stdin.slice(0, 64 * 1024))?.[1];
    return (found && eventNamed(found)) || "pre_tool_call";
  };
  if (truncated)
    return refuse(named(), {}, "hook_input_too_large", `the event on stdin is larger than ${MAX_HOOK_INPUT_BYTES} bytes; it was not read`);
  // Bounded before it is parsed: what parsing costs is per value, and a process that runs out of memory exits
  // 134, which Claude Code reads as a non-blocking error, passing the call or its output.
  if (jsonStructureOver(stdin))
    return refuse(
      named(),
      {},
      "hook_input_too_large",
      `the event on stdin holds more than ${MAX_JSON_STRUCTURE} objects, arrays and elements ('{', '[' and ',' outside strings); it was not parsed`,
    );
  let input: Record<string, unknown>;
  try {
    const parsed: unknown = JSON.parse(stdin);
    if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) throw new Error("not an object");
    input = parsed as Record<string, unknown>;
  } catch {
    // The event's kind, if the text names one, decides how to refuse: a PostToolUse is blocked with its output withheld.
    return refuse(named(), {}, "invalid_hook_input", "stdin must be the agent's hook event as a JSON object");
  }
  const eventName = typeof input.hook_event_name === "string" ? input.hook_event_name : "";
  const event = agentEventNamed(eventName);
  // Not an event rayrun answers, so there is nothing it guards: exit 1, a hook error Claude Code reports.
  if (!event)
    return failure(
      "unknown_hook_event",
      `hook_event_name ${JSON.stringify(input.hook_event_name)} is not one rayrun answers (PreToolUse, PostToolUse, PostToolUseFailure, Stop, SessionEnd)`,
    );
  const sessionId = input.session_id;
  if (typeof sessionId !== "string" || !SESSION_ID.test(sessionId))
    return refuse(
      event,
      input,
      "invalid_session_id",
      "session_id must be a plain name: 1–128 letters, digits, '.', '_' or '-', and not only dots",
    );
  const cwd = typeof input.cwd === "string" ? input.cwd : process.cwd();
  // Aborted at the deadline: handlers still running are stopped (a command's process group killed) before the
  // process exits with its refusal, so nothing a rule started outlives the answer.
  const stopping = new AbortController();
  const answering = (async () => {
    try {
      const project = await sessionProject(sessionId, cwd);
      return await replyInSession(input, event, eventName, sessionId, project, options, stopping.signal);
    } catch (error) {
      if (error instanceof RunFilesError || error instanceof SessionProjectError) return refuse(event, input, error.code, error.message);
      // Anything unforeseen (a damaged session file, a file system error) fails closed too: exit 1 would let the call through.
      return refuse(event, input, "hooks_run_failed", `unexpected failure: ${error instanceof Error ? error.message : String(error)}`);
    }
  })();
  if (options.deadline === undefined) return answering;
  // The timer also keeps the process alive: a rule that never settles, with nothing else pending, would
  // otherwise let Node exit with no answer (exit 0 or 13, both of which Claude Code reads as going on).
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<AgentReply>((resolve) => {
    timer = setTimeout(
      () => {
        stopping.abort();
        resolve({
          ...refuse(event, input, "hook_timeout", "the rules did not answer in time (hooks run --timeout, less a margin)"),
          abandoned: true,
        });
      },
      Math.max(0, options.deadline! - Date.now()),
    );
  });
  try {
    return await Promise.race([answering, late]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * The session's project folder, which its rules file, `--config`, `--seed` and its own folder are found
 * from: fixed for the whole session, never the event's `cwd`, which the agent moves with `cd` (into a
 * folder holding a rules file of its own making, say). Claude Code names it in every hook's environment
 * (`CLAUDE_PROJECT_DIR`); without it, the session's first event's `cwd` is kept, keyed by the session id,
 * in the user's state folder, and every later event of the session uses that.
 */
export async function sessionProject(sessionId: string, cwd: string, env: NodeJS.ProcessEnv = process.env): Promise<string> {
  if (env.CLAUDE_PROJECT_DIR) return resolve(env.CLAUDE_PROJECT_DIR);
  const stateHome = env.XDG_STATE_HOME && isAbsolute(env.XDG_STATE_HOME) ? env.XDG_STATE_HOME : join(homedir(), ".local", "state");
  const sessions = join(stateHome, "rayrun", "hooks");
  await prepareStateDir(sessions);
  const path = join(sessions, `${sessionId}.json`);
  const first = resolve(cwd);
  try {
    // `wx`: of parallel first events, whichever wrote first names the project for all of them.
    await writeFile(path, `${JSON.stringify({ project_dir: first, at: new Date().toISOString() })}\n`, { flag: "wx", mode: 0o600 });
    return first;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
  }
  const info = await lstat(path);
  if (!info.isFile()) throw new RunFilesError(`${path} is not a regular file (a symlink is never followed)`);
  const kept = (JSON.parse(await readFile(path, "utf8")) as { project_dir?: unknown }).project_dir;
  if (typeof kept !== "string" || !isAbsolute(kept)) throw new Error(`${path} names no project folder; the session's state is damaged`);
  // A session id used again after its project folder's session state was removed (a hand-made id such as
  // the README's, in a new clone) starts over where it is now. Never within a minute: that is a first
  // event still making the folder.
  if (!existsSync(join(kept, ".rayrun", "hooks", sessionId, "state.json")) && Date.now() - info.mtimeMs > 60_000) {
    await replaceFile(path, `${JSON.stringify({ project_dir: first, at: new Date().toISOString() })}\n`);
    return first;
  }
  // An event from outside the session's project is another project using the same session id (a hand-made one, in a
  // second clone), or the agent's cd out of it: refused, never answered with the first project's rules or its own.
  if (first !== kept && !first.startsWith(kept.endsWith(sep) ? kept : kept + sep))
    throw new SessionProjectError(
      `session ${sessionId} belongs to ${kept}, and this event's cwd ${first} is outside it; use another session id for another project`,
    );
  return kept;
}

/** An event of a session whose project is elsewhere (sessionProject). */
export class SessionProjectError extends Error {
  readonly code = "session_project_mismatch";
}

/** The answer to an event of a known kind and session, in the session's folder under its project folder. */
async function replyInSession(
  input: Record<string, unknown>,
  event: EventName,
  eventName: string,
  sessionId: string,
  cwd: string,
  options: ReplyOptions,
  signal: AbortSignal,
): Promise<AgentReply> {
  const refused = (code: string, message: string) => refuse(event, input, code, message);
  // Relative paths are the project's, as the rules file is: the hook process's own folder moves with the agent's `cd` too.
  const configPath = options.config
    ? resolve(cwd, options.config)
    : ["gateway-hooks.toml", "gateway-hooks.json"].map((name) => join(cwd, name)).find(existsSync);
  if (!configPath) return refused("rules_file_unreadable", `no gateway-hooks.toml in ${cwd}; pass --config`);
  const seedFile = options.seed === undefined ? undefined : resolve(cwd, options.seed);

  const dir = join(cwd, ".rayrun", "hooks", sessionId);
  try {
    await prepareRunDir(dir);
  } catch (error) {
    if (error instanceof RunFilesError) return refused(error.code, error.message);
    throw error;
  }
  // The rules file is read once, when the run starts (a later edit is for a new session): its digest is kept with
  // the session's first event, and an event that finds the file changed is refused, never run under other rules.
  const rulesDigest = await fileDigest(configPath);
  const state = await sessionState(dir, cwd, rulesDigest);
  if (rulesDigest !== undefined && state.rules_sha256 !== undefined && state.rules_sha256 !== rulesDigest)
    return refused(
      "rules_file_changed",
      `${configPath} changed since this session started; the rules file is read once per session, so start a new session to use it`,
    );
  let run: HookRun;
  try {
    run = await HookRun.fromConfig(configPath, { runId: state.run_id, cwd, aliasKey: state.key, signal });
    // Every process derives the same aliases: same key, same seeds (the file given, else the copy kept on the first event).
    const seeds = await sessionSeeds(dir, seedFile);
    if (seeds) await run.seed(seeds);
  } catch (error) {
    if (error instanceof RulesFileError || error instanceof AliasError) return refused(error.code, error.message);
    throw error;
  }
  const files = { findings: join(dir, "findings.jsonl"), errors: join(dir, "errors.jsonl"), async: join(dir, "async.jsonl") };
  // Under the session's lock, so a parallel process's append is never read half-written.
  await withSessionLock(dir, async () => {
    run.findings.push(...(await readLines<Finding>(files.findings)));
    run.errors.push(...(await readLines<RecordedFailure>(files.errors)));
    run.asyncAnswers.push(...(await readLines<AsyncAnswer>(files.async)));
  });
  const known = { findings: run.findings.length, errors: run.errors.length, async: run.asyncAnswers.length };
  const counts = new SessionCounts(dir);

  let reply: AgentReply;
  try {
    reply = await answer(run, event, eventName, input, dir, counts);
  } catch (error) {
    if (!(error instanceof HookError)) throw error;
    reply = refused(error.code, error.message);
  }
  await run.settled();
  // One turn on the session's files: this event's counts (after an end's own save, nothing) and lines.
  await withSessionLock(dir, async () => {
    await counts.saveHoldingLock(run);
    await appendLines(files.findings, run.findings.slice(known.findings));
    await appendLines(files.errors, run.errors.slice(known.errors));
    await appendLines(files.async, run.asyncAnswers.slice(known.async));
  });
  return reply;
}

async function answer(
  run: HookRun,
  event: EventName,
  eventName: string,
  input: Record<string, unknown>,
  dir: string,
  counts: SessionCounts,
): Promise<AgentReply> {
  const toolName = typeof input.tool_name === "string" ? input.tool_name : "";
  const toolInput = (input.tool_input ?? {}) as ToolInput;
  const base = { tool_name: toolName, vendor: run.vendorOf(toolName), tool_input: toolInput };

  if (event === "pre_tool_call") {
    const pre = await run.dispatch({ ...base, hook_event_name: "pre_tool_call" });
    run.addCounts({ calls: 1, denied: pre.denied ? 1 : 0, rewritten: pre.rewritten ? 1 : 0 });
    // The reason (on exit 2) or the context is read by the model: metered.
    const shown = run.toAgent(pre);
    if (shown.reason !== undefined) return { stderr: shown.reason, exitCode: 2 };
    const specific: Record<string, unknown> = { hookEventName: "PreToolUse" };
    // The rewritten input alone, with no permissionDecision: Claude Code (2.1.332) applies it and then runs its own
    // permission check on it, as on any call. An "allow" here would approve the call itself, so any call the model
    // put an alias into would skip the user's settings and prompt.
    if (pre.rewritten) specific.updatedInput = pre.event.tool_input;
    if (shown.contexts.length) specific.additionalContext = shown.contexts.join("\n");
    return Object.keys(specific).length > 1 ? { stdout: { hookSpecificOutput: specific }, exitCode: 0 } : { exitCode: 0 };
  }

  if (eventName === "PostToolUseFailure") return answerFailure(run, base, input, dir, counts);

  if (event === "post_tool_call") {
    const post = await run.dispatch({ ...base, hook_event_name: "post_tool_call", tool_result: input.tool_response });
    run.addCounts({ denied: post.denied ? 1 : 0, rewritten: post.rewritten ? 1 : 0 });
    // The reason or the context, in alias space when an alias rule guards the call, and metered.
    const shown = run.toAgent(post);
    if (post.denied?.failure === "event_too_deep") {
      // No rule read this output (nothing could, safely): the model gets neither it nor a rewrite of it.
      const output = withheld(post.denied.failure);
      run.meterInbound(output);
      return { stdout: blockWithOutput(shown.reason ?? post.denied.reason, output), exitCode: 0 };
    }
    if (shown.reason !== undefined) {
      if (post.aliased) {
        // A deny ends the rules before the alias rule rewrote the output, and exit 2 would leave the model the
        // tool's own output beside the reason. A block answer replaces it with the output in alias space.
        const output = aliasedOutput(run, input.tool_response);
        run.meterInbound(output);
        return { stdout: blockWithOutput(shown.reason, output), exitCode: 0 };
      }
      // Exit 2 cannot replace the output: the model reads the tool's own output beside the reason.
      run.meterInbound(input.tool_response);
      return { stderr: shown.reason, exitCode: 2 };
    }
    // What the agent reads next: real values still in it are leaks, counted for the whole session.
    run.meterInbound(post.event.tool_result);
    const specific: Record<string, unknown> = { hookEventName: "PostToolUse" };
    if (post.rewritten && post.event.tool_result !== input.tool_response)
      Object.assign(specific, { updatedToolOutput: post.event.tool_result, updatedMCPToolOutput: post.event.tool_result });
    if (shown.contexts.length) specific.additionalContext = shown.contexts.join("\n");
    return Object.keys(specific).length > 1 ? { stdout: { hookSpecificOutput: specific }, exitCode: 0 } : { exitCode: 0 };
  }

  // Stop and SessionEnd end the run, each of them: the verdict is every end's together (verdict.json keeps
  // them), so a later end can add findings but never turn a failed run into a passed one. The report is
  // the agent's own event. From here the run's counters are the whole session's (counts.json).
  await counts.save(run);
  const stopsPath = join(dir, "stops.jsonl");
  const report: Record<string, unknown> = { agent_event: eventName, ...input };
  const artifacts: Record<string, string> = {};
  if (eventName === "SessionEnd") {
    // SessionEnd carries no last message: its check reads what the session's Stops reported, and what the
    // model wrote in the transcript (its text and tool calls; the tools' outputs are not the model's).
    const stops = await withSessionLock(dir, () => readLines<{ last_assistant_message: string }>(stopsPath));
    report.earlier_stops = stops.map((stop) => stop.last_assistant_message);
    const transcript = await modelsTranscript(input.transcript_path);
    report.transcript = transcript === undefined ? "unreadable" : "read";
    if (transcript !== undefined) artifacts.transcript = transcript;
  }
  const own = (await run.end(report, artifacts, eventName)).ends.at(-1)!;
  const verdict = await recordEnd(run, dir, own, async () => {
    if (eventName === "Stop" && typeof input.last_assistant_message === "string")
      await appendLines(stopsPath, [{ at: own.at, last_assistant_message: input.last_assistant_message }]);
  });
  // The map for a grader, beside the key it came from (state.json).
  if (run.alias.seeded) await replaceFile(join(dir, "legend.json"), `${JSON.stringify(run.legend(), null, 2)}\n`);
  if (verdict.passed) return { exitCode: 0 };
  const reason = `the rules failed the run: ${[...new Set(verdict.reasons)].join("; ")}`;
  if (eventName === "Stop") {
    // Blocking a Stop makes Claude Code continue, so the model can answer again: only for this Stop's own
    // failure, and once. Otherwise (already continuing, or failed earlier) it is said to the user instead.
    if (!own.passed && input.stop_hook_active !== true)
      return { stderr: `the rules failed the run: ${own.reasons.join("; ")}`, exitCode: 2 };
    return { stdout: { systemMessage: reason }, exitCode: 0 };
  }
  return { stderr: reason, exitCode: 2 };
}

/**
 * A failed tool's output under Claude Code (`PostToolUseFailure`): it goes through the post_tool_call rules
 * as the error text, as in the SDK, but Claude Code (2.1.332) takes only `additionalContext` from this
 * event's hooks: no answer replaces or withholds the text, and neither `decision: "block"`, exit 2 nor
 * `continue: false` keeps it from the model. So the model reads the tool's own text, which is what the
 * meter counts; when it holds a real value, or a rule rewrote it (a rewrite Claude Code cannot apply), the
 * run fails at once (an end in verdict.json, which every later end keeps) and the model is told so.
 */
async function answerFailure(
  run: HookRun,
  base: { tool_name: string; vendor?: string; tool_input: ToolInput },
  input: Record<string, unknown>,
  dir: string,
  counts: SessionCounts,
): Promise<AgentReply> {
  const error = typeof input.error === "string" ? input.error : JSON.stringify(input.error ?? null);
  const post = await run.dispatch({ ...base, hook_event_name: "post_tool_call", error });
  run.addCounts({ denied: post.denied ? 1 : 0, rewritten: post.rewritten ? 1 : 0 });
  const shown = run.toAgent(post);
  const reasons: string[] = [];
  if (run.alias.seeded) {
    try {
      // The run_end scan's findings (kinds and counts, never the values), placed at this event.
      const { findings, total } = run.alias.check(error, {});
      run.addCounts({ leak_through_inbound: total });
      if (total > 0) {
        const kinds = [...new Set(findings.map((finding) => finding.kind))].join(", ");
        reasons.push(
          `alias: ${total} real value(s) (${kinds}) reached the model in ${base.tool_name}'s failed output, which no hook can replace`,
        );
        const where = `PostToolUseFailure ${base.tool_name} error`;
        for (const finding of findings) run.findings.push({ ...finding, where, hook: "rayrun", event: "post_tool_call" });
      }
    } catch (failed) {
      if (!(failed instanceof AliasError)) throw failed;
      // Too large for the door to read, so it cannot be said to hold no real value.
      reasons.push(`alias: ${base.tool_name}'s failed output reached the model unread (${failed.code})`);
    }
  }
  if (!post.denied && post.event.error !== error && reasons.length === 0)
    reasons.push(`a rule rewrote ${base.tool_name}'s failed output, which no hook can replace: the model read it as it was`);
  const lines = post.denied ? [] : [...shown.contexts];
  if (reasons.length) {
    const own: RunEnd = { event: "PostToolUseFailure", at: new Date().toISOString(), passed: false, reasons };
    await counts.save(run);
    await recordEnd(run, dir, own);
    const told = `[hook rayrun] the output of this failed call could not be guarded: ${reasons.join("; ")}. The run has failed. Do not repeat or use what it names.`;
    run.meterInbound(told);
    lines.push(told);
  }
  // A deny has nothing to withhold here either: its reason is shown beside the output (exit 2).
  if (shown.reason !== undefined) return { stderr: [shown.reason, ...lines].join("\n"), exitCode: 2 };
  if (!lines.length) return { exitCode: 0 };
  return { stdout: { hookSpecificOutput: { hookEventName: "PostToolUseFailure", additionalContext: lines.join("\n") } }, exitCode: 0 };
}

/**
 * Adds one end to the session's verdict.json, under the session's lock: the ends the session's earlier
 * processes recorded, then this one; the verdict is all of them together. `also` runs under the same lock.
 */
async function recordEnd(run: HookRun, dir: string, own: RunEnd, also?: () => Promise<void>) {
  const verdictPath = join(dir, "verdict.json");
  return withSessionLock(dir, async () => {
    const ends = [...(await readEnds(verdictPath)), own];
    const merged = { ...run.verdict(), passed: ends.every((end) => end.passed), reasons: ends.flatMap((end) => end.reasons), ends };
    await replaceFile(verdictPath, `${JSON.stringify({ ...merged, summary: run.summary(), ended_at: own.at }, null, 2)}\n`);
    await also?.();
    return merged;
  });
}

/** The run_end events a session's verdict.json records (a verdict from before they were recorded counts as one end). */
async function readEnds(path: string): Promise<RunEnd[]> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return [];
    throw error;
  }
  let stored: { ends?: RunEnd[]; passed?: unknown; reasons?: string[]; ended_at?: string };
  try {
    stored = JSON.parse(text) as typeof stored;
  } catch {
    // Never read as "no earlier end": a failed verdict would pass.
    throw new Error(`${path} is not JSON; the session's verdict is damaged`);
  }
  if (Array.isArray(stored.ends)) return stored.ends;
  if (typeof stored.passed !== "boolean") throw new Error(`${path} holds no verdict; the session's verdict is damaged`);
  return [{ event: "run_end", at: stored.ended_at ?? "", passed: stored.passed, reasons: stored.reasons ?? [] }];
}

/**
 * What the model wrote in a Claude Code transcript (JSON lines): the text, thinking and tool-call input of
 * each assistant message, one per line. Read as a stream, so a long session costs no more memory than
 * that; undefined when there is no readable transcript.
 */
async function modelsTranscript(path: unknown): Promise<string | undefined> {
  if (typeof path !== "string" || path === "") return undefined;
  let lines: AsyncIterable<string>;
  try {
    const stream = createReadStream(path, { encoding: "utf8" });
    await new Promise<void>((resolve, reject) => stream.once("open", () => resolve()).once("error", reject));
    lines = createInterface({ input: stream, crlfDelay: Infinity });
  } catch {
    return undefined;
  }
  const written: string[] = [];
  for await (const line of lines) {
    let entry: { type?: unknown; message?: { content?: unknown } };
    try {
      entry = JSON.parse(line) as typeof entry;
    } catch {
      continue;
    }
    if (entry.type !== "assistant" || !Array.isArray(entry.message?.content)) continue;
    for (const block of entry.message.content as { type?: unknown; text?: unknown; thinking?: unknown; input?: unknown }[]) {
      if (block.type === "text" && typeof block.text === "string") written.push(block.text);
      else if (block.type === "thinking" && typeof block.thinking === "string") written.push(block.thinking);
      else if (block.type === "tool_use") written.push(JSON.stringify(block.input ?? null));
    }
  }
  return written.join("\n");
}

/** The SHA-256 of a file's bytes, hex; undefined when it cannot be read (loading it then says why). */
async function fileDigest(path: string): Promise<string | undefined> {
  try {
    return createHash("sha256")
      .update(await readFile(path))
      .digest("hex");
  } catch {
    return undefined;
  }
}

async function sessionState(dir: string, project: string, rulesDigest: string | undefined): Promise<SessionState> {
  const path = join(dir, "state.json");
  const fresh: SessionState = {
    run_id: newRunId(),
    key: randomBytes(32).toString("hex"),
    started_at: new Date().toISOString(),
    project_dir: project,
    rules_sha256: rulesDigest,
  };
  try {
    // `wx`: two hook processes starting at once agree on whichever state was written first.
    await writeFile(path, `${JSON.stringify(fresh, null, 2)}\n`, { flag: "wx", mode: 0o600 });
    return fresh;
  } catch {
    return JSON.parse(await readFile(path, "utf8")) as SessionState;
  }
}

/** The seeds of this session: the `--seed` file (kept as seeds.json on first use), else that kept copy, else none. */
async function sessionSeeds(dir: string, seedFile: string | undefined): Promise<SeedEntity[] | undefined> {
  const kept = join(dir, "seeds.json");
  if (seedFile === undefined) return existsSync(kept) ? readSeedFile(kept) : undefined;
  const seeds = await readSeedFile(seedFile);
  await writeFile(kept, `${JSON.stringify(seeds)}\n`, { flag: "wx", mode: 0o600 }).catch(() => undefined);
  return seeds;
}

/** The tool's output in alias space; one too large for the door to read is withheld, never passed unread. */
function aliasedOutput(run: HookRun, output: unknown): unknown {
  try {
    return run.alias.toAlias(output).value;
  } catch (error) {
    if (!(error instanceof AliasError)) throw error;
    return withheld(error.code);
  }
}

/** What the model reads in place of an output no rule could read. */
const withheld = (code: string) => `[withheld: ${code}]`;

/** A PostToolUse answer that blocks and replaces the tool's output (Claude Code applies both, so the real output never reaches the model). */
function blockWithOutput(reason: string, output: unknown): Record<string, unknown> {
  return {
    decision: "block",
    reason,
    hookSpecificOutput: { hookEventName: "PostToolUse", updatedToolOutput: output, updatedMCPToolOutput: output },
  };
}

function failure(code: string, message: string, exitCode: 1 | 2 = 1): AgentReply {
  return { stderr: `rayrun hooks run: ${code}: ${message}`, exitCode };
}

/**
 * Refuses an event rayrun could not answer (a bad session id, a rules file that fails to load, anything
 * unforeseen), closed in each event's terms: PreToolUse is denied (exit 2); PostToolUse is blocked with
 * its output withheld (exit 2 or 1 would leave the model the tool's real output); Stop fails the run
 * (exit 2, or a systemMessage once Claude Code is already continuing for a Stop hook), SessionEnd too.
 */
function refuse(event: EventName, input: Record<string, unknown>, code: string, message: string): AgentReply {
  const text = `rayrun hooks run: ${code}: ${message}`;
  // A failed tool's output cannot be withheld (answerFailure): the reason is shown beside it.
  if (input.hook_event_name === "PostToolUseFailure") return { stderr: text, exitCode: 2 };
  if (event === "post_tool_call") return { stdout: blockWithOutput(text, withheld(code)), stderr: text, exitCode: 0 };
  if (event === "run_end" && input.stop_hook_active === true) return { stdout: { systemMessage: text }, stderr: text, exitCode: 0 };
  return { stderr: text, exitCode: 2 };
}
