// Where each key of a rules file sits, so a validation error can name its line.
// smol-toml (and JSON.parse) give lines only for syntax errors; these scanners walk
// a document that has already parsed and record the line of every key path.

export type KeyPath = readonly (string | number)[];

export function formatPath(path: KeyPath): string {
  let out = "";
  for (const part of path) {
    if (typeof part === "number") out += `[${part}]`;
    else out += out === "" ? part : `.${part}`;
  }
  return out;
}

/** Key path → line, answered for the nearest recorded ancestor when the exact path has no line. */
export class LineMap {
  readonly #lines = new Map<string, number>();

  set(path: KeyPath, line: number): void {
    const key = formatPath(path);
    if (!this.#lines.has(key)) this.#lines.set(key, line);
  }

  lineOf(path: KeyPath): number | undefined {
    for (let end = path.length; end >= 0; end--) {
      const line = this.#lines.get(formatPath(path.slice(0, end)));
      if (line !== undefined) return line;
    }
    return undefined;
  }
}

class Cursor {
  pos = 0;
  line = 1;
  constructor(readonly text: string) {}
  get char(): string {
    return this.text[this.pos] ?? "";
  }
  startsWith(token: string): boolean {
    return this.text.startsWith(token, this.pos);
  }
  advance(count = 1): void {
    for (let i = 0; i < count && this.pos < this.text.length; i++) {
      if (this.text[this.pos] === "\n") this.line++;
      this.pos++;
    }
  }
  /** Skips blanks, and (TOML) comments and newlines when asked. */
  skip(newlines: boolean, comments: boolean): void {
    for (;;) {
      const c = this.char;
      if (c === " " || c === "\t" || c === "\r" || (newlines && c === "\n")) this.advance();
      else if (comments && c === "#") while (this.pos < this.text.length && this.char !== "\n") this.advance();
      else return;
    }
  }
}

/** Lines of every key in a TOML document that smol-toml has already accepted. */
export function tomlLines(text: string): LineMap {
  const map = new LineMap();
  const cursor = new Cursor(text);
  const arrayTables = new Map<string, number>();
  let table: (string | number)[] = [];

  // `[[a.b]]` inside `[[a]]` refers to a's last element, so each prefix that names an array of tables gets its index.
  const resolve = (keys: string[]): (string | number)[] => {
    const out: (string | number)[] = [];
    for (const key of keys) {
      out.push(key);
      const index = arrayTables.get(formatPath(out));
      if (index !== undefined) out.push(index);
    }
    return out;
  };

  while (cursor.pos < text.length) {
    cursor.skip(true, true);
    if (cursor.pos >= text.length) break;
    const line = cursor.line;
    if (cursor.startsWith("[[")) {
      cursor.advance(2);
      const keys = readKey(cursor);
      cursor.skip(false, false);
      cursor.advance(2);
      const parent = resolve(keys.slice(0, -1));
      const arrayPath = [...parent, keys[keys.length - 1]!];
      const index = (arrayTables.get(formatPath(arrayPath)) ?? -1) + 1;
      arrayTables.set(formatPath(arrayPath), index);
      table = [...arrayPath, index];
      map.set(arrayPath, line);
      map.set(table, line);
    } else if (cursor.char === "[") {
      cursor.advance();
      table = resolve(readKey(cursor));
      cursor.skip(false, false);
      cursor.advance();
      map.set(table, line);
    } else {
      const path = [...table, ...readKey(cursor)];
      map.set(path, line);
      cursor.skip(false, false);
      cursor.advance(); // =
      cursor.skip(false, false);
      tomlValue(cursor, path, map);
    }
  }
  return map;
}

function readKey(cursor: Cursor): string[] {
  const keys: string[] = [];
  for (;;) {
    cursor.skip(false, false);
    if (cursor.char === '"' || cursor.char === "'") keys.push(readQuoted(cursor));
    else {
      let key = "";
      while (/[A-Za-z0-9_-]/.test(cursor.char)) {
        key += cursor.char;
        cursor.advance();
      }
      keys.push(key);
    }
    cursor.skip(false, false);
    if (cursor.char !== ".") return keys;
    cursor.advance();
  }
}

function readQuoted(cursor: Cursor): string {
  const quote = cursor.char;
  const triple = cursor.startsWith(quote.repeat(3));
  cursor.advance(triple ? 3 : 1);
  let value = "";
  for (;;) {
    if (cursor.pos >= cursor.text.length) return value;
    if (triple ? cursor.startsWith(quote.repeat(3)) : cursor.char === quote) {
      cursor.advance(triple ? 3 : 1);
      // A triple-quoted string may end with up to two more quote characters.
      while (triple && cursor.char === quote) cursor.advance();
      return value;
    }
    if (quote === '"' && cursor.char === "\\") {
      value += cursor.text.slice(cursor.pos, cursor.pos + 2);
      cursor.advance(2);
      continue;
    }
    value += cursor.char;
    cursor.advance();
  }
}

function tomlValue(cursor: Cursor, path: KeyPath, map: LineMap): void {
  const c = cursor.char;
  if (c === '"' || c === "'") {
    readQuoted(cursor);
  } else if (c === "[") {
    cursor.advance();
    for (let index = 0; ; index++) {
      cursor.skip(true, true);
      if (cursor.char === "]" || cursor.pos >= cursor.text.length) break;
      map.set([...path, index], cursor.line);
      tomlValue(cursor, [...path, index], map);
      cursor.skip(true, true);
      if (cursor.char === ",") cursor.advance();
    }
    cursor.advance();
  } else if (c === "{") {
    cursor.advance();
    for (;;) {
      cursor.skip(false, false);
      if (cursor.char === "}" || cursor.pos >= cursor.text.length) break;
      const line = cursor.line;
      const keyPath = [...path, ...readKey(cursor)];
      map.set(keyPath, line);
      cursor.skip(false, false);
      cursor.advance(); // =
      cursor.skip(false, false);
      tomlValue(cursor, keyPath, map);
      cursor.skip(false, false);
      if (cursor.char === ",") cursor.advance();
    }
    cursor.advance();
  } else {
    while (cursor.pos < cursor.text.length && !/[,\]}\n#]/.test(cursor.char)) cursor.advance();
  }
}

/** Lines of every key in a JSON document that JSON.parse has already accepted. */
export function jsonLines(text: string): LineMap {
  const map = new LineMap();
  const cursor = new Cursor(text);
  cursor.skip(true, false);
  jsonValue(cursor, [], map);
  return map;
}

function jsonValue(cursor: Cursor, path: KeyPath, map: LineMap): void {
  const c = cursor.char;
  if (c === '"') readQuoted(cursor);
  else if (c === "[" || c === "{") {
    const object = c === "{";
    cursor.advance();
    for (let index = 0; ; index++) {
      cursor.skip(true, false);
      if (cursor.char === "]" || cursor.char === "}" || cursor.pos >= cursor.text.length) break;
      const line = cursor.line;
      let childPath: KeyPath = [...path, index];
      if (object) {
        childPath = [...path, readQuoted(cursor)];
        cursor.skip(true, false);
        cursor.advance(); // :
        cursor.skip(true, false);
      }
      map.set(childPath, line);
      jsonValue(cursor, childPath, map);
      cursor.skip(true, false);
      if (cursor.char === ",") cursor.advance();
    }
    cursor.advance();
  } else while (cursor.pos < cursor.text.length && !/[,\]}\s]/.test(cursor.char)) cursor.advance();
}
