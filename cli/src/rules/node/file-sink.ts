// Record lines appended to a file, its folder created on first write. Node-only.
// Records hold tool inputs and results, so what this creates is the owner's alone
// (file 0600, folders 0700); an existing file or folder keeps the mode it has.
import { appendFile, mkdir } from "node:fs/promises";
import { dirname } from "node:path";
import type { RecordSink } from "../core/handlers.ts";

export class FileSink implements RecordSink {
  #ready: Promise<unknown> | undefined;
  // Appends chain, so lines from concurrent calls never interleave.
  #tail: Promise<void> = Promise.resolve();
  constructor(readonly path: string) {}
  append(line: string): Promise<void> {
    this.#ready ??= mkdir(dirname(this.path), { recursive: true, mode: 0o700 });
    const next = this.#tail.then(async () => {
      await this.#ready;
      await appendFile(this.path, line, { mode: 0o600 });
    });
    this.#tail = next.catch(() => {});
    return next;
  }
}
