// The module shape of a hook, checked as the author types, in the compiler's
// own words (schema/hooks/shape-rules.ts): no imports or require, no export but
// `export default defineToolAdapter({ ... })`. A light scanner (strings,
// comments, template literals, brackets), not a parser: it reports only what it
// is sure of, so a default export of a variable is left to the compiler, which
// evaluates it. Everything here the compiler also refuses, with the same code.
import { SHAPE_MESSAGES } from "../../../schema/hooks/shape-rules.ts";
import type { Problem } from "./problem.ts";

interface Token {
  kind: "word" | "string" | "punct";
  text: string;
  line: number;
  column: number;
  /** Brackets open at the token: 0 is the module's top level. */
  depth: number;
}

/** Words after which `/` starts a regular expression rather than a division. */
const BEFORE_EXPRESSION = new Set([
  "return",
  "typeof",
  "case",
  "do",
  "else",
  "in",
  "of",
  "new",
  "delete",
  "void",
  "throw",
  "yield",
  "await",
]);

function tokenize(source: string): Token[] {
  const tokens: Token[] = [];
  /** For each open `${`: the bracket depth it was opened at, so its `}` resumes the template text. */
  const templates: number[] = [];
  let depth = 0;
  let line = 1;
  let lineStart = 0;
  let i = 0;
  const push = (kind: Token["kind"], text: string, start: number, startLine: number, startLineStart: number) =>
    tokens.push({ kind, text, line: startLine, column: start - startLineStart + 1, depth });
  const newline = (at: number) => {
    line++;
    lineStart = at + 1;
  };
  const regexAllowed = () => {
    const last = tokens.at(-1);
    if (!last) return true;
    if (last.kind === "word") return BEFORE_EXPRESSION.has(last.text);
    if (last.kind === "string") return false;
    return !")]}".includes(last.text);
  };
  /** Scans template text from `i` to its closing backtick or next `${`. */
  const templateText = () => {
    while (i < source.length) {
      const c = source[i]!;
      if (c === "\\") i += 2;
      else if (c === "`") {
        i++;
        return;
      } else if (c === "$" && source[i + 1] === "{") {
        i += 2;
        templates.push(depth);
        depth++;
        return;
      } else {
        if (c === "\n") newline(i);
        i++;
      }
    }
  };

  while (i < source.length) {
    const c = source[i]!;
    const next = source[i + 1];
    const start = i;
    const startLine = line;
    const startLineStart = lineStart;
    if (c === "\n") {
      newline(i);
      i++;
    } else if (/\s/.test(c)) i++;
    else if (c === "/" && next === "/") {
      while (i < source.length && source[i] !== "\n") i++;
    } else if (c === "/" && next === "*") {
      i += 2;
      while (i < source.length && !(source[i] === "*" && source[i + 1] === "/")) {
        if (source[i] === "\n") newline(i);
        i++;
      }
      i += 2;
    } else if (c === '"' || c === "'") {
      i++;
      let text = "";
      while (i < source.length && source[i] !== c && source[i] !== "\n") {
        if (source[i] === "\\") i++;
        text += source[i] ?? "";
        i++;
      }
      i++;
      push("string", text, start, startLine, startLineStart);
    } else if (c === "`") {
      i++;
      push("string", "`", start, startLine, startLineStart);
      templateText();
    } else if (c === "}" && templates.at(-1) === depth - 1) {
      templates.pop();
      depth--;
      i++;
      templateText();
    } else if (c === "/" && regexAllowed()) {
      i++;
      let inClass = false;
      while (i < source.length && source[i] !== "\n" && (inClass || source[i] !== "/")) {
        if (source[i] === "\\") i++;
        else if (source[i] === "[") inClass = true;
        else if (source[i] === "]") inClass = false;
        i++;
      }
      i++;
      while (i < source.length && /\w/.test(source[i]!)) i++;
      push("string", "/regex/", start, startLine, startLineStart);
    } else if (/[A-Za-z_$]/.test(c)) {
      while (i < source.length && /[\w$]/.test(source[i]!)) i++;
      push("word", source.slice(start, i), start, startLine, startLineStart);
    } else if ("([{".includes(c)) {
      push("punct", c, start, startLine, startLineStart);
      depth++;
      i++;
    } else if (")]}".includes(c)) {
      depth = Math.max(0, depth - 1);
      push("punct", c, start, startLine, startLineStart);
      i++;
    } else {
      push("punct", c, start, startLine, startLineStart);
      i++;
    }
  }
  return tokens;
}

const problem = (code: string, message: string, at?: Token): Problem => ({
  line: at?.line ?? 1,
  column: at?.column ?? 1,
  message: `${message} [${code}]`,
  source: "shape",
});

/** The first string token after `from`, or right after the keyword: what an import names. */
function specifierAfter(tokens: Token[], index: number): string {
  for (let j = index + 1; j < Math.min(tokens.length, index + 200); j++) {
    const token = tokens[j]!;
    if (token.kind === "string") return token.text;
    if (token.text === ";") break;
  }
  return "…";
}

/** Problems with the hook's module shape, each with the compiler's code and message. */
export function checkHookShape(source: string): Problem[] {
  if (source.trim() === "") return [];
  const tokens = tokenize(source);
  const problems: Problem[] = [];
  let defaults = 0;
  for (let i = 0; i < tokens.length; i++) {
    const token = tokens[i]!;
    if (token.kind !== "word" || tokens[i - 1]?.text === ".") continue;
    const next = tokens[i + 1];
    if (token.text === "import") {
      if (next?.text === "(") {
        problems.push(
          problem(
            "dynamic_import_forbidden",
            SHAPE_MESSAGES.importForbidden("import()", specifierAfter(tokens, i), SHAPE_MESSAGES.selfContained),
            token,
          ),
        );
      } else if (next?.text !== "." && token.depth === 0) {
        problems.push(
          problem(
            "import_forbidden",
            SHAPE_MESSAGES.importForbidden("import", specifierAfter(tokens, i), SHAPE_MESSAGES.selfContained),
            token,
          ),
        );
      }
    } else if (token.text === "require" && next?.text === "(") {
      problems.push(
        problem(
          "require_forbidden",
          SHAPE_MESSAGES.importForbidden("require()", specifierAfter(tokens, i), SHAPE_MESSAGES.selfContained),
          token,
        ),
      );
    } else if (token.text === "export" && token.depth === 0 && next) {
      i = checkExport(tokens, i, problems, () => defaults++);
    }
  }
  if (defaults === 0) problems.push(problem("default_export_missing", SHAPE_MESSAGES.defaultExportMissing));
  return problems;
}

/** Values that cannot be what defineToolAdapter returns, when they follow `export default`. */
const NOT_ADAPTER = new Set(["{", "function", "class", "async", "(", "[", "`"]);

/** Checks the export at `tokens[i]`; returns the index to continue from. */
function checkExport(tokens: Token[], i: number, problems: Problem[], countDefault: () => void): number {
  const next = tokens[i + 1]!;
  if (next.text === "default") {
    countDefault();
    const value = tokens[i + 2];
    if (value && value.text !== "defineToolAdapter" && (NOT_ADAPTER.has(value.text) || value.kind === "string")) {
      problems.push(problem("default_export_not_adapter", SHAPE_MESSAGES.defaultExportNotAdapter, value));
    }
    return i + 1;
  }
  if (next.text === "*") {
    problems.push(
      problem(
        "import_forbidden",
        SHAPE_MESSAGES.importForbidden("import", specifierAfter(tokens, i), SHAPE_MESSAGES.selfContained),
        tokens[i],
      ),
    );
    return i + 1;
  }
  if (next.text === "{") {
    const names: Token[] = [];
    let j = i + 2;
    for (; j < tokens.length && tokens[j]!.text !== "}"; j++) {
      const token = tokens[j]!;
      const after = tokens[j + 1];
      // `a as b` exports `b`; `type a` exports nothing.
      if (token.kind === "word" && token.text !== "as" && token.text !== "type" && (after?.text === "," || after?.text === "}"))
        names.push(token);
    }
    if (tokens[j + 1]?.text === "from") {
      problems.push(
        problem(
          "import_forbidden",
          SHAPE_MESSAGES.importForbidden("import", specifierAfter(tokens, j), SHAPE_MESSAGES.selfContained),
          tokens[i],
        ),
      );
    } else {
      for (const name of names) {
        if (name.text === "default") countDefault();
        else problems.push(problem("export_forbidden", SHAPE_MESSAGES.exportForbidden(name.text), name));
      }
    }
    return j;
  }
  // Type-only exports leave nothing in the module, as esbuild sees it.
  if (next.text === "type" || next.text === "interface" || next.text === "declare") return i + 1;
  const keyword = next.text === "async" ? tokens[i + 2] : next;
  if (keyword && ["const", "let", "var", "function", "class", "enum"].includes(keyword.text)) {
    const index = tokens.indexOf(keyword);
    const name = tokens.slice(index + 1).find((token) => token.kind === "word" && token.text !== "*");
    problems.push(problem("export_forbidden", SHAPE_MESSAGES.exportForbidden(name?.text ?? keyword.text), name ?? keyword));
  }
  return i + 1;
}
