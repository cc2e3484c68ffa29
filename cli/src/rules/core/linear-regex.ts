/**
 * A linear-time matcher for regular expressions that outsiders' text runs
 * through: the JSON Schema `pattern` keyword (the gateway's validator) and the
 * rules file's tool-name matchers (the rules core; an upstream picks its tool
 * names). It sits in the runtime-neutral rules core, which the Worker imports.
 * JavaScript's own RegExp backtracks and cannot be interrupted, so `^(a+)+$`
 * against a long string holds the isolate (or a hook process) for seconds. This compiles the pattern to an NFA and
 * simulates it (Thompson/Pike): time is O(string length × program size), and
 * every step is counted against a budget the caller sets.
 *
 * Only the structure (groups, alternation, quantifiers, `^`, `$`) is compiled
 * here; each single-character atom (a literal, `.`, an escape such as `\d` or
 * `\p{L}`, a class `[...]`) is matched by a native RegExp of just that atom,
 * which matches one code point in constant time and keeps JavaScript's exact
 * semantics for it. Backreferences, lookaround and word boundaries cannot be
 * matched in linear time by this construction: such a pattern is unsupported.
 */

/** Compiled patterns stay small: bounded repetition (`{2,500}`) is expanded, so it is capped. */
export const MAX_PATTERN_STATES = 2_000;

type Node =
  | { kind: "atom"; test: (char: string) => boolean }
  | { kind: "start" }
  | { kind: "end" }
  | { kind: "seq"; items: Node[] }
  | { kind: "alt"; options: Node[] }
  | { kind: "repeat"; item: Node; min: number; max: number };

type State =
  | { kind: "atom"; test: (char: string) => boolean; next: number }
  | { kind: "split"; a: number; b: number }
  | { kind: "start"; next: number }
  | { kind: "end"; next: number }
  | { kind: "match" };

export interface LinearPattern {
  states: State[];
  start: number;
}

export type PatternCompilation = { ok: true; pattern: LinearPattern } | { ok: false; reason: string };

class Unsupported extends Error {}

/** Thrown by `matchLinear` when a validation has spent its matching budget. */
export class PatternBudgetExceeded extends Error {}

export function compileLinearPattern(source: string): PatternCompilation {
  try {
    // Let the engine the schema was written for reject invalid syntax first.
    new RegExp(source, "u");
  } catch {
    return { ok: false, reason: "is not a valid regular expression" };
  }
  try {
    const parser = new Parser(source);
    const tree = parser.parseAlternation();
    if (parser.at < source.length) throw new Unsupported(`unexpected "${source[parser.at]}"`);
    const states: State[] = [{ kind: "match" }];
    const start = emit(tree, 0, states);
    return { ok: true, pattern: { states, start } };
  } catch (error) {
    if (error instanceof Unsupported) return { ok: false, reason: error.message };
    throw error;
  }
}

/**
 * Whether the pattern matches anywhere in `subject` (as RegExp#test does),
 * charging one unit per live state per character to `budget`.
 */
export function matchLinear(pattern: LinearPattern, subject: string, budget: { remaining: number }): boolean {
  const { states } = pattern;
  let current: number[] = [];
  let marks = new Uint32Array(states.length);
  let generation = 1;
  const chars = Array.from(subject);
  for (let position = 0; position <= chars.length; position++) {
    // Unanchored search: a new attempt starts at every position.
    if (addState(pattern.start, position, chars.length, states, current, marks, generation)) return true;
    if (position === chars.length) break;
    budget.remaining -= current.length + 1;
    if (budget.remaining < 0) throw new PatternBudgetExceeded();
    const char = chars[position]!;
    const next: number[] = [];
    generation++;
    for (const index of current) {
      const state = states[index]!;
      if (state.kind === "atom" && state.test(char)) {
        if (addState(state.next, position + 1, chars.length, states, next, marks, generation)) return true;
      }
    }
    current = next;
    if (generation === 0xffffffff) {
      marks = new Uint32Array(states.length);
      generation = 1;
    }
  }
  return false;
}

/** Follows the ε-moves from `index`, collecting atom states; true once `match` is reached. */
function addState(
  index: number,
  position: number,
  length: number,
  states: State[],
  into: number[],
  marks: Uint32Array,
  generation: number,
): boolean {
  const stack = [index];
  while (stack.length > 0) {
    const at = stack.pop()!;
    if (marks[at] === generation) continue;
    marks[at] = generation;
    const state = states[at]!;
    switch (state.kind) {
      case "match":
        return true;
      case "atom":
        into.push(at);
        break;
      case "split":
        stack.push(state.b, state.a);
        break;
      case "start":
        if (position === 0) stack.push(state.next);
        break;
      case "end":
        if (position === length) stack.push(state.next);
        break;
    }
  }
  return false;
}

/** Appends the states for `node`, continuing to `next`; returns its entry state. */
function emit(node: Node, next: number, states: State[]): number {
  const push = (state: State) => {
    if (states.length >= MAX_PATTERN_STATES) throw new Unsupported(`compiles to more than ${MAX_PATTERN_STATES} states`);
    states.push(state);
    return states.length - 1;
  };
  switch (node.kind) {
    case "atom":
      return push({ kind: "atom", test: node.test, next });
    case "start":
    case "end":
      return push({ kind: node.kind, next });
    case "seq":
      return node.items.reduceRight((after, item) => emit(item, after, states), next);
    case "alt": {
      const entries = node.options.map((option) => emit(option, next, states));
      return entries.reduceRight((rest, entry) => push({ kind: "split", a: entry, b: rest }));
    }
    case "repeat": {
      // Optional copies beyond the minimum, innermost first, then the unbounded loop if any.
      let tail = next;
      if (node.max === Infinity) {
        const loop = push({ kind: "split", a: -1, b: next });
        const body = emit(node.item, loop, states);
        states[loop] = { kind: "split", a: body, b: next };
        tail = loop;
      } else {
        for (let i = node.min; i < node.max; i++) tail = push({ kind: "split", a: emit(node.item, tail, states), b: next });
      }
      for (let i = 0; i < node.min; i++) tail = emit(node.item, tail, states);
      return tail;
    }
  }
}

const atomMatchers = new Map<string, (char: string) => boolean>();

/** One code point against one atom, by the native engine: constant time, JavaScript's exact meaning. */
function atomMatcher(source: string): (char: string) => boolean {
  let matcher = atomMatchers.get(source);
  if (!matcher) {
    if (source !== "." && !source.startsWith("\\") && !source.startsWith("[")) {
      matcher = (char) => char === source;
    } else {
      const native = new RegExp(`^(?:${source})$`, "u");
      // Subjects repeat few distinct characters: remember the answers.
      const known = new Map<string, boolean>();
      matcher = (char) => {
        let answer = known.get(char);
        if (answer === undefined) {
          answer = native.test(char);
          if (known.size < 1_024) known.set(char, answer);
        }
        return answer;
      };
    }
    if (atomMatchers.size >= 10_000) atomMatchers.clear();
    atomMatchers.set(source, matcher);
  }
  return matcher;
}

class Parser {
  at = 0;
  constructor(private readonly source: string) {}

  parseAlternation(): Node {
    const options = [this.parseSequence()];
    while (this.source[this.at] === "|") {
      this.at++;
      options.push(this.parseSequence());
    }
    return options.length === 1 ? options[0]! : { kind: "alt", options };
  }

  private parseSequence(): Node {
    const items: Node[] = [];
    while (this.at < this.source.length && this.source[this.at] !== "|" && this.source[this.at] !== ")") {
      items.push(this.parseQuantified(this.parseAtom()));
    }
    return { kind: "seq", items };
  }

  private parseQuantified(item: Node): Node {
    const char = this.source[this.at];
    let min: number;
    let max: number;
    if (char === "*" || char === "+" || char === "?") {
      this.at++;
      [min, max] = char === "*" ? [0, Infinity] : char === "+" ? [1, Infinity] : [0, 1];
    } else if (char === "{") {
      const braces = /^\{(\d+)(,(\d*))?\}/.exec(this.source.slice(this.at));
      if (!braces) return item;
      this.at += braces[0].length;
      min = Number(braces[1]);
      max = braces[2] === undefined ? min : braces[3] ? Number(braces[3]) : Infinity;
      if (min > MAX_PATTERN_STATES || (max !== Infinity && max > MAX_PATTERN_STATES)) {
        throw new Unsupported(`repeats more than ${MAX_PATTERN_STATES} times`);
      }
    } else {
      return item;
    }
    // Laziness changes which match is found, never whether one exists.
    if (this.source[this.at] === "?") this.at++;
    if (item.kind === "start" || item.kind === "end") return item;
    return { kind: "repeat", item, min, max };
  }

  private parseAtom(): Node {
    const source = this.source;
    const char = source[this.at]!;
    if (char === "(") {
      this.at++;
      if (source.startsWith("?:", this.at)) this.at += 2;
      else if (
        source.startsWith("?=", this.at) ||
        source.startsWith("?!", this.at) ||
        source.startsWith("?<=", this.at) ||
        source.startsWith("?<!", this.at)
      ) {
        throw new Unsupported("uses lookaround");
      } else if (source.startsWith("?<", this.at)) this.at = source.indexOf(">", this.at) + 1;
      const inner = this.parseAlternation();
      if (source[this.at] !== ")") throw new Unsupported("has an unclosed group");
      this.at++;
      return inner;
    }
    if (char === "^") return this.skip({ kind: "start" }, 1);
    if (char === "$") return this.skip({ kind: "end" }, 1);
    if (char === "[") return this.atom(this.classEnd());
    if (char === "\\") return this.atom(this.escapeEnd());
    if (char === "." || !"*+?{}".includes(char)) return this.atom(this.at + String.fromCodePoint(source.codePointAt(this.at)!).length);
    throw new Unsupported(`has a quantifier "${char}" with nothing to repeat`);
  }

  private skip(node: Node, length: number): Node {
    this.at += length;
    return node;
  }

  private atom(end: number): Node {
    const text = this.source.slice(this.at, end);
    this.at = end;
    return { kind: "atom", test: atomMatcher(text) };
  }

  /** The end of a `[...]` class (in `u` mode classes do not nest). */
  private classEnd(): number {
    let at = this.at + 1;
    if (this.source[at] === "^") at++;
    while (at < this.source.length && this.source[at] !== "]") at += this.source[at] === "\\" ? 2 : 1;
    if (at >= this.source.length) throw new Unsupported("has an unclosed class");
    return at + 1;
  }

  /** The end of an escape; backreferences and word boundaries are not single-character atoms. */
  private escapeEnd(): number {
    const source = this.source;
    const next = source[this.at + 1] ?? "";
    if (/[1-9]/.test(next) || next === "k") throw new Unsupported("uses a backreference");
    if (next === "b" || next === "B") throw new Unsupported("uses a word boundary");
    if ((next === "p" || next === "P" || next === "u") && source[this.at + 2] === "{") return source.indexOf("}", this.at) + 1;
    if (next === "u") return this.at + 6;
    if (next === "x") return this.at + 4;
    if (next === "c") return this.at + 3;
    return this.at + 1 + String.fromCodePoint(source.codePointAt(this.at + 1)!).length;
  }
}
