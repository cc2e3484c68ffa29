// Which calls a rule applies to: a tool-name matcher, a vendor, a required argument.

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

/** Every tool when omitted, `""` or `"*"`; else any part (an unanchored regex) that finds the name. Throws SyntaxError on a bad regex. */
export function compileMatcher(source: string | undefined): (name: string) => boolean {
  const trimmed = source?.trim() ?? "";
  if (trimmed === "" || trimmed === "*") return () => true;
  const parts = splitMatcher(trimmed).map((part) => new RegExp(part));
  return (name) => parts.some((part) => part.test(name));
}

/** The value at a dotted path (`a.b.c`) of an object, or undefined. */
export function valueAt(root: unknown, dotted: string): unknown {
  let value = root;
  for (const key of dotted.split(".")) {
    if (value === null || typeof value !== "object") return undefined;
    value = (value as Record<string, unknown>)[key];
  }
  return value;
}
