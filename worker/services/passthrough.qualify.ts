import { CallToolResultSchema } from "@modelcontextprotocol/sdk/types.js";
import { GATEWAY_META_PREFIX } from "../lib/gateway-meta.ts";
import { withoutLongStrings } from "./json-skeleton.ts";

/** The two layouts servers write a result message in: the TypeScript SDK's, and most others'. */
const layouts = (id: number) =>
  [
    ['{"result":', `,"jsonrpc":"2.0","id":${id}}`],
    [`{"jsonrpc":"2.0","id":${id},"result":`, "}"],
  ] as const;

/**
 * Where the `result` value sits in a JSON-RPC message (the whole text, or its
 * reduction by json-skeleton.ts): the lengths of the framing before and after
 * it, when the message is a result for `id` in one of the two layouts and the
 * value qualifies for pass-through. The framing is ASCII, so its characters
 * are its bytes. Null sends the message down the parsed path.
 */
export function framedResult(message: string, id: number): { before: number; after: number } | null {
  for (const [prefix, suffix] of layouts(id)) {
    if (message.length < prefix.length + suffix.length || !message.startsWith(prefix) || !message.endsWith(suffix)) continue;
    const result = message.slice(prefix.length, message.length - suffix.length);
    if (!result.startsWith("{") || !result.endsWith("}")) return null;
    return qualifies(result) ? { before: prefix.length, after: suffix.length } : null;
  }
  return null;
}

const PLAIN_CONTENT_TYPES = new Set(["text", "image", "audio"]);

/**
 * Whether the text parses as one tool-result object the gateway would forward
 * unchanged. Parsing is what makes the splice safe:
 * the gateway never forwards bytes it has not parsed, so an upstream cannot
 * smuggle extra JSON-RPC members or broken JSON past it by framing its answer
 * cleverly. The native parse is the cheap part of the parsed path; the SDK's
 * schema walk and the re-serialisation are what pass-through saves. Not
 * forwarded unchanged, and so left to the parsed path: `isError` (an upstream
 * error is logged as one), the gateway's own `dev.rayrun/*` metadata (dropped
 * there), and any content block but text, image or audio (resource URIs are
 * mapped). What is parsed is the text without its long string values
 * (json-skeleton.ts): every check below reads member names and content types,
 * never a long value.
 */
function qualifies(text: string): boolean {
  const reduced = withoutLongStrings(text) ?? text;
  let value: unknown;
  try {
    value = JSON.parse(reduced);
  } catch {
    return false;
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) return false;
  // The schema the SDK client reads every result with (the parsed path refuses what fails it): a result
  // the gateway's own client would refuse must not reach the client as it came. Run on the reduction it is
  // cheap; a shortened string is a string still, and base64 only if the long one was (json-skeleton.ts).
  if (!CallToolResultSchema.safeParse(value).success) return false;
  // A number no double holds reads as Infinity here and goes out as null on the parsed path; some
  // clients' parsers refuse it outright, so it is written by the gateway.
  if (holdsNonFiniteNumber(value)) return false;
  if (mayHideAName(reduced) && repeatsAName(reduced, value)) return false;
  const result = value as { content?: unknown; isError?: unknown; _meta?: unknown };
  if ("isError" in result) return false;
  if (typeof result._meta === "object" && result._meta !== null) {
    if (Object.keys(result._meta).some((key) => key.startsWith(GATEWAY_META_PREFIX))) return false;
  }
  return (
    Array.isArray(result.content) &&
    result.content.every(
      (block) => typeof block === "object" && block !== null && PLAIN_CONTENT_TYPES.has((block as { type?: unknown }).type as string),
    )
  );
}

/** Whether some number in the value is not finite (it overflowed a double when parsed). */
function holdsNonFiniteNumber(value: unknown): boolean {
  // A stack, not recursion: the nesting is the upstream's to choose.
  const pending: unknown[] = [value];
  while (pending.length) {
    const next = pending.pop();
    if (typeof next === "number") {
      if (!Number.isFinite(next)) return true;
    } else if (typeof next === "object" && next !== null) {
      for (const member of Array.isArray(next) ? next : Object.values(next)) pending.push(member);
    }
  }
  return false;
}

/**
 * A repeated member name only matters where the gateway looks: its own
 * `dev.rayrun/*` metadata and a content block's type (a resource's URI would
 * go out unmapped). Without these spellings, or a `\u` escape that could spell
 * them, in the text, no repeat can change what a client sees, and the
 * JavaScript walk over every character and member below is skipped; the
 * search for the spellings is native.
 */
const SENSITIVE_SPELLINGS = ["dev.rayrun", '"resource', "\\u"];

const mayHideAName = (text: string) => SENSITIVE_SPELLINGS.some((spelling) => text.includes(spelling));

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COLON = 0x3a;

/**
 * Whether some object in the text holds a member name twice. JSON.parse keeps
 * the last one, a client's parser may keep the first (or refuse the answer):
 * a forged `"_meta":{"dev.rayrun/error":…}` followed by `"_meta":{}` would
 * pass the checks above and reach such a client. Every `:` outside a string
 * ends one member's name, so the text declares exactly as many members as the
 * parsed value has only when no name repeats.
 */
function repeatsAName(text: string, value: object): boolean {
  let declared = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const char = text.charCodeAt(i);
    if (inString) {
      if (char === BACKSLASH) i++;
      else if (char === QUOTE) inString = false;
    } else if (char === QUOTE) inString = true;
    else if (char === COLON) declared++;
  }
  let parsed = 0;
  // A stack, not recursion: the nesting is the upstream's to choose.
  const pending: unknown[] = [value];
  while (pending.length) {
    const next = pending.pop();
    if (typeof next !== "object" || next === null) continue;
    if (Array.isArray(next)) {
      for (const item of next) pending.push(item);
      continue;
    }
    for (const [, member] of Object.entries(next)) {
      parsed++;
      pending.push(member);
    }
  }
  return declared !== parsed;
}
