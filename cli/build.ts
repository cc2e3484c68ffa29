// Bundles the CLI into plain JavaScript that runs on Node 20 and 22:
// `node cli/build.ts` → cli/dist/rayrun.js, and the chunks it loads on demand
// under cli/dist/cli/ (a command's code, and the Node built-ins it needs, load
// only when that command runs: `hooks run` starts once per agent tool call). Run by `npm install`/`npm ci`
// (the root `prepare` script) and by the tests. The same build makes the
// `rayrun/hooks` SDK: cli/dist/hooks.js, its core alone (cli/dist/hooks-core.js,
// no Node APIs), and their declarations under cli/dist/types/.
import { spawnSync } from "node:child_process";
import { chmodSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { build } from "esbuild";

const here = import.meta.dirname;
const { version } = JSON.parse(readFileSync(join(here, "package.json"), "utf8")) as { version: string };
export const bundlePath = join(here, "dist/rayrun.js");
const chunksDir = join(here, "dist/cli");
export const hooksBundlePath = join(here, "dist/hooks.js");
const typesDir = join(here, "dist/types");

const shared = { bundle: true, format: "esm", legalComments: "none", logLevel: "warning" } as const;

rmSync(chunksDir, { recursive: true, force: true });
await Promise.all([
  build({
    ...shared,
    entryPoints: { rayrun: join(here, "src/main.ts") },
    outdir: join(here, "dist"),
    splitting: true,
    chunkNames: "cli/[name]-[hash]",
    platform: "node",
    target: "node20",
    minify: true,
    banner: { js: "#!/usr/bin/env node" },
    define: { RAYRUN_CLI_VERSION: JSON.stringify(version) },
  }),
  build({ ...shared, entryPoints: [join(here, "src/rules/index.ts")], outfile: hooksBundlePath, platform: "node", target: "node20" }),
  // The core on its own, bundled as for a Worker: it fails here if anything in it reaches for Node.
  build({
    ...shared,
    entryPoints: [join(here, "src/rules/core/index.ts")],
    outfile: join(here, "dist/hooks-core.js"),
    platform: "neutral",
    target: "es2022",
  }),
]);
chmodSync(bundlePath, 0o755);

// Declarations for the SDK, from the CLI workspace's TypeScript 5 (the root's 7 has no declaration API yet).
rmSync(typesDir, { recursive: true, force: true });
const tsc = spawnSync(
  join(here, "node_modules/.bin/tsc"),
  [
    ...["src/rules/index.ts", "--declaration", "--emitDeclarationOnly", "--outDir", typesDir, "--rootDir", "src/rules"],
    ...["--target", "es2022", "--module", "es2022", "--moduleResolution", "bundler", "--strict", "--skipLibCheck"],
    ...["--allowImportingTsExtensions", "--types", "node", "--lib", "es2023,dom,dom.iterable"],
  ],
  { cwd: here, encoding: "utf8" },
);
if (tsc.status !== 0) throw new Error(`declarations for rayrun/hooks failed:\n${tsc.stdout}${tsc.stderr}`);
// Relative imports in the emitted declarations name .ts sources; a consumer resolves them as .js.
for (const entry of readdirSync(typesDir, { recursive: true, encoding: "utf8" })) {
  if (!entry.endsWith(".d.ts")) continue;
  const path = join(typesDir, entry);
  writeFileSync(path, readFileSync(path, "utf8").replace(/(from\s+"\.{1,2}\/[^"]+)\.ts"/g, '$1.js"'));
}
