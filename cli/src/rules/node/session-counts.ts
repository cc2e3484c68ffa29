// The run's counters across `rayrun hooks run` processes: Claude Code starts one per
// event, so each adds what it counted to `counts.json` in the session's folder, and
// the process that ends the run reports the whole session. Numbers only, never a value.
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import type { HookRun, RunCounts } from "../core/run.ts";
import { replaceFile, withSessionLock } from "./run-files.ts";

const NAMES = ["calls", "requests", "denied", "rewritten", "leak_through_inbound"] as const satisfies readonly (keyof RunCounts)[];
const ZERO: RunCounts = { calls: 0, requests: 0, denied: 0, rewritten: 0, leak_through_inbound: 0 };

export class SessionCounts {
  readonly path: string;
  /** What this process has already added to the file (the run's counters then). */
  #saved: RunCounts = ZERO;

  /** `dir`: the session's folder, whose lock guards the file. */
  constructor(readonly dir: string) {
    this.path = join(dir, "counts.json");
  }

  /**
   * Adds what the run counted since the last save to the session's totals, and gives
   * the run those totals. Parallel hook processes (parallel tool calls) take turns
   * under the session's lock, so no count is lost; the file is replaced whole, never half-written.
   */
  save(run: HookRun): Promise<RunCounts> {
    return withSessionLock(this.dir, () => this.saveHoldingLock(run));
  }

  /** `save` for a caller that already holds the session's lock (it is not reentrant). */
  async saveHoldingLock(run: HookRun): Promise<RunCounts> {
    const stored = await readCounts(this.path);
    const now = run.counts();
    const total = { ...ZERO };
    for (const name of NAMES) total[name] = stored[name] + now[name] - this.#saved[name];
    await replaceFile(this.path, `${JSON.stringify(total)}\n`);
    const seen = run.counts();
    run.addCounts(Object.fromEntries(NAMES.map((name) => [name, total[name] - seen[name]])));
    this.#saved = total;
    return total;
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
