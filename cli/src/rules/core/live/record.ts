// The record of declared live tool calls: one JSON line per call, secrets redacted,
// and a recording read back for replay, matched on the tool and the input as sent.
import { RulesFileError } from "../errors.ts";
import { HookDenied } from "../errors.ts";
import type { ToolInput } from "../events.ts";

/** One call (docs/rules-file.md#the-record-line lists the fields). */
export interface LiveLine {
  ts: string;
  run_id: string;
  tool: string;
  vendor?: string;
  /** The input as the agent asked it. */
  input_asked: ToolInput;
  /** The input as it was sent: after the pre_tool_call rules (real values), defaults filled. Absent when a rule refused the call first. */
  input_sent?: ToolInput;
  /** The HTTP request made, with every secret redacted. */
  request?: { method: string; url: string };
  /** The tool's own answer, before the post_tool_call rules. */
  result_raw?: unknown;
  /** What the agent got: after the rules (alias space when an alias rule applies), with their context. */
  result_shown?: unknown;
  /** The tool's own failure, before the rules: replay throws it again. */
  error_raw?: { name: string; message: string; code?: string; reason?: string };
  /** What the caller's exception said. */
  error?: string;
  denied?: true;
  /** The response passed max_bytes (or the pattern's bound) and was read in part. */
  truncated?: true;
  /** Seconds. */
  elapsed: number;
  /** Answered from the recording. */
  replayed: boolean;
}

/**
 * A refusal rather than a failure: a HookDenied, an exception carrying a string `reason`, or
 * one named `*Denied`, `*Refusal` or `*Refused` (a guard of the caller's own, whatever its class).
 */
export function isDenial(error: unknown): boolean {
  if (error instanceof HookDenied) return true;
  if (error === null || typeof error !== "object") return false;
  const { reason, name } = error as { reason?: unknown; name?: unknown };
  return typeof reason === "string" || (typeof name === "string" && /(?:Denied|Refusal|Refused)$/.test(name));
}

/** Secret values shorter than this are not searched for (they would blank ordinary text); see docs. */
export const MIN_REDACTED_LENGTH = 4;

/** Replaces every secret value (an allowed_env variable's) in a line's strings with `[redacted:NAME]`. */
export class Redactor {
  readonly #secrets: [string, string][];
  constructor(env: Readonly<Record<string, string | undefined>>, names: readonly string[]) {
    this.#secrets = names
      .map((name): [string, string] => [name, env[name] ?? ""])
      .filter(([, value]) => value.length >= MIN_REDACTED_LENGTH)
      // Longest first, so a secret containing another is replaced whole.
      .sort((a, b) => b[1].length - a[1].length);
  }

  redact<V>(value: V): V {
    if (this.#secrets.length === 0) return value;
    return this.#walk(value) as V;
  }

  #walk(value: unknown): unknown {
    if (typeof value === "string") return this.#text(value);
    if (Array.isArray(value)) return value.map((item) => this.#walk(item));
    if (value !== null && typeof value === "object")
      return Object.fromEntries(Object.entries(value).map(([key, item]) => [this.#text(key), this.#walk(item)]));
    return value;
  }

  #text(text: string): string {
    let out = text;
    for (const [name, secret] of this.#secrets) {
      // As written; percent-encoded; and as a query spells it (URLSearchParams, which a `query` auth sets the key
      // with, also encodes `~ ! ' ( )` and writes a space as `+`).
      for (const spelling of new Set([secret, encodeURIComponent(secret), new URLSearchParams({ k: secret }).toString().slice(2)])) {
        if (out.includes(spelling)) out = out.replaceAll(spelling, `[redacted:${name}]`);
      }
    }
    return out;
  }
}

/** JSON with object keys sorted, so equal inputs match whatever order their keys came in. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(sorted(value));
}

function sorted(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sorted);
  if (value !== null && typeof value === "object")
    return Object.fromEntries(
      Object.keys(value)
        .sort()
        .map((key) => [key, sorted((value as Record<string, unknown>)[key])]),
    );
  return value;
}

/**
 * A recording read for replay. The answers for one tool and one input (as sent) are taken in the
 * order they were recorded: the n-th identical call gets the n-th recorded answer, and a call past
 * the last one is unrecorded.
 */
export class ReplayBook {
  readonly #answers = new Map<string, LiveLine[]>();
  readonly #taken = new Map<string, number>();

  /** Reads a JSON-lines recording; a line that is not a JSON object with a tool is a load error with its line number. */
  static parse(text: string, file: string): ReplayBook {
    const book = new ReplayBook();
    text.split("\n").forEach((raw, index) => {
      if (raw.trim() === "") return;
      let line: unknown;
      try {
        line = JSON.parse(raw);
      } catch {
        throw new RulesFileError("rules_replay_bad_line", `line ${index + 1} of the recording is not JSON`, undefined, index + 1, file);
      }
      if (line === null || typeof line !== "object" || typeof (line as LiveLine).tool !== "string")
        throw new RulesFileError(
          "rules_replay_bad_line",
          `line ${index + 1} of the recording is not a call record`,
          undefined,
          index + 1,
          file,
        );
      book.add(line as LiveLine);
    });
    return book;
  }

  add(line: LiveLine): void {
    // A call a rule refused before the tool ran has no answer to give.
    if (line.input_sent === undefined || (!("result_raw" in line) && line.error_raw === undefined)) return;
    const key = replayKey(line.tool, line.input_sent);
    const list = this.#answers.get(key) ?? [];
    list.push(line);
    this.#answers.set(key, list);
  }

  /** The next recorded answer for this call, or why there is none. */
  take(tool: string, inputSent: ToolInput): { line: LiveLine } | { recorded: number } {
    const key = replayKey(tool, inputSent);
    const list = this.#answers.get(key) ?? [];
    const index = this.#taken.get(key) ?? 0;
    const line = list[index];
    if (!line) return { recorded: list.length };
    this.#taken.set(key, index + 1);
    return { line };
  }
}

const replayKey = (tool: string, input: ToolInput) => `${tool}\u0000${canonicalJson(input)}`;
