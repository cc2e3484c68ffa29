/** Everything the CLI prints goes through here: one JSON document with --json, readable lines otherwise. */
export interface Printer {
  json: boolean;
  /** The command's result: as JSON with --json, else through `human`. */
  result(value: unknown, human: () => string | string[]): void;
  /** Progress and notes for a person; silent with --json and off a TTY's stdout. */
  note(line: string): void;
}

export function createPrinter(json: boolean): Printer {
  return {
    json,
    result(value, human) {
      if (json) {
        process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
        return;
      }
      const text = human();
      process.stdout.write(`${Array.isArray(text) ? text.join("\n") : text}\n`);
    },
    note(line) {
      if (!json) process.stderr.write(`${line}\n`);
    },
  };
}

/** Columns padded to their widest cell, for lists. */
export function table(rows: string[][]): string[] {
  if (rows.length === 0) return [];
  const widths = rows[0]!.map((_, column) => Math.max(...rows.map((row) => (row[column] ?? "").length)));
  return rows.map((row) =>
    row
      .map((cell, column) => (column === row.length - 1 ? cell : cell.padEnd(widths[column]!)))
      .join("  ")
      .trimEnd(),
  );
}
