// The gateway's memory under Miniflare (bench/miniflare-host.ts): the Worker isolate's JavaScript heap through
// workerd's inspector (CDP `Runtime.getHeapUsage` after a full collection), every other isolate workerd runs beside
// it (miniflare's D1, R2, queue and cache workers), and the resident memory of the host's process group: its
// workerd, and all of it.
import { readdirSync, readFileSync, writeFileSync } from "node:fs";

export interface IsolateHeap {
  /** Live JavaScript objects (after a full collection, where the reading took one). */
  usedBytes: number;
  /** What V8 holds for the heap (used plus free space it keeps). */
  totalBytes: number;
}

/** The user Worker's isolate, from a heap snapshot: what a deployed isolate's 128 MB would have to hold. */
export interface IsolateFootprint extends IsolateHeap {
  /** Everything the snapshot counts: live objects, ArrayBuffer and wasm memories, compiled wasm code. */
  snapshotBytes: number;
  /** ArrayBuffer contents (the QuickJS and esbuild wasm memories, QuickJS's memory images). */
  arrayBufferBytes: number;
  /** Compiled WebAssembly modules (QuickJS, esbuild). */
  wasmCodeBytes: number;
}

/** Node's WebSocket (undici), as far as this file uses it: the Worker types in scope describe Cloudflare's instead. */
interface NodeSocket {
  onopen: (() => void) | null;
  onerror: ((error: unknown) => void) | null;
  addEventListener(type: "message", listener: (event: { data: unknown }) => void): void;
  send(data: string): void;
  close(): void;
}

interface HeapUsage {
  usedSize: number;
  totalSize: number;
}

const CONNECT_ATTEMPTS = 6;

/**
 * Opens a DevTools socket, trying again when one is not accepted within 10 s (a workerd busy with a load can be slow
 * to take it; under `wrangler dev`, its inspector proxy once left the first connection unanswered and took the next).
 */
async function connect(url: string): Promise<NodeSocket> {
  for (let attempt = 1; ; attempt++) {
    // Inspectors accept only DevTools' origins, localhost among them; Node's WebSocket takes headers (undici).
    const socket = new WebSocket(url, { headers: { origin: "http://localhost" } } as unknown as string[]) as unknown as NodeSocket;
    try {
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`the inspector at ${url} did not accept a connection within 10 s`)), 10_000);
        socket.onopen = () => (clearTimeout(timer), resolve());
        socket.onerror = (error) => (clearTimeout(timer), reject(error));
      });
      return socket;
    } catch (error) {
      socket.close();
      if (attempt === CONNECT_ATTEMPTS) throw error;
    }
  }
}

/** One DevTools protocol connection: `send` answers with the command's result; `onEvent` sees everything else. */
async function inspect<T>(
  url: string,
  work: (send: (method: string, params?: object) => Promise<unknown>) => Promise<T>,
  onEvent: (method: string, params: { chunk?: string }) => void = () => {},
): Promise<T> {
  const socket = await connect(url);
  const waiting = new Map<number, { resolve: (value: unknown) => void; reject: (error: unknown) => void }>();
  let nextId = 1;
  try {
    socket.addEventListener("message", (event) => {
      const message = JSON.parse(String(event.data)) as {
        id?: number;
        method?: string;
        params?: object;
        result?: unknown;
        error?: unknown;
      };
      if (message.id === undefined) return onEvent(message.method ?? "", message.params ?? {});
      const pending = waiting.get(message.id);
      waiting.delete(message.id);
      if (message.error) pending?.reject(new Error(`inspector: ${JSON.stringify(message.error)}`));
      else pending?.resolve(message.result);
    });
    const send = (method: string, params: object = {}) =>
      new Promise<unknown>((resolve, reject) => {
        const id = nextId++;
        const timer = setTimeout(() => reject(new Error(`the inspector did not answer ${method} within 2 minutes`)), 120_000);
        waiting.set(id, {
          resolve: (value) => (clearTimeout(timer), resolve(value)),
          reject: (error) => (clearTimeout(timer), reject(error)),
        });
        socket.send(JSON.stringify({ id, method, params }));
      });
    return await work(send);
  } finally {
    socket.close();
  }
}

const asHeap = (usage: HeapUsage): IsolateHeap => ({ usedBytes: usage.usedSize, totalBytes: usage.totalSize });

/**
 * The user Worker's isolate after a full collection. workerd's inspector answers `Runtime.getHeapUsage` but not
 * `HeapProfiler.collectGarbage`; a heap snapshot collects first, so one is taken (and written to `saveTo`, if
 * given, for DevTools' Memory tab), summed, and the usage read right after it.
 */
export async function isolateFootprint(inspectorPort: number, saveTo?: string): Promise<IsolateFootprint> {
  const listing = await fetch(`http://127.0.0.1:${inspectorPort}/json`, { signal: AbortSignal.timeout(10_000) });
  const targets = (await listing.json()) as Target[];
  const url = targets.find((target) => target.id.startsWith("core:user:"))?.webSocketDebuggerUrl;
  if (!url) throw new Error("the inspector lists no user Worker");
  const chunks: string[] = [];
  return inspect(
    url,
    async (send) => {
      await send("HeapProfiler.takeHeapSnapshot", { reportProgress: false });
      const snapshot = chunks.join("");
      if (saveTo) writeFileSync(saveTo, snapshot);
      return { ...asHeap((await send("Runtime.getHeapUsage")) as HeapUsage), ...sumSnapshot(snapshot) };
    },
    (method, params) => {
      if (method === "HeapProfiler.addHeapSnapshotChunk") chunks.push(params.chunk ?? "");
    },
  );
}

interface HeapSnapshot {
  snapshot: { meta: { node_fields: string[] } };
  nodes: number[];
  strings: string[];
}

/** A V8 heap snapshot's nodes, summed: in all, ArrayBuffer contents, and compiled wasm modules. */
function sumSnapshot(text: string): Pick<IsolateFootprint, "snapshotBytes" | "arrayBufferBytes" | "wasmCodeBytes"> {
  const { snapshot, nodes, strings } = JSON.parse(text) as HeapSnapshot;
  const fields = snapshot.meta.node_fields;
  const [width, nameAt, sizeAt] = [fields.length, fields.indexOf("name"), fields.indexOf("self_size")];
  let [snapshotBytes, arrayBufferBytes, wasmCodeBytes] = [0, 0, 0];
  for (let node = 0; node < nodes.length; node += width) {
    const size = nodes[node + sizeAt]!;
    const name = strings[nodes[node + nameAt]!]!;
    snapshotBytes += size;
    if (name === "system / JSArrayBufferData") arrayBufferBytes += size;
    else if (name.includes("(WasmNativeModule)")) wasmCodeBytes += size;
  }
  return { snapshotBytes, arrayBufferBytes, wasmCodeBytes };
}

interface Target {
  id: string;
  webSocketDebuggerUrl: string;
}

/**
 * The isolates workerd runs beside the user Worker, by worker name: miniflare's own (D1, R2, the queue broker,
 * the cache, the entry router), each after a full collection (a heap snapshot, not kept).
 */
export async function workerdIsolates(inspectorPort: number): Promise<Map<string, IsolateHeap>> {
  const heaps = new Map<string, IsolateHeap>();
  const listing = await fetch(`http://127.0.0.1:${inspectorPort}/json`, { signal: AbortSignal.timeout(10_000) });
  for (const target of (await listing.json()) as Target[]) {
    if (target.id.startsWith("core:user:")) continue;
    try {
      const usage = await inspect(target.webSocketDebuggerUrl, async (send) => {
        await send("HeapProfiler.takeHeapSnapshot", { reportProgress: false });
        return (await send("Runtime.getHeapUsage")) as HeapUsage;
      });
      heaps.set(target.id, asHeap(usage));
    } catch {
      // a worker whose isolate is not started answers nothing
    }
  }
  return heaps;
}

export interface TreeMemory {
  /** Resident memory of the workerd that runs the Worker (and miniflare's D1, R2, queue and cache workers). */
  workerdBytes: number;
  /** Of every process in the group (the host's Node, with wrangler and Miniflare loaded, and workerd). */
  totalBytes: number;
}

interface GroupProcess {
  pid: number;
  command: string;
  rssBytes: number;
}

/** The processes in one process group (each host is started as a group of its own), with their resident memory. */
export function groupProcesses(groupId: number): GroupProcess[] {
  const found: GroupProcess[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      if (Number(fields[2]) !== groupId) continue;
      const rssBytes = Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${entry}/status`, "utf8"))?.[1] ?? 0) * 1024;
      found.push({
        pid: Number(entry),
        command: readFileSync(`/proc/${entry}/comm`, "utf8").trim(),
        rssBytes,
      });
    } catch {
      // the process ended while being read
    }
  }
  return found;
}

/** Resident memory of the processes in one process group: its workerd, and all of it. */
export function processGroupMemory(groupId: number): TreeMemory {
  const memory: TreeMemory = { workerdBytes: 0, totalBytes: 0 };
  for (const process of groupProcesses(groupId)) {
    memory.totalBytes += process.rssBytes;
    if (process.command === "workerd") memory.workerdBytes += process.rssBytes;
  }
  return memory;
}
