// `npm run bench -- alias` (issue 18): what the alias door costs, each figure
// against a baseline measured in the same run:
//  - the inbound rewrite of a 100 KiB JSON tool result with 50 seeded identities
//    (the post_tool_call alias handler) vs JSON.parse + JSON.stringify of the same
//    document (target ≤ 5×);
//  - the run_end leak scan of a 1 MiB report vs the same baseline on it;
//  - growth: the same rewrite with 50, 500 and 5,000 seeds (target: close to flat,
//    linear in the text and not in the seed count).
// It runs the bundle users get (cli/dist/hooks.js), built first.
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import type * as Hooks from "../cli/src/rules/index.ts";
import { summarise, type Figures } from "./lib.ts";

const root = join(import.meta.dirname, "..");
const ROUNDS = Number(process.env.BENCH_ALIAS_ROUNDS ?? 40);
const KEY = "be".repeat(32);

export interface AliasBench {
  rewrite: { door: Figures; json: Figures; bytes: number };
  scan: { door: Figures; json: Figures; bytes: number };
  growth: { seeds: number; seedMs: number; rewrite: Figures }[];
}

/** Identities of three seeds each: a name, a work email, a phone. */
function identities(count: number): Hooks.SeedEntity[] {
  return Array.from({ length: count }, (_, i) => [
    { type: "person_name", value: `Given${i} Family${i}`, identity: `p${i}` },
    { type: "email", value: `given${i}.family${i}@firm${i % 40}.example`, identity: `p${i}` },
    { type: "phone", value: `+44 20 7946 ${String(i % 10_000).padStart(4, "0")}`, identity: `p${i}` },
  ]).flat() as Hooks.SeedEntity[];
}

/** A search-result page of about `bytes` of JSON that names the first `people` identities in several spellings. */
function page(bytes: number, people = 50): unknown {
  const results: unknown[] = [];
  let size = 0;
  for (let i = 0; size < bytes; i++) {
    const n = i % people;
    const result = {
      rank: i,
      title: i % 3 ? `Given${n} Family${n} - profile` : `FAMILY${n}, GIVEN${n} | directory`,
      url: `https://example.org/in/given${n}-family${n}`,
      snippet: `Contact given${n}.family${n} [at] firm${n % 40} [dot] example or +44 (0)20 7946 ${String(n).padStart(4, "0")}. Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor.`,
      score: 0.5 + (i % 7) / 10,
    };
    size += JSON.stringify(result).length + 1;
    results.push(result);
  }
  return { query: "directory", results };
}

/** A run whose post_tool_call rule is the alias handler, seeded (and how long seeding took). */
async function seededRun(hooks: typeof Hooks, seeds: Hooks.SeedEntity[]) {
  const alias = new hooks.AliasDoor({ key: KEY });
  const run = new hooks.HookRun({ alias });
  run.on("post_tool_call", new hooks.AliasHandler(alias));
  const started = performance.now();
  await run.seed(seeds);
  return { run, seedMs: performance.now() - started };
}

/** p50 of `fn` and of the baseline, interleaved so drift and GC land on both alike. */
async function paired(fn: () => unknown, baseline: () => unknown): Promise<{ door: Figures; json: Figures }> {
  const door: number[] = [];
  const json: number[] = [];
  for (let i = 0; i < ROUNDS + 5; i++) {
    let started = performance.now();
    await fn();
    const d = performance.now() - started;
    started = performance.now();
    baseline();
    const j = performance.now() - started;
    if (i >= 5) {
      door.push(d);
      json.push(j);
    }
  }
  return { door: summarise(door), json: summarise(json) };
}

export async function benchAlias(): Promise<AliasBench> {
  const built = spawnSync(process.execPath, [join(root, "cli/build.ts")], { encoding: "utf8" });
  if (built.status !== 0) throw new Error(built.stderr);
  const hooks = (await import(pathToFileURL(join(root, "cli/dist/hooks.js")).href)) as typeof Hooks;

  const document = page(100 * 1024);
  const text = JSON.stringify(document);
  const { run } = await seededRun(hooks, identities(50));
  const post = () =>
    run.dispatch({ hook_event_name: "post_tool_call", tool_name: "web_search", tool_input: { q: "directory" }, tool_result: document });
  const check = (await post()).event.tool_result;
  if (JSON.stringify(check).includes("Family7 ")) throw new Error("the rewrite left a real name");
  const rewrite = await paired(post, () => JSON.stringify(JSON.parse(text)));

  const report = page(1024 * 1024);
  const reportText = JSON.stringify(report);
  const scan = await paired(
    () => run.alias.check(report, {}),
    () => JSON.stringify(JSON.parse(reportText)),
  );

  // 50, 500 and 5,000 seeds (identities of 3, plus two accounts), all over a page that names the first 16.
  const small = page(100 * 1024, 16);
  const growth: AliasBench["growth"] = [];
  for (const people of [16, 166, 1666]) {
    const seeds = [
      ...identities(people),
      { type: "account", value: "GB29NWBK60161331926819" },
      { type: "account", value: "DE89370400440532013000" },
    ];
    const grown = await seededRun(hooks, seeds);
    const times: number[] = [];
    for (let i = 0; i < ROUNDS + 5; i++) {
      const started = performance.now();
      await grown.run.dispatch({ hook_event_name: "post_tool_call", tool_name: "web_search", tool_input: {}, tool_result: small });
      if (i >= 5) times.push(performance.now() - started);
    }
    growth.push({ seeds: seeds.length, seedMs: grown.seedMs, rewrite: summarise(times) });
  }
  return { rewrite: { ...rewrite, bytes: text.length }, scan: { ...scan, bytes: reportText.length }, growth };
}

export function printAlias(result: AliasBench): void {
  const ms = (value: number) => `${value.toFixed(2).padStart(8)} ms`;
  const kib = (bytes: number) => `${Math.round(bytes / 1024)} KiB`;
  console.log(`\nAlias door (rayrun/hooks, Node ${process.version}), p50 of ${result.rewrite.door.count} rounds`);
  console.log(
    `  inbound rewrite, ${kib(result.rewrite.bytes)} result, 50 identities  ${ms(result.rewrite.door.p50)}  vs JSON.parse+stringify ${ms(result.rewrite.json.p50)}  → ${(result.rewrite.door.p50 / result.rewrite.json.p50).toFixed(2)}× (target ≤ 5×)`,
  );
  console.log(
    `  run_end leak scan, ${kib(result.scan.bytes)} report                 ${ms(result.scan.door.p50)}  vs JSON.parse+stringify ${ms(result.scan.json.p50)}  → ${(result.scan.door.p50 / result.scan.json.p50).toFixed(2)}×`,
  );
  const base = result.growth[0]!.rewrite.p50;
  for (const row of result.growth)
    console.log(
      `  ${String(row.seeds).padStart(5)} seeds: seeding ${ms(row.seedMs)}, rewrite ${ms(row.rewrite.p50)}  → ${(row.rewrite.p50 / base).toFixed(2)}× the 50-seed rewrite (target: close to 1×)`,
    );
}
