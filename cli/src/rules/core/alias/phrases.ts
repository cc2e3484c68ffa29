// One pass over a text for every variant of every seed: an Aho–Corasick automaton
// over UTF-16 code units of the *normalised* text (normalise.ts: each character's
// matching form — case, compatibility forms and marks folded, format characters
// dropped, look-alikes read as Latin letters, entities and percent-encoding decoded —
// whitespace runs collapsed to one space, obfuscated `[at]`/` dot ` read as `@`/`.`,
// separators between digits dropped), with each normalised unit remembering where it
// started in the original, so a match is replaced in the original text. Matches are
// leftmost-longest and never inside a longer word. Cost: linear in the text, and
// building is linear in the total length of the phrases (docs/alias.md, "Matching").
// Why not a package or one RegExp: see the README's dependency list.
import { encodedRuns, encodeRun } from "./encoded-words.ts";
import {
  COMPLEX,
  IGNORABLE,
  isDigit,
  DOT,
  isIgnorable,
  isSpace,
  kindOf,
  OPENER,
  phraseOf,
  PLAIN,
  PLUS,
  plusIsItself,
  SEPARATOR,
  SPACE,
  SPACE_UNIT,
  special,
  unitForms,
  unitKinds,
  wordEndsAt,
  words,
  wordStartsAt,
  type Unit,
} from "./normalise.ts";

/** What an original unit is to the scan at the root (PhraseMatcher.#atRoot). */
/** Transition entries kept dense per matcher (4 bytes each): all states for a few hundred seeds, the shallow ones beyond. */
const DENSE_ENTRIES = 1 << 20;
const STOP = 0;
const SKIP = 1;
const WORD_START = 2;
/** Whitespace (and nothing else: not a digit separator's other kinds, not an opener). */
const BLANK = 3;
/** Not met yet by this matcher: read through the slow path, which learns it. */
const UNSEEN = 4;
/** A separator no phrase starts with (`-`, `/`, `)`): only between digits is it more than itself. */
const DIGIT_SEPARATOR = 5;
/** A full stop no phrase starts with: only after a digit or a separator may it be a phone's (the phone pass). */
const FULL_STOP = 6;
/** `#plainClass` of a unit not met yet. */
const UNRESOLVED = -2;

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
   * DENSE_ENTRIES allows: `#rowOf[state]` is the state's row (it starts at row × alphabet in
   * `#delta`), or -1 (children list). The scan spends most of its steps near the root, where states
   * have the most children.
   *
   * The scan walks *cursors*, not states: a state with a row is its row (the root is 0), any other
   * is minus its number. An entry of `#delta` is the target's cursor times two, plus one when a
   * phrase ends there, so a step along the rows is one read; column 0 of a row (class 0 is never
   * looked up) holds the state's first hit. Entries are 16-bit while there are fewer than 2¹⁴
   * states: the table every step reads from is then half the size, and fewer of its reads miss
   * the cache (most of a step's cost, and more so when other work shares the cores).
   */
  readonly #rowOf: Int32Array;
  readonly #delta: Int16Array | Int32Array;
  readonly #alphabet: number;
  /** Each state's entry as `#delta` holds it: for steps taken through a children list. */
  readonly #entry: Int32Array;
  readonly #ring: Int32Array;
  readonly #unit: Unit = { code: 0, more: "", end: 0, next: 0 };
  /** The last scan's matches, reused from scan to scan (a scan runs to its end before anything reads them). */
  readonly #chosen: number[] = [];
  /** Where the last scan met a full stop that may separate a phone's digits: [from, end) pairs, the first `#stopped` entries live. */
  readonly #stops: number[] = [];
  #stopped = 0;
  /**
   * What a unit of the original text is to the scan while it is at the root: SKIP (plain, and no
   * phrase starts with it), WORD_START (plain, a phrase starts with it, and it is a word unit: such
   * a phrase cannot start inside a word), BLANK, UNSEEN (not met yet), or STOP (anything else: read
   * it through the automaton).
   */
  readonly #atRoot = new Uint8Array(65536).fill(UNSEEN);
  /** A plain unit's class (that of its form), in one step; -1 for a unit the normaliser must look at, UNRESOLVED before it is met. */
  readonly #plainClass = new Int32Array(65536).fill(UNRESOLVED);
  /** 1 where a phrase starts with that (normalised) unit. */
  readonly #firstUnits = new Uint8Array(65536);
  /** The phone pass's reading: full stops between digits are separators too (`020.7946.0958`). */
  readonly #dots: boolean;

  constructor(phrases: Iterable<readonly [string, T]>, options: { dots?: boolean } = {}) {
    const word = words();
    this.#dots = options.dots ?? false;
    const seen = new Set<string>();
    const kept: string[] = [];
    let units = 0;
    let alphabet = 1;
    for (const [text, value] of phrases) {
      const phrase = phraseOf(text, this.#dots);
      if (phrase === "" || seen.has(phrase)) continue;
      seen.add(phrase);
      kept.push(phrase);
      units += phrase.length;
      this.#values.push(value);
      this.#lengths.push(phrase.length);
      this.#edges.push((word[phrase.charCodeAt(0)]! ? 1 : 0) | (word[phrase.charCodeAt(phrase.length - 1)]! ? 2 : 0));
      this.#firstUnits[phrase.charCodeAt(0)] = 1;
      for (let i = 0; i < phrase.length; i++) {
        const code = phrase.charCodeAt(i);
        if (this.#classOf[code] === 0) this.#classOf[code] = alphabet++;
      }
    }
    this.size = kept.length;
    // ASCII up front (most of any text); every other unit the first time the scan meets it.
    for (let code = 0; code < 0x80; code++) this.#learn(code);
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
    this.#alphabet = alphabet;
    this.#rowOf = new Int32Array(states).fill(-1);
    this.#delta = states < 1 << 14 ? new Int16Array(rows * alphabet) : new Int32Array(rows * alphabet);
    this.#rowOf[0] = 0;
    for (let row = 1; row < rows; row++) this.#rowOf[queue[row - 1]!] = 0;
    for (let state = 0, row = 0; state < states; state++) if (this.#rowOf[state] === 0) this.#rowOf[state] = row++;
    this.#entry = new Int32Array(states);
    for (let state = 0; state < states; state++) {
      const row = this.#rowOf[state]!;
      this.#entry[state] = ((row >= 0 ? row : -state) << 1) | (this.#firstHit[state]! >= 0 ? 1 : 0);
    }
    for (let cls = 1; cls < alphabet; cls++) this.#delta[cls] = this.#entry[this.#root[cls]!]!;
    this.#delta[0] = this.#firstHit[0]!;
    for (let row = 1; row < rows; row++) {
      const state = queue[row - 1]!;
      const offset = this.#rowOf[state]! * alphabet;
      const failRow = this.#rowOf[this.#fail[state]!]! * alphabet;
      this.#delta.copyWithin(offset, failRow, failRow + alphabet);
      this.#delta[offset] = this.#firstHit[state]!;
      for (let child = this.#firstChild[state]!; child >= 0; child = this.#nextSibling[child]!)
        this.#delta[offset + this.#label[child]!] = this.#entry[child]!;
    }
  }

  /** Fills in what this matcher needs to know of a unit (its class and what it is at the root); answers its class. */
  #learn(code: number): number {
    const kind = kindOf(code);
    const form = unitForms()[code]!;
    const plain = kind === PLAIN && !(this.#dots && form === DOT);
    const cls = plain ? this.#classOf[form]! : -1;
    this.#plainClass[code] = cls;
    if (kind & SPACE_UNIT && !(kind & COMPLEX)) this.#atRoot[code] = BLANK;
    else if (kind === SEPARATOR && !this.#firstUnits[form]) this.#atRoot[code] = DIGIT_SEPARATOR;
    else if (!plain) this.#atRoot[code] = STOP;
    // A full stop is read at the root too: after a digit or a space it may be a phone's separator (below).
    else if (!this.#firstUnits[form]) this.#atRoot[code] = form === DOT ? FULL_STOP : SKIP;
    else this.#atRoot[code] = words()[form] ? WORD_START : STOP;
    return cls;
  }

  /** The next state from `state` on class `cls`, or -1; the root answers 0 (stay) when it has no such edge. */
  #goto(state: number, cls: number): number {
    if (state === 0) return this.#root[cls]!;
    for (let child = this.#firstChild[state]!; child >= 0; child = this.#nextSibling[child]!) if (this.#label[child] === cls) return child;
    return -1;
  }

  /**
   * Non-overlapping matches, leftmost first and longest at one start, each bounded by non-word units
   * where the phrase is. With `phones` (the phone pass, SpellingMatcher), its matches join when this
   * scan met a full stop between digits.
   */
  find(text: string, phones?: PhraseMatcher<T>): PhraseMatch<T>[] {
    const matches = this.#matches(this.#scan(text));
    return phones && this.#dottedDigits(text) ? merged(matches, phones.find(text)) : matches;
  }

  /** The text with every match replaced by what `replace` returns for it, given the value and where the match is (the same string when nothing matched). */
  replace(text: string, replace: (value: T, text: string, start: number, end: number) => string, phones?: PhraseMatcher<T>): string {
    const used = this.#scan(text);
    if (phones && this.#dottedDigits(text)) {
      const matches = merged(this.#matches(used), phones.find(text));
      if (matches.length === 0) return text;
      let out = "";
      let at = 0;
      for (const { start, end, value } of matches) {
        out += text.slice(at, start) + replace(value, text, start, end);
        at = end;
      }
      return out + text.slice(at);
    }
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

  /** The last scan's matches as objects. */
  #matches(used: number): PhraseMatch<T>[] {
    const chosen = this.#chosen;
    const matches: PhraseMatch<T>[] = [];
    for (let i = 0; i < used; i += 3) matches.push({ start: chosen[i]!, end: chosen[i + 1]!, value: this.#values[chosen[i + 2]!]! });
    return matches;
  }

  /** Whether the last scan met a full stop with a digit on each side (separators, marks and format characters aside). */
  #dottedDigits(text: string): boolean {
    const stops = this.#stops;
    for (let i = 0; i < this.#stopped; i += 2) if (digitBeside(text, stops[i]! - 1, -1) && digitBeside(text, stops[i + 1]!, 1)) return true;
    return false;
  }

  /** Fills `#chosen` with the matches' triples (start, end, phrase id) and answers how many entries are live. */
  #scan(text: string): number {
    if (this.size === 0 || text.length === 0) return 0;
    const word = words();
    const forms = unitForms();
    const kinds = unitKinds();
    const unit = this.#unit;
    const ring = this.#ring;
    const mask = ring.length - 1;
    const n = text.length;
    const dots = this.#dots;
    const classOf = this.#classOf;
    const rowOf = this.#rowOf;
    const delta = this.#delta;
    const alphabet = this.#alphabet;
    const entry = this.#entry;
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
    const stops = this.#stops;
    let stopped = 0;
    let used = 0;
    /** Where the automaton is (see #rowOf); 0 is the root. */
    let cursor = 0;
    let last = -1;
    /** The unit before the current one (for the full-stop check). */
    let before = -1;
    // More normalised units read from the same characters (an expansion such as `ﬁ`), fed one by one.
    let pending = "";
    let pendingAt = 0;
    let pendingFrom = 0;
    let pendingEnd = 0;
    // The normalised text is walked unit by unit (k), without being written out; plain units take the short path.
    for (let i = 0, k = 0; i < n || pendingAt < pending.length; k++) {
      let from: number;
      let end: number;
      let cls: number;
      if (pendingAt < pending.length) {
        last = pending.charCodeAt(pendingAt++);
        from = pendingFrom;
        end = pendingEnd;
        cls = classOf[last]!;
      } else {
        if (cursor === 0) {
          // No match is under way: pass over units no phrase starts at, and phrase starts inside a word
          // (a phrase that starts with a word unit must not start inside a word, so all would be dropped).
          // A whitespace run is one space unit (no phrase starts with one) unless it is formatting between
          // digits or the start of an obfuscated ` at `/` dot `/`[at]`: it is passed over when neither can be.
          const skipFrom = i;
          for (; i < n; i++) {
            const at = atRoot[text.charCodeAt(i)]!;
            if (at === SKIP) continue;
            if (at === WORD_START) {
              // (A mark or format character before it is no word: the slow path looks past it. Nor is the end of an
              // escape that reads as something else, `\nMatthew`, `\u201cMatthew`: the edge check reads it.)
              if (i > 0 && word[text.charCodeAt(i - 1)] && !mayEndEscape(text, i)) continue;
              break;
            }
            // The rest depend on the unit before (the passed ones are each their own form, a space for whitespace).
            const prior = i === skipFrom ? last : forms[text.charCodeAt(i - 1)]!;
            if (at === DIGIT_SEPARATOR) {
              if (isDigit(prior)) break;
              continue;
            }
            if (at === FULL_STOP) {
              if (isDigit(prior) || (prior >= 0 && kindOf(prior) & SEPARATOR)) break;
              continue;
            }
            if (at !== BLANK || isDigit(prior)) break;
            let j = i + 1;
            while (j < n && kinds[text.charCodeAt(j)]! & SPACE_UNIT) j++;
            const after = text.charCodeAt(j) | 0x20;
            if (mayBeObfuscation(text, j, after) || kinds[text.charCodeAt(j)]! & (OPENER | COMPLEX)) break;
            i = j - 1;
          }
          if (i > skipFrom) {
            // The passed units were plain (each its own form) or whitespace runs (a space). Their unit count
            // does not matter: no match spans them, and a match's own units are counted one by one.
            k += i - skipFrom;
            const passed = text.charCodeAt(i - 1);
            last = kinds[passed]! & SPACE_UNIT ? SPACE : forms[passed]!;
            if (i === n) break;
          }
        }
        before = last;
        const c = text.charCodeAt(i);
        from = i;
        cls = plainClass[c]!;
        if (cls === UNRESOLVED) cls = this.#learn(c);
        if (cls >= 0) {
          last = forms[c]!;
          end = ++i;
        } else {
          // The commonest cases of special(), inline: separators between digits (a phone's), a separator
          // that is only itself, a whitespace run that cannot begin an obfuscated `at`/`dot`, and a `+` that
          // is certainly itself (a phone's `+44`).
          const kind = kinds[c]!;
          let j = -1;
          if (!(kind & COMPLEX)) {
            const gap =
              isDigit(last) && (kind & SEPARATOR || (dots && forms[c] === DOT)) ? gapBetweenDigits(text, i, kinds, forms, dots) : 0;
            if (gap > 0) {
              i = gap;
              k--;
              continue;
            }
            if (gap < 0) j = -1;
            else if (!(kind & (SPACE_UNIT | OPENER))) j = i + 1;
            else if (kind & SPACE_UNIT && last !== SPACE) {
              j = i + 1;
              while (j < n && kinds[text.charCodeAt(j)]! & SPACE_UNIT) j++;
              const after = text.charCodeAt(j) | 0x20;
              if (mayBeObfuscation(text, j, after) || kinds[text.charCodeAt(j)]! & (OPENER | COMPLEX)) j = -1;
            }
          } else if (c === PLUS && plusIsItself(text, i)) j = i + 1;
          if (j >= 0) {
            // (The one complex unit read here is a `+` that is itself: it has no entry in the forms.)
            last = kind & SPACE_UNIT ? SPACE : kind & COMPLEX ? c : forms[c]!;
            end = i = j;
          } else {
            special(text, i, last, unit, dots);
            i = unit.next;
            if (unit.code < 0) {
              k--;
              continue;
            }
            last = unit.code;
            end = unit.end;
            if (unit.more !== "") {
              pending = unit.more;
              pendingAt = 0;
              pendingFrom = from;
              pendingEnd = end;
            }
          }
          cls = classOf[last]!;
        }
      }
      // A full stop met during a match attempt, or after a digit, a space or another separator (`(020).7946`):
      // the phone pass may need to read the text (it runs when digits are on both sides of the stop, separators aside).
      if (last === DOT && (cursor !== 0 || isDigit(before) || (before >= 0 && kindOf(before) & SEPARATOR))) {
        stops[stopped++] = from;
        stops[stopped++] = end;
      }
      ring[k & mask] = from;
      if (cls === 0) {
        cursor = 0;
        continue;
      }
      let step = 0;
      if (cursor >= 0) step = delta[cursor * alphabet + cls]!;
      else {
        // Follow failures until a state has a row or an edge on cls; the root has a row (staying at worst).
        for (let state = -cursor; ; state = fail[state]!) {
          const row = rowOf[state]!;
          if (row >= 0) {
            step = delta[row * alphabet + cls]!;
            break;
          }
          let child = firstChild[state]!;
          while (child >= 0 && label[child] !== cls) child = nextSibling[child]!;
          if (child >= 0) {
            step = entry[child]!;
            break;
          }
        }
      }
      cursor = step >> 1;
      if (!(step & 1)) {
        // Along a phrase through rows, a plain unit where no phrase ends needs one step and nothing else
        // (after the units of an expansion still to come).
        while (cursor > 0 && i < n && pendingAt === pending.length) {
          const next = text.charCodeAt(i);
          const nextClass = plainClass[next]!;
          const form = forms[next]!;
          if (nextClass <= 0 || form === DOT) break;
          const along = delta[cursor * alphabet + nextClass]!;
          if (along & 1) break;
          ring[++k & mask] = i++;
          last = form;
          cursor = along >> 1;
        }
        continue;
      }
      let hit = cursor >= 0 ? delta[cursor * alphabet]! : firstHit[-cursor]!;
      // Marks and format characters after the match belong to it (`Zoe\u0308`); then, read once, whether a
      // word unit follows: every phrase ending here that ends with a word unit needs a non-word unit after it.
      // (An encoded character after it is read: `Nowell\u00e9` goes on a word, `Nowell<wbr>ian` too.)
      let after = end;
      while (after < n && kinds[text.charCodeAt(after)] === IGNORABLE) after++;
      let endInWord = after < n && word[text.charCodeAt(after)] === 1;
      if (after < n && kinds[text.charCodeAt(after)]! & COMPLEX && !endInWord) endInWord = wordStartsAt(text, after, word);
      while (hit >= 0) {
        const id = output[hit]!;
        const edge = edges[id]!;
        if (!(edge & 2 && endInWord)) {
          let start = ring[(k - lengths[id]! + 1) & mask]!;
          const previous = start > 0 ? text.charCodeAt(start - 1) : -1;
          // (Most matches follow a space or punctuation: the full reading is needed only after a word unit, a mark or
          // format character, or what may end `<wbr>` or a soft line break.)
          const mayBeWord =
            previous >= 0 && (word[previous] === 1 || kinds[previous] === IGNORABLE || previous === 0x3e || previous === 0x0a);
          if (!(edge & 1 && mayBeWord && wordEndsAt(text, start, word))) {
            // `(020) 7946 0958`: the match took the closing bracket, so it takes the opening one too.
            if ((previous === 0x28 || previous === 0xff08) && closesFirst(text, start, after)) start--;
            // Candidates arrive by end, the longest first at one end. Keep the chosen ones on a stack: a candidate
            // that starts earlier than the overlapping ones on top replaces them; one that starts later loses.
            let top = used - 3;
            while (top >= 0 && chosen[top + 1]! > start && chosen[top]! >= start) top -= 3;
            used = top + 3;
            if (top < 0 || chosen[top + 1]! <= start) {
              chosen[used++] = start;
              chosen[used++] = after;
              chosen[used++] = id;
            }
          }
        }
        hit = dict[hit]!;
      }
    }
    this.#stopped = stopped;
    return used;
  }
}

/**
 * Whether the word after a whitespace run is an obfuscated ` at ` or ` dot ` (`after`: its first unit, lower-cased):
 * the word, then whitespace, as special() reads one (`dolor` and `do it` are words, read inline).
 */
const mayBeObfuscation = (text: string, j: number, after: number) =>
  (after === 0x61 && (text.charCodeAt(j + 1) | 0x20) === 0x74 && isSpace(text.charCodeAt(j + 2))) ||
  (after === 0x64 &&
    (text.charCodeAt(j + 1) | 0x20) === 0x6f &&
    (text.charCodeAt(j + 2) | 0x20) === 0x74 &&
    isSpace(text.charCodeAt(j + 3)));

/**
 * special()'s reading of separators after a digit, for units the normaliser has worked out and that read as
 * themselves: where the digit after up to three separators starts (the separators are formatting), 0 when
 * no digit follows them, -1 when a unit on the way needs special() (an encoded, ignorable or unknown one).
 */
function gapBetweenDigits(text: string, i: number, kinds: Uint8Array, forms: Uint16Array, dots: boolean): number {
  for (let count = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    const kind = kinds[c]!;
    if (kind & COMPLEX) return -1;
    if (count === 3 || !(kind & SEPARATOR || (dots && forms[c] === DOT))) return isDigit(forms[c]!) ? i : 0;
    count++;
  }
  return 0;
}

/** Whether `text[start, end)` holds a closing bracket before any opening one. */
function closesFirst(text: string, start: number, end: number): boolean {
  for (let i = start; i < end; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x29 || c === 0xff09) return true;
    if (c === 0x28 || c === 0xff08) return false;
  }
  return false;
}

/** Whether an escape may end at `i` (`\n`, `%22`, `=AB`, `\xab`, `\u201c`): a backslash, `%` or `=` where one would start. */
const mayEndEscape = (text: string, i: number) =>
  text.charCodeAt(i - 2) === 0x5c ||
  text.charCodeAt(i - 3) === 0x25 ||
  text.charCodeAt(i - 3) === 0x3d ||
  text.charCodeAt(i - 4) === 0x5c ||
  text.charCodeAt(i - 6) === 0x5c;

/** Whether, from `i` going `step`, a digit (or the edge of an encoded character) comes within three separators. */
function digitBeside(text: string, i: number, step: 1 | -1): boolean {
  for (let skipped = 0; i >= 0 && i < text.length; i += step) {
    const c = text.charCodeAt(i);
    // `&…;`, `%30`, `\u0030`, and `<wbr>` or a soft line break `=` + newline beside a digit.
    if (
      isDigit(c) ||
      (c >= 0xff10 && c <= 0xff19) ||
      c === 0x26 ||
      c === 0x25 ||
      c === 0x3b ||
      c === 0x5c ||
      c === 0x3c ||
      c === 0x3e ||
      c === 0x3d
    )
      return true;
    if (isIgnorable(c)) continue;
    if (skipped++ === 3 || !(kindOf(c) & SEPARATOR)) return false;
  }
  return false;
}

/** Two lists of non-overlapping matches as one: leftmost first, the longer at one start, no overlaps. */
function merged<T>(first: PhraseMatch<T>[], second: PhraseMatch<T>[]): PhraseMatch<T>[] {
  if (second.length === 0) return first;
  const out: PhraseMatch<T>[] = [];
  let a = 0;
  let b = 0;
  let reached = 0;
  while (a < first.length || b < second.length) {
    const x = first[a];
    const y = second[b];
    const next = !y || (x && (x.start < y.start || (x.start === y.start && x.end >= y.end))) ? first[a++]! : second[b++]!;
    if (next.start < reached) continue;
    out.push(next);
    reached = next.end;
  }
  return out;
}

/**
 * Every spelling of the seeds: one pass over the text for all phrases, and a second that holds only
 * the phones and reads full stops between digits as separators too (`020.7946.0958`), run only when
 * the first met a full stop between digits. A full stop cannot be a separator in the first pass:
 * `10.0.0.1` would read as the digits `10001` and meet `$100.01`.
 */
export class SpellingMatcher<T> {
  /**
   * None without phrases (every door before its seeds, and every run whose rules have no alias door): a matcher's
   * tables take some 1.5 MiB to set up and its word table 65,536 regex tests, which each `hooks run` process paid
   * twice over before it had read a single seed.
   */
  readonly #all: PhraseMatcher<T> | undefined;
  readonly #phones: PhraseMatcher<T> | undefined;

  constructor(phrases: readonly (readonly [string, T])[], isPhone: (value: T) => boolean) {
    this.#all = phrases.length ? new PhraseMatcher(phrases) : undefined;
    const phones = phrases.filter(([, value]) => isPhone(value));
    this.#phones = phones.length ? new PhraseMatcher(phones, { dots: true }) : undefined;
  }

  get size(): number {
    return this.#all?.size ?? 0;
  }

  /**
   * The matches in `text`. A run of RFC 2047 encoded-words is read decoded (encoded-words.ts): a match in it
   * spans the whole run; the text between runs is read as it is.
   */
  find(text: string): PhraseMatch<T>[] {
    const all = this.#all;
    if (!all) return [];
    const runs = encodedRuns(text);
    if (runs.length === 0) return all.find(text, this.#phones);
    const matches: PhraseMatch<T>[] = [];
    let at = 0;
    for (const run of [...runs, { start: text.length, end: text.length, text: "" }]) {
      for (const { start, end, value } of all.find(text.slice(at, run.start), this.#phones))
        matches.push({ start: at + start, end: at + end, value });
      for (const { value } of all.find(run.text, this.#phones)) matches.push({ start: run.start, end: run.end, value });
      at = run.end;
    }
    return matches;
  }

  /** The text with every match replaced; a run of encoded-words that changes is written again in its own encoding. */
  replace(text: string, replace: (value: T, text: string, start: number, end: number) => string): string {
    const all = this.#all;
    if (!all) return text;
    const runs = encodedRuns(text);
    if (runs.length === 0) return all.replace(text, replace, this.#phones);
    let out = "";
    let at = 0;
    for (const run of runs) {
      const decoded = all.replace(run.text, replace, this.#phones);
      out += all.replace(text.slice(at, run.start), replace, this.#phones);
      out += decoded === run.text ? text.slice(run.start, run.end) : encodeRun(run, decoded);
      at = run.end;
    }
    out += all.replace(text.slice(at), replace, this.#phones);
    return out === text ? text : out;
  }
}
