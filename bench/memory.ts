// The gateway's memory under `wrangler dev`: the Worker isolate's JavaScript heap through the inspector
// (CDP `Runtime.getHeapUsage` after a full collection), and the resident memory of the
// process tree `wrangler dev` started, workerd on its own and in all.
import { readdirSync, readFileSync, writeFileSync } from "node:fs";

export interface IsolateHeap {
  /** Live JavaScript objects after a full collection. */
  usedBytes: number;
  /** What V8 holds for the heap (used plus free space it keeps). */
  totalBytes: number;
}

/** Node's WebSocket (undici), as far as this file uses it: the Worker types in scope describe Cloudflare's instead. */
interface NodeSocket {
  onopen: (() => void) | null;
  onerror: ((error: unknown) => void) | null;
  addEventListener(type: "message", listener: (event: { data: unknown }) => void): void;
  send(data: string): void;
  close(): void;
}

/**
 * The isolate's heap after a full collection. workerd's inspector answers `Runtime.getHeapUsage` but not
 * `HeapProfiler.collectGarbage`; a heap snapshot collects first, so one is taken (and written to `saveTo`, if
 * given, for DevTools' Memory tab) and the usage read right after it.
 */
export async function isolateHeap(inspectorPort: number, saveTo?: string): Promise<IsolateHeap> {
  const targets = (await (await fetch(`http://127.0.0.1:${inspectorPort}/json`)).json()) as { webSocketDebuggerUrl: string }[];
  const url = targets[0]?.webSocketDebuggerUrl;
  if (!url) throw new Error("the inspector lists no Worker");
  // The inspector proxy accepts only DevTools' origins, localhost among them; Node's WebSocket takes headers (undici).
  const socket = new WebSocket(url, { headers: { origin: "http://localhost" } } as unknown as string[]) as unknown as NodeSocket;
  const chunks: string[] = [];
  try {
    return await new Promise<IsolateHeap>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error("the inspector did not answer within 5 minutes")), 300_000);
      socket.onerror = reject;
      socket.onopen = () =>
        socket.send(JSON.stringify({ id: 1, method: "HeapProfiler.takeHeapSnapshot", params: { reportProgress: false } }));
      socket.addEventListener("message", (event) => {
        const message = JSON.parse(String(event.data)) as {
          id?: number;
          method?: string;
          params?: { chunk?: string };
          result?: { usedSize: number; totalSize: number };
        };
        if (message.method === "HeapProfiler.addHeapSnapshotChunk") {
          if (saveTo) chunks.push(message.params?.chunk ?? "");
        } else if (message.id === 1) {
          if (saveTo) writeFileSync(saveTo, chunks.join(""));
          socket.send(JSON.stringify({ id: 2, method: "Runtime.getHeapUsage", params: {} }));
        } else if (message.id === 2 && message.result) {
          clearTimeout(timer);
          resolve({ usedBytes: message.result.usedSize, totalBytes: message.result.totalSize });
        }
      });
    });
  } finally {
    socket.close();
  }
}

export interface TreeMemory {
  /** Resident memory of the workerd processes. */
  workerdBytes: number;
  /** Of every process in the group (wrangler's Node, esbuild, workerd). */
  totalBytes: number;
}

/** Resident memory of the processes in one process group (`wrangler dev` is started as a group of its own). */
export function processGroupMemory(groupId: number): TreeMemory {
  let workerdBytes = 0;
  let totalBytes = 0;
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      if (Number(fields[2]) !== groupId) continue;
      const rss = Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${entry}/status`, "utf8"))?.[1] ?? 0) * 1024;
      totalBytes += rss;
      if (readFileSync(`/proc/${entry}/comm`, "utf8").trim() === "workerd") workerdBytes += rss;
    } catch {
      // the process ended while being read
    }
  }
  return { workerdBytes, totalBytes };
}
