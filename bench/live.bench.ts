// `npm run bench` part (issue 27): what a declared live tool costs, each figure against
// a baseline measured in the same run:
//  - a declared HTTP tool call (json-parsed, recorded to [live].record) vs the same request
//    made with bare fetch to the same local server (target ≤ 1.3×);
//  - a replayed call, answered from that recording (target ≤ 0.2 ms p50).
// It runs the bundle users get (cli/dist/hooks.js), built first.
import { spawnSync } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import type * as Hooks from "../cli/src/rules/index.ts";
import { summarise, type Figures } from "./lib.ts";

const root = join(import.meta.dirname, "..");
const CALLS = Number(process.env.BENCH_LIVE_CALLS ?? 2000);
const WARMUP = 200;
const BODY = JSON.stringify({
  items: Array.from({ length: 10 }, (_, n) => ({ id: n, title: `result ${n}`, url: `https://example.com/${n}` })),
});

export interface LiveBench {
  fetch: Figures;
  declared: Figures;
  replayed: Figures;
}

export async function benchLive(): Promise<LiveBench> {
  const built = spawnSync(process.execPath, [join(root, "cli/build.ts")], { encoding: "utf8" });
  if (built.status !== 0) throw new Error(built.stderr);
  const { HookRun } = (await import(pathToFileURL(join(root, "cli/dist/hooks.js")).href)) as typeof Hooks;

  const server = createServer((_, res) => res.writeHead(200, { "content-type": "application/json" }).end(BODY));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/search?q=bench`;
  const dir = mkdtempSync(join(tmpdir(), "rayrun-live-bench-"));
  const tool = `[tools.search]\ninput = { q = "string" }\nurl = "${url.replace("bench", "{q}")}"\nresults = "$.items[*]"\nfields = { title = "title", url = "url" }\n`;
  writeFileSync(join(dir, "record.toml"), `[live]\nrecord = "live.jsonl"\n${tool}`);
  writeFileSync(join(dir, "replay.toml"), `[live]\nreplay = "live.jsonl"\n${tool}`);

  try {
    const live = await HookRun.fromConfig(join(dir, "record.toml"), { cwd: dir });
    const { search } = await live.tools();
    // Interleaved, so drift and GC land on both sides alike.
    const bare: number[] = [];
    const declared: number[] = [];
    for (let i = 0; i < CALLS + WARMUP; i++) {
      let started = performance.now();
      const response = await fetch(url);
      JSON.parse(await response.text());
      const f = performance.now() - started;
      started = performance.now();
      await search!({ q: "bench" });
      const d = performance.now() - started;
      if (i >= WARMUP) {
        bare.push(f);
        declared.push(d);
      }
    }

    // Every recorded call had the same input, so the replay answers that many in order.
    const replay = await HookRun.fromConfig(join(dir, "replay.toml"), { cwd: dir });
    const { search: replayedSearch } = await replay.tools();
    const replayed: number[] = [];
    for (let i = 0; i < CALLS + WARMUP; i++) {
      const started = performance.now();
      await replayedSearch!({ q: "bench" });
      if (i >= WARMUP) replayed.push(performance.now() - started);
    }
    return { fetch: summarise(bare), declared: summarise(declared), replayed: summarise(replayed) };
  } finally {
    server.closeAllConnections();
    server.close();
  }
}

export function printLive(result: LiveBench): void {
  const ms = (value: number) => `${value.toFixed(3).padStart(7)} ms`;
  console.log(`\nDeclared live tools (rayrun/hooks, Node ${process.version}): ${result.fetch.count} calls each, one local server`);
  console.log(`  bare fetch + JSON.parse           p50 ${ms(result.fetch.p50)}  p99 ${ms(result.fetch.p99)}`);
  console.log(
    `  declared HTTP tool, recorded      p50 ${ms(result.declared.p50)}  p99 ${ms(result.declared.p99)}  → ${(result.declared.p50 / result.fetch.p50).toFixed(2)}× (target ≤ 1.3×)`,
  );
  console.log(`  replayed call                     p50 ${ms(result.replayed.p50)}  p99 ${ms(result.replayed.p99)}  (target ≤ 0.2 ms p50)`);
}
