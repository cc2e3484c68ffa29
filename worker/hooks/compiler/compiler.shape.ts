/**
 * A cheap, linear look at the shape of hook source, before esbuild or Prettier
 * sees it. Both recurse on nesting: esbuild-wasm overflows its stack near a few
 * thousand levels (and takes the whole service down with it), nested arrows
 * cost it quadratic time, and Prettier is exponential in arrows passed as the
 * last argument of nested calls. Neither can be interrupted once started, so
 * the bound is checked here, on text, in one pass.
 *
 * The scanner knows just enough TypeScript: strings, comments, template
 * literals (with `${` nesting), regular expressions, brackets, and the
 * operators that nest without brackets (`?:` and `=>`). It is deliberately
 * approximate where exactness would need a parser: it may over-count, never
 * loop or recurse.
 */

export interface ShapeLimits {
  /** Open brackets, template literals, `${`, ternaries and arrows at one point. */
  nesting: number;
  /** Arrow functions open at one point (Prettier's exponential case); omit for no separate bound. */
  arrowNesting?: number;
  /** Tokens in one expression (between `,`, `;`, statement ends and brackets). */
  expressionTokens: number;
}

export type ShapeProblem = {
  kind: "nesting" | "arrow_nesting" | "expression_tokens";
  limit: number;
  /** 1-based line and column (UTF-16 code units) where the bound was passed. */
  line: number;
  column: number;
};

/** One open bracket (or the file itself), with the expression run in progress inside it. */
interface Frame {
  closer: string;
  /** Ternaries and arrows in the current run: they nest until the run ends. */
  runNesting: number;
  runArrows: number;
  runTokens: number;
}

const OPENERS: Record<string, string> = { "(": ")", "[": "]", "{": "}" };
const CLOSERS = new Set([")", "]", "}"]);
const OPERATOR_CHARS = new Set([..."+-*/%=<>&|^!~.?:@#"]);
/** After these words a `/` starts a regular expression, not a division. */
const KEYWORDS_BEFORE_EXPRESSION = new Set([
  "return",
  "typeof",
  "instanceof",
  "in",
  "of",
  "new",
  "delete",
  "void",
  "throw",
  "case",
  "do",
  "else",
  "yield",
  "await",
]);

const isIdentifierChar = (char: string) => /[\w$\u0080-\uffff]/.test(char);

/** The first bound the source passes, or null. Linear in the source length. */
export function findShapeProblem(source: string, limits: ShapeLimits): ShapeProblem | null {
  const frames: Frame[] = [{ closer: "", runNesting: 0, runArrows: 0, runTokens: 0 }];
  /** Template literals open around the current `${`: their text resumes when it closes. */
  const templateDepths: number[] = [];
  let depth = 0;
  let arrows = 0;
  let line = 1;
  let lineStart = 0;
  /** Whether the last token ends an operand (so `/` divides, and a newline may end a statement). */
  let afterOperand = false;
  let newlineSinceToken = false;
  let index = 0;

  const problem = (kind: ShapeProblem["kind"], limit: number): ShapeProblem => ({ kind, limit, line, column: index - lineStart + 1 });
  const top = () => frames[frames.length - 1]!;
  const endRun = (frame: Frame) => {
    depth -= frame.runNesting;
    arrows -= frame.runArrows;
    frame.runNesting = 0;
    frame.runArrows = 0;
    frame.runTokens = 0;
  };
  /** Counts one token of the current expression; a newline between two operands ended the statement before it. */
  const token = (startsOperand: boolean): ShapeProblem | null => {
    const frame = top();
    if (newlineSinceToken && afterOperand && startsOperand) endRun(frame);
    newlineSinceToken = false;
    frame.runTokens++;
    return frame.runTokens > limits.expressionTokens ? problem("expression_tokens", limits.expressionTokens) : null;
  };
  const open = (closer: string): ShapeProblem | null => {
    frames.push({ closer, runNesting: 0, runArrows: 0, runTokens: 0 });
    depth++;
    return depth > limits.nesting ? problem("nesting", limits.nesting) : null;
  };
  const close = () => {
    const frame = frames.pop()!;
    depth -= 1 + frame.runNesting;
    arrows -= frame.runArrows;
  };
  /** Scans template text from `index` (just after a backtick or a `${`'s closing brace) to its end or next `${`. */
  const scanTemplateText = (): ShapeProblem | null => {
    while (index < source.length) {
      const char = source[index]!;
      if (char === "\\") index += 2;
      else if (char === "`") {
        index++;
        close();
        afterOperand = true;
        return null;
      } else if (char === "$" && source[index + 1] === "{") {
        index += 2;
        templateDepths.push(frames.length);
        afterOperand = false;
        return open("}");
      } else {
        if (char === "\n") {
          line++;
          lineStart = index + 1;
        }
        index++;
      }
    }
    return null;
  };

  while (index < source.length) {
    const char = source[index]!;
    const next = source[index + 1];
    if (char === "\n") {
      line++;
      lineStart = ++index;
      newlineSinceToken = true;
      continue;
    }
    if (char === " " || char === "\t" || char === "\r") {
      index++;
      continue;
    }
    if (char === "/" && next === "/") {
      const end = source.indexOf("\n", index);
      index = end === -1 ? source.length : end;
      continue;
    }
    if (char === "/" && next === "*") {
      const end = source.indexOf("*/", index + 2);
      const stop = end === -1 ? source.length : end + 2;
      for (let at = source.indexOf("\n", index); at !== -1 && at < stop; at = source.indexOf("\n", at + 1)) {
        line++;
        lineStart = at + 1;
        newlineSinceToken = true;
      }
      index = stop;
      continue;
    }

    let found: ShapeProblem | null;
    if (char === '"' || char === "'") {
      found = token(true);
      index++;
      while (index < source.length && source[index] !== char && source[index] !== "\n") index += source[index] === "\\" ? 2 : 1;
      index++;
      afterOperand = true;
    } else if (char === "`") {
      // A template after a newline may continue the expression (a tagged template), like `(` and `[` below.
      found = token(false) ?? open("`");
      index++;
      found ??= scanTemplateText();
    } else if (char === "/" && !afterOperand) {
      found = token(true);
      index = endOfRegExp(source, index);
      afterOperand = true;
    } else if (OPENERS[char]) {
      found = token(false) ?? open(OPENERS[char]);
      index++;
      afterOperand = false;
    } else if (CLOSERS.has(char)) {
      newlineSinceToken = false;
      const template = templateDepths[templateDepths.length - 1];
      if (char === "}" && template === frames.length - 1 && frames.length > 1) {
        // The `}` of a `${`: back to the template literal's text.
        templateDepths.pop();
        close();
        index++;
        found = scanTemplateText();
      } else {
        if (frames.length > 1) close();
        index++;
        afterOperand = true;
        found = null;
      }
    } else if (char === "," || char === ";") {
      endRun(top());
      newlineSinceToken = false;
      afterOperand = false;
      index++;
      found = null;
    } else if (isIdentifierChar(char)) {
      found = token(true);
      const start = index;
      while (index < source.length && isIdentifierChar(source[index]!)) index++;
      afterOperand = !KEYWORDS_BEFORE_EXPRESSION.has(source.slice(start, index));
    } else if (OPERATOR_CHARS.has(char)) {
      found = token(false);
      const frame = top();
      if (char === "=" && next === ">") {
        frame.runNesting++;
        frame.runArrows++;
        depth++;
        arrows++;
        found ??= depth > limits.nesting ? problem("nesting", limits.nesting) : null;
        if (limits.arrowNesting !== undefined && arrows > limits.arrowNesting) found ??= problem("arrow_nesting", limits.arrowNesting);
        index += 2;
      } else {
        if (char === "?" && isConditional(source, index)) {
          frame.runNesting++;
          depth++;
          found ??= depth > limits.nesting ? problem("nesting", limits.nesting) : null;
        }
        // `?.`, `??`, `?:` and the rest are one operator character each: `!!!!x` is as many tokens as it has `!`.
        index += char === "?" && (next === "." || next === "?") ? 2 : 1;
      }
      afterOperand = false;
    } else {
      index++;
      found = null;
    }
    if (found) return found;
  }
  return null;
}

/** A `?` that opens a conditional: not `?.`, `??`, or TypeScript's optional marker (`a?:`, `a?)`, `a?,`, `a?=`). */
function isConditional(source: string, at: number): boolean {
  const next = source[at + 1];
  if (next === "?" || (next === "." && !/\d/.test(source[at + 2] ?? ""))) return false;
  let after = at + 1;
  while (after < source.length && /\s/.test(source[after]!)) after++;
  const following = source[after];
  return following !== ":" && following !== ")" && following !== "," && following !== "=";
}

/** The index after the regular expression literal starting at `start` (or its line's end when it is unterminated). */
function endOfRegExp(source: string, start: number): number {
  let index = start + 1;
  let inClass = false;
  while (index < source.length) {
    const char = source[index]!;
    if (char === "\n") return index;
    if (char === "\\") index++;
    else if (char === "[") inClass = true;
    else if (char === "]") inClass = false;
    else if (char === "/" && !inClass) {
      index++;
      while (index < source.length && isIdentifierChar(source[index]!)) index++;
      return index;
    }
    index++;
  }
  return index;
}
