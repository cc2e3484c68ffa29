// [live].record: the run's call lines appended to one file. The file is opened once and
// each line written with one write(2) before the call returns, instead of an open, write
// and close through the thread pool per line (which cost more than a local request).
// Like every record the SDK writes, a file it creates is 0600 and its folders 0700.
import { closeSync, mkdirSync, openSync, writeSync } from "node:fs";
import { dirname } from "node:path";
import type { RecordSink } from "../../core/handlers.ts";

/** Closes a record file when its sink is collected (a run does not say when it ends). */
const openFiles = new FinalizationRegistry<number>((fd) => closeSync(fd));

export class RecordFile implements RecordSink {
  #fd: number | undefined;
  constructor(readonly path: string) {}

  async append(line: string): Promise<void> {
    if (this.#fd === undefined) {
      mkdirSync(dirname(this.path), { recursive: true, mode: 0o700 });
      this.#fd = openSync(this.path, "a", 0o600);
      openFiles.register(this, this.#fd);
    }
    writeSync(this.#fd, line);
  }
}
