// One pass over a text for every variant of every seed: an Aho–Corasick automaton
// over UTF-16 code units of the *normalised* text (case-folded, whitespace runs
// collapsed to one space, obfuscated `[at]`/` dot ` read as `@`/`.`, separators
// between digits dropped), with each normalised unit remembering where it started
// in the original, so a match is replaced in the original text. Matches are
// leftmost-longest and never inside a longer word. Cost: linear in the text, and
// building is linear in the total length of the phrases (docs/alias.md, "Matching").
// Why not a package or one RegExp: see the README's dependency list.

const SPACE = 0x20;
const AT = 0x40;
const DOT = 0x2e;

let foldTable: Uint16Array | undefined;
/** Lower case of each UTF-16 unit (itself where lowering changes the length). */
function folds(): Uint16Array {
  if (foldTable) return foldTable;
  foldTable = new Uint16Array(65536);
  for (let code = 0; code < 65536; code++) {
    const lower = String.fromCharCode(code).toLowerCase();
    foldTable[code] = lower.length === 1 ? lower.charCodeAt(0) : code;
  }
  return foldTable;
}

let wordTable: Uint8Array | undefined;
/** 1 where a unit is part of a word: a letter, a digit, a mark or `_`. */
function words(): Uint8Array {
  if (wordTable) return wordTable;
  wordTable = new Uint8Array(65536);
  const word = /[\p{L}\p{N}\p{M}_]/u;
  for (let code = 0; code < 65536; code++) if (word.test(String.fromCharCode(code))) wordTable[code] = 1;
  return wordTable;
}

/** What a unit may be to the normaliser: plain (folded and kept), whitespace, an opening bracket, a separator between digits. */
const PLAIN = 0;
const SPACE_UNIT = 1;
const OPENER = 2;
const SEPARATOR = 4;
let kindTable: Uint8Array | undefined;
function unitKinds(): Uint8Array {
  if (kindTable) return kindTable;
  kindTable = new Uint8Array(65536);
  for (let code = 0; code < 65536; code++)
    kindTable[code] = (isSpace(code) ? SPACE_UNIT : 0) | (OPENERS.has(code) ? OPENER : 0) | (isDigitSeparator(code) ? SEPARATOR : 0);
  return kindTable;
}

const isSpace = (c: number) =>
  c === 0x20 ||
  (c >= 0x09 && c <= 0x0d) ||
  c === 0xa0 ||
  c === 0x1680 ||
  (c >= 0x2000 && c <= 0x200a) ||
  c === 0x2028 ||
  c === 0x2029 ||
  c === 0x202f ||
  c === 0x205f ||
  c === 0x3000 ||
  c === 0xfeff;
const isDigit = (c: number) => c >= 0x30 && c <= 0x39;
/** Between two digits these are formatting (`020 7946-0958`, `(0)20`), not content. */
const isDigitSeparator = (c: number) => isSpace(c) || c === 0x2d || c === 0x28 || c === 0x29 || c === 0x2f;
const OPENERS = new Set([0x5b, 0x28, 0x7b]);
const CLOSERS = new Set([0x5d, 0x29, 0x7d]);

/** What an original unit is to the scan at the root (PhraseMatcher.#atRoot). */
/** Transition entries kept dense per matcher (4 bytes each): all states for a few hundred seeds, the shallow ones beyond. */
const DENSE_ENTRIES = 1 << 20;
const STOP = 0;
const SKIP = 1;
const WORD_START = 2;
/** Whitespace (and nothing else: not a digit separator's other kinds, not an opener). */
const BLANK = 3;

/** One normalised unit that is not a plain folded character: what `special` found at a position. */
interface Unit {
  /** The unit's code, or -1 when the characters were only formatting (dropped). */
  code: number;
  /** Where its characters end in the original, and where the next unit starts. */
  end: number;
  next: number;
}

/**
 * The normalisation rules for a position whose unit is not plain: separators
 * between digits are dropped, a whitespace run is one space, an obfuscated
 * `at`/`dot` is `@`/`.`; anything else is itself, folded. `last` is the code of
 * the previous unit.
 */
function special(text: string, i: number, last: number, out: Unit): void {
  const kinds = unitKinds();
  const n = text.length;
  const kind = kinds[text.charCodeAt(i)]!;
  if (isDigit(last)) {
    let j = i;
    while (j < n && j - i < 3 && kinds[text.charCodeAt(j)]! & SEPARATOR) j++;
    if (j > i && j < n && isDigit(text.charCodeAt(j))) {
      out.code = -1;
      out.end = out.next = j;
      return;
    }
  }
  if (kind & (SPACE_UNIT | OPENER)) {
    let j = i;
    while (j < n && kinds[text.charCodeAt(j)]! & SPACE_UNIT) j++;
    const token = obfuscation(text, j, j > i);
    if (token) {
      out.code = token.code;
      out.end = out.next = token.end;
      while (out.next < n && kinds[text.charCodeAt(out.next)]! & SPACE_UNIT) out.next++;
      return;
    }
    if (j > i) {
      out.code = SPACE;
      out.end = out.next = j;
      return;
    }
  }
  out.code = folds()[text.charCodeAt(i)]!;
  out.end = out.next = i + 1;
}

/** A phrase in normalised form, as a string (for building and for lookups). */
export function phraseOf(text: string): string {
  const fold = folds();
  const kinds = unitKinds();
  const unit: Unit = { code: 0, end: 0, next: 0 };
  const trimmed = text.trim();
  let out = "";
  let last = -1;
  for (let i = 0; i < trimmed.length;) {
    const c = trimmed.charCodeAt(i);
    if (kinds[c] === PLAIN) {
      last = fold[c]!;
      i++;
    } else {
      special(trimmed, i, last, unit);
      i = unit.next;
      if (unit.code < 0) continue;
      last = unit.code;
    }
    out += String.fromCharCode(last);
  }
  return out;
}

/** `[at]`, `(dot)`, `{at}` anywhere; ` at `, ` dot ` as words between spaces. */
function obfuscation(text: string, at: number, spaced: boolean): { code: number; end: number } | undefined {
  const c = text.charCodeAt(at);
  if (unitKinds()[c]! & OPENER) {
    let j = at + 1;
    while (isSpace(text.charCodeAt(j))) j++;
    const word = wordAt(text, j);
    if (!word) return undefined;
    j += word.length;
    while (isSpace(text.charCodeAt(j))) j++;
    if (!CLOSERS.has(text.charCodeAt(j))) return undefined;
    return { code: word.code, end: j + 1 };
  }
  if (!spaced) return undefined;
  const word = wordAt(text, at);
  if (!word || !isSpace(text.charCodeAt(at + word.length))) return undefined;
  return { code: word.code, end: at + word.length };
}

function wordAt(text: string, at: number): { code: number; length: number } | undefined {
  const a = text.charCodeAt(at) | 0x20;
  const b = text.charCodeAt(at + 1) | 0x20;
  if (a === 0x61 && b === 0x74) return { code: AT, length: 2 };
  if (a === 0x64 && b === 0x6f && (text.charCodeAt(at + 2) | 0x20) === 0x74) return { code: DOT, length: 3 };
  return undefined;
}

/** One match in the original text: `[start, end)` and the phrase's value. */
export interface PhraseMatch<T> {
  start: number;
  end: number;
  value: T;
}

/** Phrases (normalised on the way in) with a value each; the first of two equal phrases wins. */
export class PhraseMatcher<T> {
  readonly size: number;
  readonly #values: T[] = [];
  readonly #lengths: number[] = [];
  /** Whether the phrase's first / last unit is part of a word (then the text must not continue the word). */
  readonly #edges: number[] = [];
  readonly #classOf = new Int32Array(65536);
  /** The root's transitions, dense by class (0: stay at the root). */
  readonly #root: Int32Array;
  /** Every other state's children as a list: first child, next sibling, and the class on the edge into it. */
  readonly #firstChild: Int32Array;
  readonly #nextSibling: Int32Array;
  readonly #label: Int32Array;
  readonly #fail: Int32Array;
  readonly #output: Int32Array;
  readonly #dict: Int32Array;
  /** Where a state's hits begin: itself when a phrase ends there, else its dictionary link (-1: none). */
  readonly #firstHit: Int32Array;
  /**
   * Full transition rows (failures already followed) for the shallowest states, as many as
   * DENSE_ENTRIES allows: `#rowOf[state]` is the row's offset in `#delta`, or -1 (children list).
   * The scan spends most of its steps near the root, where states have the most children.
   */
  readonly #rowOf: Int32Array;
  readonly #delta: Int32Array;
  readonly #ring: Int32Array;
  readonly #unit: Unit = { code: 0, end: 0, next: 0 };
  /** The last scan's matches, reused from scan to scan (a scan runs to its end before anything reads them). */
  readonly #chosen: number[] = [];
  /**
   * What a unit of the original text is to the scan while it is at the root: SKIP (plain, and no
   * phrase starts with it), WORD_START (plain, a phrase starts with it, and it is a word unit: such
   * a phrase cannot start inside a word), or STOP (anything else: read it through the automaton).
   */
  readonly #atRoot = new Uint8Array(65536);
  /** A plain unit's class (that of its fold), in one step; -1 for a unit the normaliser must look at. */
  readonly #plainClass = new Int32Array(65536);

  constructor(phrases: Iterable<readonly [string, T]>) {
    const word = words();
    const seen = new Set<string>();
    const kept: string[] = [];
    let units = 0;
    let alphabet = 1;
    for (const [text, value] of phrases) {
      const phrase = phraseOf(text);
      if (phrase === "" || seen.has(phrase)) continue;
      seen.add(phrase);
      kept.push(phrase);
      units += phrase.length;
      this.#values.push(value);
      this.#lengths.push(phrase.length);
      this.#edges.push((word[phrase.charCodeAt(0)]! ? 1 : 0) | (word[phrase.charCodeAt(phrase.length - 1)]! ? 2 : 0));
      for (let i = 0; i < phrase.length; i++) {
        const code = phrase.charCodeAt(i);
        if (this.#classOf[code] === 0) this.#classOf[code] = alphabet++;
      }
    }
    this.size = kept.length;
    const fold = folds();
    const kinds = unitKinds();
    const firstUnits = new Set(kept.map((phrase) => phrase.charCodeAt(0)));
    for (let code = 0; code < 65536; code++) {
      const folded = fold[code]!;
      this.#plainClass[code] = kinds[code] === PLAIN ? this.#classOf[folded]! : -1;
      if (kinds[code]! & SPACE_UNIT) this.#atRoot[code] = BLANK;
      else if (kinds[code] !== PLAIN) this.#atRoot[code] = STOP;
      else if (!firstUnits.has(folded)) this.#atRoot[code] = SKIP;
      else this.#atRoot[code] = word[folded] ? WORD_START : STOP;
    }
    // Where the last units started: a power of two longer than the longest phrase.
    const longest = kept.reduce((most, phrase) => Math.max(most, phrase.length), 0);
    this.#ring = new Int32Array(2 ** Math.ceil(Math.log2(longest + 2)));
    // At most one state per unit, plus the root.
    const capacity = units + 1;
    this.#root = new Int32Array(alphabet);
    this.#firstChild = new Int32Array(capacity).fill(-1);
    this.#nextSibling = new Int32Array(capacity).fill(-1);
    this.#label = new Int32Array(capacity);
    this.#output = new Int32Array(capacity).fill(-1);
    let states = 1;
    kept.forEach((phrase, id) => {
      let state = 0;
      for (let i = 0; i < phrase.length; i++) {
        const cls = this.#classOf[phrase.charCodeAt(i)]!;
        let next = this.#goto(state, cls);
        if (next <= 0) {
          next = states++;
          this.#label[next] = cls;
          if (state === 0) this.#root[cls] = next;
          else {
            this.#nextSibling[next] = this.#firstChild[state]!;
            this.#firstChild[state] = next;
          }
        }
        state = next;
      }
      this.#output[state] = id;
    });
    this.#fail = new Int32Array(states);
    this.#dict = new Int32Array(states).fill(-1);
    // Breadth first: a state's failure is the longest proper suffix that is also a trie path.
    const queue = new Int32Array(states);
    let head = 0;
    let tail = 0;
    for (let cls = 1; cls < alphabet; cls++) if (this.#root[cls]! > 0) queue[tail++] = this.#root[cls]!;
    while (head < tail) {
      const state = queue[head++]!;
      for (let child = this.#firstChild[state]!; child >= 0; child = this.#nextSibling[child]!) {
        const cls = this.#label[child]!;
        queue[tail++] = child;
        let f = this.#fail[state]!;
        let to = this.#goto(f, cls);
        while (to < 0) {
          f = this.#fail[f]!;
          to = this.#goto(f, cls);
        }
        this.#fail[child] = to;
        this.#dict[child] = this.#output[to]! >= 0 ? to : this.#dict[to]!;
      }
    }
    this.#firstHit = new Int32Array(states);
    for (let state = 0; state < states; state++) this.#firstHit[state] = this.#output[state]! >= 0 ? state : this.#dict[state]!;
    // The shallowest states get rows (so a state with a row has a failure with one: it is shallower), laid
    // out in state order, so a walk along one phrase reads neighbouring rows; filled breadth first.
    const rows = Math.max(1, Math.min(states, Math.floor(DENSE_ENTRIES / alphabet)));
    this.#rowOf = new Int32Array(states).fill(-1);
    this.#delta = new Int32Array(rows * alphabet);
    this.#rowOf[0] = 0;
    for (let row = 1; row < rows; row++) this.#rowOf[queue[row - 1]!] = 0;
    for (let state = 0, offset = 0; state < states; state++)
      if (this.#rowOf[state] === 0) {
        this.#rowOf[state] = offset;
        offset += alphabet;
      }
    this.#delta.set(this.#root);
    for (let row = 1; row < rows; row++) {
      const state = queue[row - 1]!;
      const offset = this.#rowOf[state]!;
      const failRow = this.#rowOf[this.#fail[state]!]!;
      this.#delta.copyWithin(offset, failRow, failRow + alphabet);
      for (let child = this.#firstChild[state]!; child >= 0; child = this.#nextSibling[child]!)
        this.#delta[offset + this.#label[child]!] = child;
    }
  }

  /** The next state from `state` on class `cls`, or -1; the root answers 0 (stay) when it has no such edge. */
  #goto(state: number, cls: number): number {
    if (state === 0) return this.#root[cls]!;
    for (let child = this.#firstChild[state]!; child >= 0; child = this.#nextSibling[child]!) if (this.#label[child] === cls) return child;
    return -1;
  }

  /** Non-overlapping matches, leftmost first and longest at one start, each bounded by non-word units where the phrase is. */
  find(text: string): PhraseMatch<T>[] {
    const chosen = this.#chosen;
    const used = this.#scan(text);
    const matches: PhraseMatch<T>[] = [];
    for (let i = 0; i < used; i += 3) matches.push({ start: chosen[i]!, end: chosen[i + 1]!, value: this.#values[chosen[i + 2]!]! });
    return matches;
  }

  /** The text with every match replaced by what `replace` returns for it, given the value and where the match is (the same string when nothing matched). */
  replace(text: string, replace: (value: T, text: string, start: number, end: number) => string): string {
    const used = this.#scan(text);
    if (used === 0) return text;
    // Read straight from the scan's triples: a page has thousands of matches, and no object is made for one.
    const chosen = this.#chosen;
    const values = this.#values;
    let out = "";
    let at = 0;
    for (let i = 0; i < used; i += 3) {
      const start = chosen[i]!;
      const end = chosen[i + 1]!;
      out += text.slice(at, start) + replace(values[chosen[i + 2]!]!, text, start, end);
      at = end;
    }
    return out + text.slice(at);
  }

  /** Fills `#chosen` with the matches' triples (start, end, phrase id) and answers how many entries are live. */
  #scan(text: string): number {
    if (this.size === 0 || text.length === 0) return 0;
    const word = words();
    const fold = folds();
    const kinds = unitKinds();
    const unit = this.#unit;
    const ring = this.#ring;
    const mask = ring.length - 1;
    const n = text.length;
    const classOf = this.#classOf;
    const rowOf = this.#rowOf;
    const delta = this.#delta;
    const firstHit = this.#firstHit;
    const firstChild = this.#firstChild;
    const nextSibling = this.#nextSibling;
    const label = this.#label;
    const fail = this.#fail;
    const output = this.#output;
    const dict = this.#dict;
    const lengths = this.#lengths;
    const edges = this.#edges;
    const atRoot = this.#atRoot;
    const plainClass = this.#plainClass;
    const chosen = this.#chosen; // triples: start, end, id; the first `used` entries are live
    let used = 0;
    let state = 0;
    let last = -1;
    // The normalised text is walked unit by unit (k), without being written out; plain units take the short path.
    for (let i = 0, k = 0; i < n; k++) {
      if (state === 0) {
        // No match is under way: pass over units no phrase starts at, and phrase starts inside a word
        // (a phrase that starts with a word unit must not start inside a word, so all would be dropped).
        // A whitespace run is one space unit (no phrase starts with one) unless it is formatting between
        // digits or the start of an obfuscated ` at `/` dot `/`[at]`: it is passed over when neither can be.
        const skipFrom = i;
        for (; i < n; i++) {
          const at = atRoot[text.charCodeAt(i)]!;
          if (at === SKIP) continue;
          if (at === WORD_START) {
            if (i > 0 && word[text.charCodeAt(i - 1)]) continue;
            break;
          }
          if (at !== BLANK || isDigit(i === skipFrom ? last : text.charCodeAt(i - 1))) break;
          let j = i + 1;
          while (j < n && kinds[text.charCodeAt(j)]! & SPACE_UNIT) j++;
          const after = text.charCodeAt(j) | 0x20;
          if (after === 0x61 || after === 0x64 || kinds[text.charCodeAt(j)]! & OPENER) break;
          i = j - 1;
        }
        if (i > skipFrom) {
          // The passed units were plain (each its own fold) or whitespace runs (a space). Their unit count
          // does not matter: no match spans them, and a match's own units are counted one by one.
          k += i - skipFrom;
          const passed = text.charCodeAt(i - 1);
          last = kinds[passed]! & SPACE_UNIT ? SPACE : fold[passed]!;
          if (i === n) break;
        }
      }
      const c = text.charCodeAt(i);
      const from = i;
      let end: number;
      let cls = plainClass[c]!;
      if (cls >= 0) {
        // Plain: only whether it is a digit is read of `last` from here, and folding keeps that.
        last = c;
        end = ++i;
      } else {
        // The commonest cases of special(), inline: not after a digit, a separator that is only itself,
        // and a whitespace run that cannot begin an obfuscated `at`/`dot`.
        const kind = kinds[c]!;
        let j: number;
        if (isDigit(last)) j = -1;
        else if (!(kind & (SPACE_UNIT | OPENER))) j = i + 1;
        else if (kind & SPACE_UNIT) {
          j = i + 1;
          while (j < n && kinds[text.charCodeAt(j)]! & SPACE_UNIT) j++;
          const after = text.charCodeAt(j) | 0x20;
          if (after === 0x61 || after === 0x64 || kinds[text.charCodeAt(j)]! & OPENER) j = -1;
        } else j = -1;
        if (j >= 0) {
          last = kind & SPACE_UNIT ? SPACE : fold[c]!;
          end = i = j;
        } else {
          special(text, i, last, unit);
          i = unit.next;
          if (unit.code < 0) {
            k--;
            continue;
          }
          last = unit.code;
          end = unit.end;
        }
        cls = classOf[last]!;
      }
      ring[k & mask] = from;
      if (cls === 0) {
        state = 0;
        continue;
      }
      // Follow failures until a state has a row or an edge on cls; the root has a row (staying at worst).
      for (;;) {
        const row = rowOf[state]!;
        if (row >= 0) {
          state = delta[row + cls]!;
          break;
        }
        let child = firstChild[state]!;
        while (child >= 0 && label[child] !== cls) child = nextSibling[child]!;
        if (child >= 0) {
          state = child;
          break;
        }
        state = fail[state]!;
      }
      let hit = firstHit[state]!;
      if (hit < 0) continue;
      // Every phrase ending here that ends with a word unit needs a non-word unit after it: read once.
      const endInWord = end < n && word[text.charCodeAt(end)] === 1;
      while (hit >= 0) {
        const id = output[hit]!;
        const edge = edges[id]!;
        if (!(edge & 2 && endInWord)) {
          const start = ring[(k - lengths[id]! + 1) & mask]!;
          if (!(edge & 1 && start > 0 && word[text.charCodeAt(start - 1)])) {
            // Candidates arrive by end, the longest first at one end. Keep the chosen ones on a stack: a candidate
            // that starts earlier than the overlapping ones on top replaces them; one that starts later loses.
            let top = used - 3;
            while (top >= 0 && chosen[top + 1]! > start && chosen[top]! >= start) top -= 3;
            used = top + 3;
            if (top < 0 || chosen[top + 1]! <= start) {
              chosen[used++] = start;
              chosen[used++] = end;
              chosen[used++] = id;
            }
          }
        }
        hit = dict[hit]!;
      }
    }
    return used;
  }
}
