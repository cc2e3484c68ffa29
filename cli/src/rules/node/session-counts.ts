// The run's counters across `rayrun hooks run` processes: Claude Code starts one per
// event, so each adds what it counted to `counts.json` in the session's folder, and
// the process that ends the run reports the whole session. Numbers only, never a value.
import { randomBytes } from "node:crypto";
import { open, readFile, rename, rm, stat, writeFile } from "node:fs/promises";
import type { HookRun, RunCounts } from "../core/run.ts";

const NAMES = ["calls", "requests", "denied", "rewritten", "leak_through_inbound"] as const satisfies readonly (keyof RunCounts)[];
const ZERO: RunCounts = { calls: 0, requests: 0, denied: 0, rewritten: 0, leak_through_inbound: 0 };
/** A lock older than this was left by a killed process (holding it takes milliseconds). */
const STALE_LOCK_MS = 10_000;
const LOCK_RETRY_MS = 5;

export class SessionCounts {
  /** What this process has already added to the file (the run's counters then). */
  #saved: RunCounts = ZERO;

  constructor(readonly path: string) {}

  /**
   * Adds what the run counted since the last save to the session's totals, and gives
   * the run those totals. Parallel hook processes (parallel tool calls) take turns
   * under a lock file, so no count is lost; the file is replaced whole, never half-written.
   */
  async save(run: HookRun): Promise<RunCounts> {
    return withLock(`${this.path}.lock`, async () => {
      const stored = await readCounts(this.path);
      const now = run.counts();
      const total = { ...ZERO };
      for (const name of NAMES) total[name] = stored[name] + now[name] - this.#saved[name];
      const temporary = `${this.path}.${randomBytes(6).toString("hex")}.tmp`;
      await writeFile(temporary, `${JSON.stringify(total)}\n`, { mode: 0o600 });
      await rename(temporary, this.path);
      const seen = run.counts();
      run.addCounts(Object.fromEntries(NAMES.map((name) => [name, total[name] - seen[name]])));
      this.#saved = total;
      return total;
    });
  }
}

async function readCounts(path: string): Promise<RunCounts> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return { ...ZERO };
    throw error;
  }
  const parsed = JSON.parse(text) as Record<string, unknown>;
  const counts = { ...ZERO };
  for (const name of NAMES) {
    const value = parsed[name];
    // A damaged file would quietly under-count leaks: refuse it instead.
    if (!Number.isSafeInteger(value) || (value as number) < 0) throw new Error(`${path}: ${name} is not a count`);
    counts[name] = value as number;
  }
  return counts;
}

async function withLock<T>(lock: string, work: () => Promise<T>): Promise<T> {
  for (;;) {
    try {
      await (await open(lock, "wx", 0o600)).close();
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
      const since = await stat(lock).then(
        (info) => Date.now() - info.mtimeMs,
        () => 0,
      );
      if (since > STALE_LOCK_MS) await rm(lock, { force: true });
      else await new Promise((resolve) => setTimeout(resolve, LOCK_RETRY_MS));
    }
  }
  try {
    return await work();
  } finally {
    await rm(lock, { force: true });
  }
}
