// Bundles the CLI into one plain-JavaScript file that runs on Node 20 and 22:
// `node cli/build.ts` → cli/dist/rayrun.js. Run by `npm install`/`npm ci`
// (the root `prepare` script) and by the tests.
import { chmodSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { build } from "esbuild";

const here = import.meta.dirname;
const { version } = JSON.parse(readFileSync(join(here, "package.json"), "utf8")) as { version: string };
export const bundlePath = join(here, "dist/rayrun.js");

await build({
  entryPoints: [join(here, "src/main.ts")],
  outfile: bundlePath,
  bundle: true,
  platform: "node",
  target: "node20",
  format: "esm",
  minify: true,
  legalComments: "none",
  banner: { js: "#!/usr/bin/env node" },
  define: { RAYRUN_CLI_VERSION: JSON.stringify(version) },
  logLevel: "warning",
});
chmodSync(bundlePath, 0o755);
