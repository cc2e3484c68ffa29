// Which calls a rule applies to: a tool-name matcher, a vendor, a required argument.
// Matchers run on the linear-time engine (linear-regex.ts): tool names come from
// upstreams, so a backtracking pattern such as `^(a+)+$` must not hold the hook.
import { compileLinearPattern, matchLinear, PatternBudgetExceeded, type LinearPattern } from "./linear-regex.ts";

/** Steps (live NFA states × characters) one matcher may spend on one name; past it the event fails closed. */
export const MATCHER_STEP_BUDGET = 1_000_000;

/** A matcher spent its step budget on one name (a name of millions of characters): the event fails closed. */
export class MatcherBudgetExceeded extends Error {
  override readonly name = "MatcherBudgetExceeded";
  constructor(
    readonly matcher: string,
    readonly subjectLength: number,
  ) {
    super(`matcher "${matcher}" spent its ${MATCHER_STEP_BUDGET} steps on a name of ${subjectLength} characters`);
  }
}

/** Splits on `|` outside parentheses, brackets and escapes, so `^(a|b)_tool$` stays one regex. */
export function splitMatcher(source: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let inClass = false;
  let current = "";
  for (let i = 0; i < source.length; i++) {
    const c = source[i]!;
    if (c === "\\") {
      current += c + (source[i + 1] ?? "");
      i++;
      continue;
    }
    if (inClass) inClass = c !== "]";
    else if (c === "[") inClass = true;
    else if (c === "(") depth++;
    else if (c === ")") depth = Math.max(0, depth - 1);
    else if (c === "|" && depth === 0) {
      parts.push(current.trim());
      current = "";
      continue;
    }
    current += c;
  }
  parts.push(current.trim());
  return parts;
}

/**
 * Every tool when omitted, `""` or `"*"`; else any part (an unanchored regex, Unicode mode) that finds
 * the name. Throws SyntaxError naming the part for a pattern that is not a regular expression, or that
 * the linear engine cannot run (backreferences, lookaround, word boundaries). The matcher it returns
 * throws MatcherBudgetExceeded past MATCHER_STEP_BUDGET.
 */
export function compileMatcher(source: string | undefined): (name: string) => boolean {
  const trimmed = source?.trim() ?? "";
  if (trimmed === "" || trimmed === "*") return () => true;
  const parts: LinearPattern[] = splitMatcher(trimmed).map((part) => {
    const compiled = compileLinearPattern(part);
    if (!compiled.ok) throw new SyntaxError(`"${part}" ${compiled.reason}`);
    return compiled.pattern;
  });
  return (name) => {
    const budget = { remaining: MATCHER_STEP_BUDGET };
    try {
      return parts.some((part) => matchLinear(part, name, budget));
    } catch (error) {
      if (error instanceof PatternBudgetExceeded) throw new MatcherBudgetExceeded(trimmed, name.length);
      throw error;
    }
  };
}

/** The value at a dotted path (`a.b.c`) of an object, or undefined. */
export function valueAt(root: unknown, dotted: string): unknown {
  let value = root;
  for (const key of dotted.split(".")) {
    if (value === null || typeof value !== "object" || !Object.hasOwn(value, key)) return undefined;
    value = (value as Record<string, unknown>)[key];
  }
  return value;
}
