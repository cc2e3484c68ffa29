// Record lines appended to a file, its folder created on first write. Node-only.
import { appendFile, mkdir } from "node:fs/promises";
import { dirname } from "node:path";
import type { RecordSink } from "../core/handlers.ts";

export class FileSink implements RecordSink {
  #ready: Promise<unknown> | undefined;
  // Appends chain, so lines from concurrent calls never interleave.
  #tail: Promise<void> = Promise.resolve();
  constructor(readonly path: string) {}
  append(line: string): Promise<void> {
    this.#ready ??= mkdir(dirname(this.path), { recursive: true });
    const next = this.#tail.then(async () => {
      await this.#ready;
      await appendFile(this.path, line);
    });
    this.#tail = next.catch(() => {});
    return next;
  }
}
