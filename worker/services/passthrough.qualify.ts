import { CallToolResultSchema } from "@modelcontextprotocol/sdk/types.js";
import { GATEWAY_META_PREFIX, PROTOCOL_RESULT_MEMBERS } from "../lib/gateway-meta.ts";
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
 * error is logged as one), the gateway's own `dev.rayrun/*` metadata and a
 * 2026-07-28 round's members (dropped there), and any content block but text, image or audio (resource URIs are
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
  if (!forwardsAsParsed(reduced, value)) return false;
  const result = value as { content?: unknown; isError?: unknown; _meta?: unknown };
  if ("isError" in result) return false;
  // A 2026-07-28 round's members are the gateway's to write: the parsed path drops them.
  if (PROTOCOL_RESULT_MEMBERS.some((name) => name in result)) return false;
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

/**
 * Whether every standard parser reads the text as the value JSON.parse made of it, as far as a client can tell.
 * Three things break that:
 * - A number no double holds (`1e400`): JSON.parse reads Infinity, the parsed path writes `null`, and a client's
 *   parser reads Infinity (JavaScript, Python) or refuses the whole message (Go's encoding/json).
 * - A `__proto__` member, however spelled: JSON.parse makes it an own property, which no check here reads as
 *   `isError` or `_meta`, while a client that copies the result into an object (`Object.assign`, a spread into a
 *   class, a parser that assigns members) gets it as the prototype, forged error and all.
 * - A repeated member name, anywhere: JSON.parse keeps the last, a client's parser may keep the first (or refuse
 *   the answer), so the client would read other text, metadata or content types than the gateway checked,
 *   logged and handed to Code Mode.
 * The parsed path writes what the gateway read, once, with no `__proto__`.
 */
function forwardsAsParsed(text: string, value: unknown): boolean {
  let members = 0;
  // A stack, not recursion: the nesting is the upstream's to choose.
  const pending: unknown[] = [value];
  while (pending.length) {
    const next = pending.pop();
    if (typeof next === "number") {
      if (!Number.isFinite(next)) return false;
    } else if (Array.isArray(next)) {
      for (const item of next) pending.push(item);
    } else if (typeof next === "object" && next !== null) {
      for (const [name, member] of Object.entries(next)) {
        if (name === "__proto__") return false;
        members++;
        pending.push(member);
      }
    }
  }
  return declaredMembers(text) === members;
}

/** Every string of a JSON text, as its lexer reads it: a quote opens one, the first unescaped quote closes it. */
const JSON_STRING = /"[^"\\]*(?:\\.[^"\\]*)*"/g;

/**
 * How many members the text declares: every `:` outside a string ends one member's name, so the count equals
 * the parsed value's members exactly when no name repeats in any object. The strings are cut out and the colons
 * found by native searches; the JavaScript work is one step per member, as in the walk above. A regex engine that
 * gives up on a text (its backtracking stack) counts as a mismatch: the parsed path.
 */
function declaredMembers(text: string): number {
  let outside: string;
  try {
    outside = text.replace(JSON_STRING, "");
  } catch {
    return -1;
  }
  let declared = 0;
  for (let colon = outside.indexOf(":"); colon >= 0; colon = outside.indexOf(":", colon + 1)) declared++;
  return declared;
}
