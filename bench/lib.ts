import { spawn, type ChildProcess } from "node:child_process";
import { cpSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort, migratedState } from "../test/node/gateway.ts";
import type { HostOptions } from "./miniflare-host.ts";

export const quietEnv = {
  ...process.env,
  WRANGLER_SEND_METRICS: "false",
  WRANGLER_HIDE_BANNER: "true",
  CLOUDFLARE_CF_FETCH_ENABLED: "false",
};

function percentile(sorted: number[], p: number): number {
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

/** The bare forwarding Worker (bench/forwarder.ts) under `wrangler dev`, as the gateway runs: the floor for one Worker hop. */
export interface RunningForwarder {
  origin: string;
  /** The `wrangler dev` process, whose group holds workerd (the benchmarks read its memory). */
  pid: number | undefined;
  stop(): void;
}

/**
 * Starts the forwarder in front of `upstreamOrigin`, in a state folder of its own, on the given ports (free ones when
 * omitted), and waits until it answers.
 */
export async function startForwarder(upstreamOrigin: string, ports: { port?: number; inspector?: number } = {}): Promise<RunningForwarder> {
  const port = ports.port ?? (await freePort());
  const inspector = ports.inspector ?? (await freePort());
  const persist = mkdtempSync(join(tmpdir(), "rayrun-bench-forwarder-"));
  const child = start(
    "npx",
    [
      "wrangler",
      "dev",
      "--config",
      "bench/forwarder.wrangler.toml",
      "--local",
      "--ip",
      "127.0.0.1",
      "--port",
      String(port),
      "--inspector-port",
      String(inspector),
      "--var",
      `UPSTREAM_ORIGIN:${upstreamOrigin}`,
      "--show-interactive-dev-session=false",
      "--persist-to",
      persist,
    ],
    join(import.meta.dirname, ".."),
  );
  const forwarder = {
    origin: `http://127.0.0.1:${port}`,
    pid: child.pid,
    stop() {
      stop(child);
      rmSync(persist, { recursive: true, force: true });
    },
  };
  try {
    await waitFor(`${forwarder.origin}/__calls`);
  } catch (error) {
    forwarder.stop();
    throw error;
  }
  return forwarder;
}

/** A Worker under Miniflare's API (bench/miniflare-host.ts): no `wrangler dev` proxy in front of it. */
export interface HostedWorker {
  origin: string;
  /** The host's process, leader of a group that holds it and its one workerd (the benchmarks read their memory). */
  pid: number | undefined;
  stop(): void;
}

/**
 * Starts one Worker under Miniflare with the bindings of its wrangler config, in a fresh state folder (with the
 * gateway's D1 migrations applied when `migrate`), on the given ports, and waits until the host says it is serving.
 */
export async function startUnderMiniflare(options: {
  config: string;
  port: number;
  inspectorPort: number;
  vars: Record<string, string>;
  migrate?: boolean;
}): Promise<HostedWorker> {
  const root = join(import.meta.dirname, "..");
  const persist = mkdtempSync(join(tmpdir(), "rayrun-bench-miniflare-"));
  // The gateway's D1 migrations: the migrated state the tests' gateways copy (test/node/gateway.ts).
  if (options.migrate) cpSync(migratedState(), persist, { recursive: true });
  const host: HostOptions = {
    config: options.config,
    port: options.port,
    inspectorPort: options.inspectorPort,
    persist,
    vars: options.vars,
  };
  const child = spawn(process.execPath, [join(root, "bench/miniflare-host.ts"), JSON.stringify(host)], {
    cwd: root,
    env: quietEnv,
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  const hosted = {
    origin: `http://127.0.0.1:${options.port}`,
    pid: child.pid,
    stop() {
      stop(child);
      rmSync(persist, { recursive: true, force: true });
    },
  };
  let log = "";
  try {
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`${options.config} did not start within 2 minutes:\n${log.slice(-2000)}`)), 120_000);
      child.stdout!.on("data", (chunk) => {
        log = (log + chunk).slice(-10_000);
        if (log.includes("ready ")) (clearTimeout(timer), resolve());
      });
      child.stderr!.on("data", (chunk) => (log = (log + chunk).slice(-10_000)));
      child.on("exit", (code) => (clearTimeout(timer), reject(new Error(`${options.config} exited ${code}:\n${log.slice(-2000)}`))));
    });
  } catch (error) {
    hosted.stop();
    throw error;
  }
  return hosted;
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

/**
 * A balanced Latin square (Williams design) over `n` targets: n orders (2n when
 * n is odd) in which every target takes every position equally often and
 * directly follows every other target equally often.
 */
export function balancedOrders(n: number): number[][] {
  const first = Array.from({ length: n }, (_, j) => (j % 2 === 1 ? (j + 1) / 2 : (n - j / 2) % n));
  const orders = Array.from({ length: n }, (_, shift) => first.map((target) => (target + shift) % n));
  return n % 2 === 1 ? [...orders, ...orders.map((order) => [...order].reverse())] : orders;
}

/**
 * Times each of several calls in turn, round after round, so that drift in the
 * machine's load falls on every target alike; returns per-target milliseconds.
 * Rounds go through the orders of `balancedOrders`, and `rounds` is raised to a
 * whole number of them: every target is first as often as any other and
 * follows each other target as often, so whatever one call leaves behind lands
 * on every target alike rather than always on the same neighbour.
 */
export async function measureInterleaved<K extends string>(
  calls: Record<K, () => Promise<void>>,
  rounds: number,
  /**
   * Untimed pause after each call, so that the work a call leaves behind
   * (waitUntil: log writes, shadow runs) is done before the next call is timed.
   */
  pauseMs = 0,
): Promise<Record<K, number[]>> {
  const names = Object.keys(calls) as K[];
  const orders = balancedOrders(names.length);
  const samples = Object.fromEntries(names.map((name) => [name, [] as number[]])) as Record<K, number[]>;
  const wholeRounds = Math.ceil(rounds / orders.length) * orders.length;
  for (let round = 0; round < wholeRounds; round++) {
    for (const index of orders[round % orders.length]!) {
      const name = names[index]!;
      const t0 = performance.now();
      await calls[name]();
      samples[name].push(performance.now() - t0);
      if (pauseMs) await new Promise((resolve) => setTimeout(resolve, pauseMs));
    }
  }
  return samples;
}
