// The handler contract's answer side: what a command prints, an http handler
// responds or a function returns, turned into one HookAnswer, or a hook error.
// Claude Code's `hookSpecificOutput` form is accepted so its hooks run unchanged.
import { MAX_EVENT_DEPTH, nestsDeeperThan } from "./bounds.ts";
import { HookFailure } from "./errors.ts";
import { DECISIONS, UPDATE_FIELDS, UPDATES_BY_EVENT, type Decision, type EventName, type Finding, type HookAnswer } from "./events.ts";

const ANSWER_KEYS = new Set<string>(["decision", "reason", "additional_context", "findings", ...UPDATE_FIELDS]);
/** Claude Code's top-level keys: accepted, and only `decision`/`reason`/`continue`/`stopReason` mean anything here. */
const CLAUDE_KEYS = new Set(["hookSpecificOutput", "continue", "stopReason", "suppressOutput", "systemMessage"]);
const CLAUDE_SPECIFIC_KEYS = new Set([
  "hookEventName",
  "permissionDecision",
  "permissionDecisionReason",
  "updatedInput",
  "additionalContext",
  "updatedToolOutput",
  "updatedMCPToolOutput",
]);

const malformed = (message: string) => new HookFailure("hook_malformed_answer", message);
const isRecord = (value: unknown): value is Record<string, unknown> => value !== null && typeof value === "object" && !Array.isArray(value);

/** A command's stdout or an http body: empty is allow, a JSON object is an answer, other text is context. */
export function answerFromText(text: string, event: EventName): HookAnswer {
  const trimmed = text.trim();
  if (trimmed === "") return { decision: "allow" };
  if (!trimmed.startsWith("{")) return { decision: "allow", additional_context: trimmed };
  let value: unknown;
  try {
    value = JSON.parse(trimmed);
  } catch {
    throw malformed(`the answer starts with "{" but is not JSON: ${trimmed.slice(0, 120)}`);
  }
  return answerFromValue(value, event);
}

/** A function's return value: nothing is allow, a string is context, an object is an answer. */
export function answerFromValue(value: unknown, event: EventName): HookAnswer {
  if (value === undefined || value === null) return { decision: "allow" };
  if (typeof value === "string") return value.trim() === "" ? { decision: "allow" } : { decision: "allow", additional_context: value };
  if (!isRecord(value))
    throw malformed(`an answer must be an object, a string or nothing, not ${Array.isArray(value) ? "a list" : typeof value}`);
  // What it rewrites becomes the event later rules walk: bounded like the event itself.
  if (nestsDeeperThan(value, MAX_EVENT_DEPTH + 2))
    throw malformed(`the answer nests objects and arrays deeper than ${MAX_EVENT_DEPTH} levels`);
  return validate(fromClaude(value), event);
}

/** Maps Claude Code's output form onto ours; our own keys pass through unchanged. */
function fromClaude(raw: Record<string, unknown>): Record<string, unknown> {
  const answer: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(raw)) {
    if (ANSWER_KEYS.has(key)) answer[key] = value;
    else if (!CLAUDE_KEYS.has(key)) throw malformed(`unknown key "${key}" in the answer`);
  }
  // Claude Code's legacy top-level decision words.
  if (answer.decision === "block") answer.decision = "deny";
  else if (answer.decision === "approve") answer.decision = "allow";
  if (raw.continue === false) {
    answer.decision = "deny";
    answer.reason ??= typeof raw.stopReason === "string" ? raw.stopReason : "stopped by hook";
  }
  const specific = raw.hookSpecificOutput;
  if (specific === undefined) return answer;
  if (!isRecord(specific)) throw malformed("hookSpecificOutput must be an object");
  for (const key of Object.keys(specific)) {
    if (!CLAUDE_SPECIFIC_KEYS.has(key)) throw malformed(`unknown key "hookSpecificOutput.${key}" in the answer`);
  }
  const permission = specific.permissionDecision;
  if (permission !== undefined) {
    if (permission === "deny") answer.decision = "deny";
    else if (permission !== "allow") throw malformed(`permissionDecision "${String(permission)}" is not supported here (allow or deny)`);
    if (specific.permissionDecisionReason !== undefined) answer.reason = specific.permissionDecisionReason;
  }
  if (specific.updatedInput !== undefined) answer.updated_input = specific.updatedInput;
  const output = specific.updatedToolOutput ?? specific.updatedMCPToolOutput;
  if (output !== undefined) answer.updated_result = output;
  if (specific.additionalContext !== undefined) answer.additional_context = specific.additionalContext;
  if (answer.decision !== "deny" && UPDATE_FIELDS.some((field) => answer[field] !== undefined)) answer.decision = "rewrite";
  return answer;
}

function validate(answer: Record<string, unknown>, event: EventName): HookAnswer {
  const decision = (answer.decision ?? "allow") as Decision;
  if (!DECISIONS.includes(decision)) throw malformed(`decision must be allow, deny or rewrite, not ${JSON.stringify(answer.decision)}`);
  if (answer.reason !== undefined && typeof answer.reason !== "string") throw malformed("reason must be a string");
  if (answer.additional_context !== undefined && typeof answer.additional_context !== "string")
    throw malformed("additional_context must be a string");
  if (answer.findings !== undefined && !(Array.isArray(answer.findings) && answer.findings.every(isRecord)))
    throw malformed("findings must be a list of objects");
  const updates = UPDATE_FIELDS.filter((field) => answer[field] !== undefined);
  if (decision === "rewrite" && updates.length === 0)
    throw malformed(`a rewrite needs one of ${UPDATES_BY_EVENT[event].join(", ") || "(none)"}`);
  if (decision !== "rewrite" && updates.length > 0) throw malformed(`${updates[0]} needs decision "rewrite"`);
  for (const field of updates) {
    if (!UPDATES_BY_EVENT[event].includes(field)) throw malformed(`${field} cannot rewrite ${event}`);
  }
  if (answer.updated_input !== undefined && !isRecord(answer.updated_input)) throw malformed("updated_input must be an object");
  if (answer.updated_error !== undefined && typeof answer.updated_error !== "string") throw malformed("updated_error must be a string");
  if (answer.updated_request !== undefined && !isRecord(answer.updated_request)) throw malformed("updated_request must be an object");
  return {
    decision,
    ...(answer.reason === undefined ? {} : { reason: answer.reason as string }),
    ...(answer.additional_context === undefined ? {} : { additional_context: answer.additional_context as string }),
    ...(answer.findings === undefined ? {} : { findings: answer.findings as Finding[] }),
    ...Object.fromEntries(updates.map((field) => [field, answer[field]])),
  };
}

/** `[hook <name>]` lines put where the agent reads them: appended to a string, under `hook_context` in an object, else wrapping. */
export function attachContext(result: unknown, lines: readonly string[]): unknown {
  if (lines.length === 0) return result;
  if (typeof result === "string") return `${result}\n\n${lines.join("\n")}`;
  if (isRecord(result)) {
    const existing = Array.isArray(result.hook_context) ? (result.hook_context as unknown[]) : [];
    return { ...result, hook_context: [...existing, ...lines] };
  }
  return { result, hook_context: [...lines] };
}
