// A declared regex tool's pattern, run on a worker thread. The pattern is the file author's and the page an
// outsider's, and JavaScript's RegExp backtracks: a page written against a pattern (the DuckDuckGo example's
// own took minutes on 64 KiB) would hold the thread, and a match cannot be interrupted, so the tool's timeout
// could never fire. Off the thread, the timeout's signal ends the worker.
import { Worker } from "node:worker_threads";
import type { MatchGroups } from "../../core/live/parse.ts";

/** The worker's whole program: plain CommonJS, so it runs without the SDK's build. It answers one job at a time. */
const PROGRAM = `
const { parentPort } = require("node:worker_threads");
parentPort.on("message", ({ source, flags, text, most }) => {
  try {
    const found = [];
    for (const match of text.matchAll(new RegExp(source, flags))) {
      found.push({ ...match.groups });
      if (found.length >= most) break;
    }
    parentPort.postMessage({ found });
  } catch (error) {
    parentPort.postMessage({ error: String(error && error.message || error) });
  }
});
`;

/**
 * Idle threads kept for the next match: starting a worker costs milliseconds, more than most matches. A thread
 * stopped at a timeout is ended, never returned, so a runaway match cannot hold one that is reused. Idle threads
 * are unref'd, so they never keep the process alive.
 */
const MAX_IDLE_THREADS = 4;
const idle: Worker[] = [];

function takeThread(): Worker {
  const worker = idle.pop() ?? startThread();
  worker.ref();
  return worker;
}

function startThread(): Worker {
  // No inherited flags: the program needs none, and a parent's --input-type=module would make it an ES module.
  const worker = new Worker(PROGRAM, { eval: true, execArgv: [] });
  // A thread that ends while idle (out of memory, say) must not be handed the next match, which would wait out its timeout.
  worker.once("exit", () => {
    const at = idle.indexOf(worker);
    if (at >= 0) idle.splice(at, 1);
  });
  return worker;
}

function giveBack(worker: Worker): void {
  if (idle.length >= MAX_IDLE_THREADS) {
    void worker.terminate();
    return;
  }
  worker.unref();
  idle.push(worker);
}

type Answer = { found: MatchGroups[] } | { error: string };

/** The named groups of the first `most` matches; rejects (and the worker ends) once `signal` aborts. */
export function matchesOffThread(pattern: RegExp, text: string, most: number, signal: AbortSignal): Promise<MatchGroups[]> {
  if (most === 0) return Promise.resolve([]);
  if (signal.aborted) return Promise.reject(stopReason(signal));
  return new Promise((resolve, reject) => {
    const worker = takeThread();
    const settle = () => {
      signal.removeEventListener("abort", stop);
      worker.off("message", answered);
      worker.off("error", failed);
    };
    const stop = () => {
      settle();
      void worker.terminate();
      reject(stopReason(signal));
    };
    const answered = (answer: Answer) => {
      settle();
      giveBack(worker);
      if ("error" in answer) reject(new Error(answer.error));
      else resolve(answer.found);
    };
    const failed = (error: Error) => {
      settle();
      void worker.terminate();
      reject(error);
    };
    signal.addEventListener("abort", stop, { once: true });
    worker.on("message", answered);
    worker.on("error", failed);
    worker.postMessage({ source: pattern.source, flags: pattern.flags, text, most });
  });
}

function stopReason(signal: AbortSignal): Error {
  return signal.reason instanceof Error ? signal.reason : new Error("the pattern was stopped at the tool's timeout");
}

/** The idle threads, for the test that ends them as a crash would. */
export const idleThreadsForTests = (): readonly Worker[] => [...idle];
