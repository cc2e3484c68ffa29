#!/usr/bin/env node
// The `rayrun` command as npm links it (package.json "bin"). This file is committed, so npm links
// it when it installs the workspace; the bundle it loads, dist/rayrun.js, is built afterwards by the
// root `prepare` (a bin naming dist/rayrun.js itself was skipped: it did not exist yet at link time).
import { existsSync } from "node:fs";
import module from "node:module";

const bundle = new URL("../dist/rayrun.js", import.meta.url);
if (!existsSync(bundle)) {
  process.stderr.write("rayrun: the CLI is not built (no cli/dist/rayrun.js); run `node cli/build.ts` or `npm ci`\n");
  process.exit(1);
}
// Node keeps the bundle's compiled code between runs (Node 22.1 and later): `hooks run` starts once per agent tool
// call, and compiling the bundle was a third of its start-up.
module.enableCompileCache?.();
await import(bundle.href);
