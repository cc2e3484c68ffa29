#!/usr/bin/env node
// The `rayrun` command as npm links it (package.json "bin"). This file is committed, so npm links
// it when it installs the workspace; the bundle it loads, dist/rayrun.js, is built afterwards by the
// root `prepare` (a bin naming dist/rayrun.js itself was skipped: it did not exist yet at link time).
import { existsSync } from "node:fs";
import module from "node:module";
import { homedir } from "node:os";
import { isAbsolute, join } from "node:path";

const bundle = new URL("../dist/rayrun.js", import.meta.url);
if (!existsSync(bundle)) {
  process.stderr.write("rayrun: the CLI is not built (no cli/dist/rayrun.js); run `node cli/build.ts` or `npm ci`\n");
  process.exit(1);
}
// Node keeps the bundle's compiled code between runs (Node 22.1 and later): `hooks run` starts once per agent tool
// call, and compiling the bundle was a third of its start-up. In the user's own cache folder, never Node's default
// in the shared temp folder: whoever creates that first owns it, and compiled code read from it runs as this user.
const cacheHome =
  process.env.XDG_CACHE_HOME && isAbsolute(process.env.XDG_CACHE_HOME) ? process.env.XDG_CACHE_HOME : join(homedir(), ".cache");
module.enableCompileCache?.(join(cacheHome, "rayrun", "node-compile-cache"));
await import(bundle.href);
