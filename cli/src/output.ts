/** Everything the CLI prints goes through here: one JSON document with --json, readable lines otherwise. */
export interface Printer {
  json: boolean;
  /** The command's result: as JSON with --json, else through `human`. */
  result(value: unknown, human: () => string | string[]): void;
  /**
   * A live status line for a person at a terminal during a long command (apply, logs --follow): written to
   * stderr and rewritten in place. Silent with --json and whenever stderr is not a TTY (CI logs, pipes).
   */
  progress(line: string): void;
  /** Clears the status line, before the result is printed. */
  endProgress(): void;
}

export function createPrinter(json: boolean): Printer {
  const live = !json && process.stderr.isTTY === true;
  let shown = false;
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
    progress(line) {
      if (!live) return;
      const width = Math.max(20, (process.stderr.columns || 80) - 1);
      process.stderr.write(`\r\x1b[2K${line.length > width ? `${line.slice(0, width - 1)}…` : line}`);
      shown = true;
    },
    endProgress() {
      if (shown) process.stderr.write("\r\x1b[2K");
      shown = false;
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
