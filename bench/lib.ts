import { spawn, type ChildProcess } from "node:child_process";

export const quietEnv = {
  ...process.env,
  WRANGLER_SEND_METRICS: "false",
  WRANGLER_HIDE_BANNER: "true",
  CLOUDFLARE_CF_FETCH_ENABLED: "false",
};

export function percentile(sorted: number[], p: number): number {
  if (!sorted.length) return NaN;
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[index]!;
}

export interface Figures {
  p50: number;
  p99: number;
  count: number;
}

export function summarise(samples: number[]): Figures {
  const sorted = [...samples].sort((a, b) => a - b);
  return { p50: percentile(sorted, 50), p99: percentile(sorted, 99), count: sorted.length };
}

export function start(command: string, args: string[], cwd: string, env: NodeJS.ProcessEnv = quietEnv): ChildProcess {
  const child = spawn(command, args, { cwd, env, stdio: ["ignore", "pipe", "pipe"], detached: true });
  let log = "";
  child.stdout?.on("data", (chunk) => (log += chunk));
  child.stderr?.on("data", (chunk) => (log += chunk));
  child.on("exit", (code) => {
    if (code && code !== 0 && !stopping.has(child)) console.error(`${command} ${args.join(" ")} exited ${code}\n${log.slice(-2000)}`);
  });
  return child;
}

const stopping = new Set<ChildProcess>();
export function stop(child: ChildProcess): void {
  stopping.add(child);
  try {
    if (child.pid) process.kill(-child.pid, "SIGTERM");
  } catch {
    // already gone
  }
}

export async function waitFor(url: string, init?: RequestInit, timeoutMs = 120_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    try {
      const res = await fetch(url, init);
      await res.arrayBuffer();
      if (res.status < 500) return;
    } catch {
      // not up yet
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  throw new Error(`${url} did not come up`);
}

/** Times `total` calls of `once`, run by `concurrency` workers; returns per-call milliseconds. */
export async function measure(once: () => Promise<void>, total: number, concurrency: number): Promise<number[]> {
  const samples: number[] = [];
  let next = 0;
  const worker = async () => {
    while (next < total) {
      next++;
      const t0 = performance.now();
      await once();
      samples.push(performance.now() - t0);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return samples;
}

export const fmt = (ms: number) => ms.toFixed(2).padStart(7);
export const ratio = (a: number, b: number) => `${(a / b).toFixed(2)}×`.padStart(7);

/** Every ordering of `items`, e.g. [a,b,c], [a,c,b], [b,a,c], … */
function permutations<T>(items: T[]): T[][] {
  if (items.length <= 1) return [items];
  return items.flatMap((item, index) => permutations([...items.slice(0, index), ...items.slice(index + 1)]).map((rest) => [item, ...rest]));
}

/**
 * Times each of several calls in turn, round after round, so that drift in the
 * machine's load falls on every target alike; returns per-target milliseconds.
 * Rounds cycle through every ordering of the targets: each target is first
 * after the pause as often as any other, and follows each other target as
 * often, so work one call leaves behind (waitUntil: log writes, shadow runs)
 * lands on every target alike rather than always on the same neighbour.
 */
export async function measureInterleaved<K extends string>(
  calls: Record<K, () => Promise<void>>,
  rounds: number,
  /** Untimed pause after each round. */
  settleMs = 0,
): Promise<Record<K, number[]>> {
  const names = Object.keys(calls) as K[];
  const orders = permutations(names);
  const samples = Object.fromEntries(names.map((name) => [name, [] as number[]])) as Record<K, number[]>;
  for (let round = 0; round < rounds; round++) {
    for (const name of orders[round % orders.length]!) {
      const t0 = performance.now();
      await calls[name]();
      samples[name].push(performance.now() - t0);
    }
    if (settleMs) await new Promise((resolve) => setTimeout(resolve, settleMs));
  }
  return samples;
}
