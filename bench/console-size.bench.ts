// `npm run bench` part: the console's initial JavaScript, gzipped, against the
// 60 KiB budget. Initial means what index.html loads before any screen asks for
// more: its module script and the chunks Vite marks for modulepreload. Lazy
// chunks (the Hooks tab with Monaco, the uPlot chart) are reported apart, and
// the Hooks tab must be one of them.
import { spawnSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { gzipSync } from "node:zlib";

const root = join(import.meta.dirname, "..");
const dist = join(root, "console/dist");
export const INITIAL_JS_BUDGET_BYTES = 60 * 1024;

export interface ConsoleSize {
  initial: { file: string; gzipBytes: number }[];
  initialGzipBytes: number;
  lazyGzipBytes: number;
  /** The Hooks tab's chunk, and Monaco's, are not among the initial files. */
  hooksTabLazy: boolean;
}

export function benchConsoleSize(): ConsoleSize {
  const built = spawnSync("npx", ["vite", "build", "console", "--logLevel", "warn"], { cwd: root, encoding: "utf8" });
  if (built.status !== 0) throw new Error(`console build failed:\n${built.stdout}${built.stderr}`);
  const html = readFileSync(join(dist, "index.html"), "utf8");
  const referenced = [...html.matchAll(/<(?:script[^>]*\bsrc|link[^>]*rel="modulepreload"[^>]*\bhref)="\/?([^"]+\.js)"/g)].map(
    (m) => m[1]!,
  );
  const gz = (file: string) => gzipSync(readFileSync(join(dist, file)), { level: 9 }).length;
  const initial = [...new Set(referenced)].map((file) => ({ file, gzipBytes: gz(file) }));
  const everyChunk = readdirSync(join(dist, "assets"))
    .filter((f) => f.endsWith(".js"))
    .map((f) => `assets/${f}`);
  const lazy = everyChunk.filter((file) => !initial.some((i) => i.file === file));
  const hooksChunks = lazy.filter((file) => /\/(HooksTab|monaco)-/.test(file));
  return {
    initial,
    initialGzipBytes: initial.reduce((sum, i) => sum + i.gzipBytes, 0),
    lazyGzipBytes: lazy.reduce((sum, file) => sum + gz(file), 0),
    hooksTabLazy: hooksChunks.length === 2 && !initial.some((i) => /\/(HooksTab|monaco)-/.test(i.file)),
  };
}

export function printConsoleSize(size: ConsoleSize): void {
  const kib = (n: number) => `${(n / 1024).toFixed(1)} KiB`;
  console.log("\nConsole bundle (vite build, gzip -9)");
  for (const { file, gzipBytes } of size.initial) console.log(`  ${file.padEnd(36)} ${kib(gzipBytes)}`);
  console.log(
    `  initial JavaScript           ${kib(size.initialGzipBytes)}  (target ≤ ${kib(INITIAL_JS_BUDGET_BYTES)}: ${size.initialGzipBytes <= INITIAL_JS_BUDGET_BYTES ? "within" : "OVER"})`,
  );
  console.log(`  lazy chunks                  ${kib(size.lazyGzipBytes)} (Hooks tab, chart), loaded only when opened`);
  console.log(`  Hooks tab and Monaco lazy    ${size.hooksTabLazy ? "yes" : "NO: they are in the initial JavaScript"}`);
}
