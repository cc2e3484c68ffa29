// A declared regex tool's pattern, run on a worker thread. The pattern is the file author's and the page an
// outsider's, and JavaScript's RegExp backtracks: a page written against a pattern (the DuckDuckGo example's
// own took minutes on 64 KiB) would hold the thread, and a match cannot be interrupted, so the tool's timeout
// could never fire. Off the thread, the timeout's signal ends the worker.
import { Worker } from "node:worker_threads";
import type { MatchGroups } from "../../core/live/parse.ts";

/** The worker's whole program: plain CommonJS, so it runs without the SDK's build. */
const PROGRAM = `
const { parentPort, workerData } = require("node:worker_threads");
const { source, flags, text, most } = workerData;
const found = [];
for (const match of text.matchAll(new RegExp(source, flags))) {
  found.push({ ...match.groups });
  if (found.length >= most) break;
}
parentPort.postMessage(found);
`;

/** The named groups of the first `most` matches; rejects (and the worker ends) once `signal` aborts. */
export function matchesOffThread(pattern: RegExp, text: string, most: number, signal: AbortSignal): Promise<MatchGroups[]> {
  if (most === 0) return Promise.resolve([]);
  return new Promise((resolve, reject) => {
    const worker = new Worker(PROGRAM, { eval: true, workerData: { source: pattern.source, flags: pattern.flags, text, most } });
    const stop = () => {
      void worker.terminate();
      reject(signal.reason instanceof Error ? signal.reason : new Error("the pattern was stopped at the tool's timeout"));
    };
    if (signal.aborted) return stop();
    signal.addEventListener("abort", stop, { once: true });
    const done = () => signal.removeEventListener("abort", stop);
    worker.once("message", (found: MatchGroups[]) => {
      done();
      resolve(found);
      void worker.terminate();
    });
    worker.once("error", (error) => {
      done();
      reject(error);
    });
  });
}
