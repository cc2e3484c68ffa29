// Type-checks hooks against generated declarations with the real `tsc`, the
// way an author does locally. Runs in Node (workerd has no child processes):
//   npx node test/tsc/typecheck.mjs
// Node 22 strips the types of the imported .ts modules; they are pure.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { RELEASE_NOTES_HOOK, SEARCH_TOOL } from "../../worker/hooks/compiler/compiler.fixtures.ts";
import { generateToolDeclarations } from "../../worker/hooks/compiler/compiler.types.ts";

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const tsc = path.join(repo, "node_modules", ".bin", "tsc");

/** Writes the tool's declarations and the hook to a fresh directory and runs `tsc --noEmit` there. */
function typecheck(tool, hookSource) {
  const dir = mkdtempSync(path.join(tmpdir(), "rayrun-tsc-"));
  try {
    writeFileSync(path.join(dir, "rayrun.d.ts"), generateToolDeclarations(tool));
    writeFileSync(path.join(dir, "hook.ts"), hookSource);
    writeFileSync(
      path.join(dir, "tsconfig.json"),
      JSON.stringify({
        compilerOptions: { strict: true, noEmit: true, target: "es2022", module: "es2022", lib: ["es2022"], types: [] },
        files: ["rayrun.d.ts", "hook.ts"],
      }),
    );
    const run = spawnSync(tsc, ["--noEmit", "-p", "."], { cwd: dir, encoding: "utf8" });
    if (run.error) throw run.error;
    return { status: run.status, output: `${run.stdout}${run.stderr}` };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

test("the seed's release-notes hook type-checks against its tool's declarations", () => {
  const { status, output } = typecheck(SEARCH_TOOL, RELEASE_NOTES_HOOK);
  assert.equal(status, 0, output);
});

test("a hook that sends a wrong upstream argument type fails where it does so", () => {
  const wrong = RELEASE_NOTES_HOOK.replace("arguments: { q: prefix + args.query }", "arguments: { q: 42 }");
  assert.notEqual(wrong, RELEASE_NOTES_HOOK);
  const { status, output } = typecheck(SEARCH_TOOL, wrong);
  assert.notEqual(status, 0);
  // Line 14 is the `before` method returning the wrong argument.
  assert.match(output, /hook\.ts\(14,3\): error TS2322:/);
  assert.match(output, /The types of 'arguments\.q' are incompatible between these types\./);
  assert.match(output, /Type 'number' is not assignable to type 'string'\./);
});

test("a hook with the wrong apiVersion or an incomplete rejection fails", () => {
  const version = RELEASE_NOTES_HOOK.replace('"rayrun.hooks/v1"', '"rayrun.hooks/v2"');
  assert.match(
    typecheck(SEARCH_TOOL, version).output,
    /error TS2322: Type '"rayrun\.hooks\/v2"' is not assignable to type '"rayrun\.hooks\/v1"'/,
  );
  const reject = RELEASE_NOTES_HOOK.replace('action: "continue",', 'action: "reject", reason: "nope",');
  assert.match(typecheck(SEARCH_TOOL, reject).output, /hook\.ts\(\d+,\d+\): error TS\d+/);
});

test("without an outputSchema, after receives the MCP CallToolResult", () => {
  const tool = { name: "echo", inputSchema: { type: "object", properties: { text: { type: "string" } }, required: ["text"] } };
  const hook = `export default defineToolAdapter({
  apiVersion: "rayrun.hooks/v1",
  after({ result }) {
    const first = result.content[0];
    const text = first?.type === "text" ? first.text : "";
    return { action: "return", result: { ...result, content: [{ type: "text", text: text.toUpperCase() }] } };
  },
});
`;
  const { status, output } = typecheck(tool, hook);
  assert.equal(status, 0, output);
  const wrong = hook.replace("result.content[0]", "result.items[0]");
  assert.match(typecheck(tool, wrong).output, /error TS2339: Property 'items' does not exist/);
});

test("after sees the client's arguments typed by the public contract and upstreamArguments typed by the upstream schema", () => {
  const hook = RELEASE_NOTES_HOOK.replace(
    "after({ result }) {",
    "after({ result, arguments: args, upstreamArguments }) {\n    const sent: string = upstreamArguments.q;\n    const asked: string = args.query;",
  );
  assert.notEqual(hook, RELEASE_NOTES_HOOK);
  const { status, output } = typecheck(SEARCH_TOOL, hook);
  assert.equal(status, 0, output);
  const wrong = hook.replace("upstreamArguments.q;", "upstreamArguments.query;");
  // The upstream schema has no `query` (other keys are open, so unknown): not a string.
  assert.match(typecheck(SEARCH_TOOL, wrong).output, /error TS2322: Type 'unknown' is not assignable to type 'string'/);
});

test("a require_approval may carry a message for the approver, and only a string one", () => {
  const ask = RELEASE_NOTES_HOOK.replace(
    'action: "continue",',
    'action: "require_approval", reason: "needs_review", message: "Check the query",',
  );
  assert.equal(typecheck(SEARCH_TOOL, ask).status, 0, typecheck(SEARCH_TOOL, ask).output);
  const wrong = ask.replace('message: "Check the query"', "message: 7");
  assert.match(typecheck(SEARCH_TOOL, wrong).output, /error TS2322/);
});
