// Runs one Worker under Miniflare's API, without `wrangler dev`: the bundle wrangler would deploy, the bindings of
// its wrangler config, one workerd, and workerd's own inspector on a port of its own.
//
// Why: `wrangler dev` puts a second workerd in front of the Worker (its proxy, which requests and DevTools pass
// through), and after some 21,000 calls that proxy wedged at 2 GiB and 80 % CPU, buffering inspector messages for
// a DevTools session nobody had opened (docs/benchmarks.md, 2026-12-07). A deployed Worker has no such proxy.
//
//   node bench/miniflare-host.ts '<options as JSON>'     (see HostOptions; prints "ready <origin>" when serving)
//
// The miniflare package is the one this wrangler depends on, so the runtime is the same workerd `wrangler dev` runs.
import { spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";

export interface HostOptions {
  /** The wrangler config, relative to the project root. */
  config: string;
  port: number;
  inspectorPort: number;
  /** Local state (D1, R2, Durable Objects, KV), as `wrangler dev --persist-to`. */
  persist: string;
  /** Worker variables on top of the config's (`--var`). */
  vars: Record<string, string>;
}

const root = join(import.meta.dirname, "..");
const require = createRequire(import.meta.url);
const quiet = { ...process.env, WRANGLER_SEND_METRICS: "false", WRANGLER_HIDE_BANNER: "true" };

async function main(options: HostOptions): Promise<void> {
  const outdir = mkdtempSync(join(tmpdir(), "rayrun-bench-bundle-"));
  // The bundle `wrangler deploy` would upload (the nodejs_compat polyfills, wasm as separate modules), unminified as in dev.
  const built = spawnSync("npx", ["wrangler", "deploy", "--dry-run", "--config", options.config, "--outdir", outdir], {
    cwd: root,
    env: quiet,
    encoding: "utf8",
  });
  if (built.status !== 0) throw new Error(`bundling ${options.config} failed:\n${built.stderr}`);
  // One entry module (named after the config's `main`), and the wasm modules it imports.
  const emitted = readdirSync(outdir);
  const requireFromWrangler = createRequire(require.resolve("wrangler/package.json"));
  const wrangler = (await import("wrangler")) as typeof import("wrangler");
  const { Miniflare, convertV4MiniflareOptions } = (await import(
    pathToFileURL(requireFromWrangler.resolve("miniflare")).href
  )) as typeof import("miniflare");
  const { workerOptions } = wrangler.unstable_getMiniflareWorkerOptions(resolve(root, options.config));
  const miniflare = new Miniflare(
    // The bindings come in the shape wrangler reads its config into (Miniflare 4's), which this Miniflare converts.
    convertV4MiniflareOptions({
      host: "127.0.0.1",
      port: options.port,
      inspectorPort: options.inspectorPort,
      logRequests: false,
      resourcePersistencePath: join(options.persist, "v3"),
      workers: [
        {
          ...(workerOptions as object),
          name: "worker",
          // The entry first, then the wasm modules wrangler emitted beside it (named by content hash, ending in "wasm").
          modulesRoot: outdir,
          modules: [
            ...emitted.filter((name) => name.endsWith(".js")).map((name) => ({ type: "ESModule" as const, path: join(outdir, name) })),
            ...emitted.filter((name) => name.endsWith("wasm")).map((name) => ({ type: "CompiledWasm" as const, path: join(outdir, name) })),
          ],
          bindings: { ...(workerOptions as { bindings?: Record<string, unknown> }).bindings, ...options.vars },
        },
      ],
    } as Parameters<typeof convertV4MiniflareOptions>[0]),
  );
  const origin = await miniflare.ready;
  process.stdout.write(`ready ${origin.origin}\n`);
  const close = () =>
    void miniflare.dispose().finally(() => {
      rmSync(outdir, { recursive: true, force: true });
      process.exit(0);
    });
  process.on("SIGTERM", close);
  process.on("SIGINT", close);
}

await main(JSON.parse(process.argv[2]!) as HostOptions);
