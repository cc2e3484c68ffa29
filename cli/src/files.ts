import { readFileSync, writeFileSync } from "node:fs";
import { CliError, EXIT } from "./errors.ts";

export function readText(path: string): string {
  try {
    return readFileSync(path, "utf8");
  } catch (error) {
    throw new CliError(`Cannot read ${path}: ${(error as NodeJS.ErrnoException).code ?? String(error)}`, EXIT.refused, "file_unreadable");
  }
}

/** A JSON file's value, or a CliError naming the file and where it fails to parse. */
export function readJson(path: string): unknown {
  const text = readText(path);
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    throw new CliError(`${path} is not valid JSON: ${(error as Error).message}`, EXIT.refused, "invalid_file");
  }
}

export function readJsonObject(path: string): Record<string, unknown> {
  const value = readJson(path);
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new CliError(`${path} must hold a JSON object`, EXIT.refused, "invalid_file");
  }
  return value as Record<string, unknown>;
}

/** Writes to `path`, or prints when there is none. */
export function writeOrPrint(path: string | undefined, text: string): void {
  if (path) writeFileSync(path, text);
  else process.stdout.write(text.endsWith("\n") ? text : `${text}\n`);
}
