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
import { generateCodeDeclarations } from "../../worker/codemode/codemode.declarations.ts";
import { TEMPLATES, templateSource } from "../../console/src/hooks/templates.ts";
import { checkHookShape } from "../../console/src/hooks/shape.ts";
import { format } from "prettier";

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const tsc = path.join(repo, "node_modules", ".bin", "tsc");

/**
 * Writes the declarations (the tool's hook declarations, or the given ones) and the source to a fresh directory and
 * runs `tsc --noEmit` there. The source is `hook.ts`, or `program.ts` for Code Mode declarations.
 */
function typecheck(tool, source, declarations = generateToolDeclarations(tool)) {
  const dir = mkdtempSync(path.join(tmpdir(), "rayrun-tsc-"));
  const file = tool ? "hook.ts" : "program.ts";
  try {
    writeFileSync(path.join(dir, "rayrun.d.ts"), declarations);
    writeFileSync(path.join(dir, file), source);
    writeFileSync(
      path.join(dir, "tsconfig.json"),
      JSON.stringify({
        compilerOptions: { strict: true, noEmit: true, target: "es2022", module: "es2022", lib: ["es2022"], types: [] },
        files: ["rayrun.d.ts", file],
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

/** Tools as Code Mode discovery lists them: public names, one with a hook's publicContract, one without an outputSchema. */
const CODE_MODE_TOOLS = [
  {
    name: "demo__search_release_notes",
    // The active hook's publicContract replaces the upstream's description and input schema.
    description: "Search release notes by free text",
    inputSchema: {
      type: "object",
      properties: { text: { type: "string", description: "What to look for" } },
      required: ["text"],
      additionalProperties: false,
    },
    outputSchema: {
      type: "object",
      properties: {
        items: {
          type: "array",
          items: {
            type: "object",
            properties: { version: { type: "string" }, title: { type: "string" } },
            required: ["version", "title"],
          },
        },
      },
      required: ["items"],
    },
  },
  {
    name: "demo__lookup_customer",
    description: "Look up a customer record by email address.",
    inputSchema: { type: "object", properties: { email: { type: "string" } }, required: ["email"] },
    outputSchema: {
      type: "object",
      properties: { name: { type: "string" }, plan: { type: "string" } },
      required: ["name", "plan"],
    },
  },
  {
    name: "demo__export_report",
    description: "Export a usage report.\nThe report service is always down */ in the demo.",
    inputSchema: { type: "object", properties: { month: { type: "string" } }, required: ["month"] },
  },
  { name: "odd__get-user.v2", inputSchema: { type: "object", properties: { id: { type: "integer" } } } },
];

/** A run_code program is a function body: checked as the body of an async function next to the declarations. */
function typecheckProgram(program) {
  const declarations = generateCodeDeclarations(CODE_MODE_TOOLS);
  const source = `export async function program(): Promise<unknown> {\n${program}\n}\n`;
  return typecheck(null, source, declarations);
}

test("describe_tools declarations type-check a program, including a tool whose hook has a publicContract", () => {
  const { status, output } = typecheckProgram(`const notes = await tools.demo__search_release_notes({ text: "sso" });
const customer = await tools.demo__lookup_customer({ email: "ada@example.com" });
const report = await tools.demo__export_report({ month: "2026-10" });
const first = report.content[0];
const user = await tools["odd__get-user.v2"]({ id: 7 });
console.log("found", notes.items.length, user.content.length);
try {
  await tools.demo__lookup_customer({ email: "nobody@example.com" });
} catch (error) {
  const refusal = error as ToolError;
  if (refusal.code === "approval_required") return refusal.details?.approvalId;
}
return { plan: customer.plan, versions: notes.items.map((note) => note.version), first: first?.type };`);
  assert.equal(status, 0, output);
});

test("a program that calls a tool with the upstream's argument instead of the public contract's fails where it does so", () => {
  const { status, output } = typecheckProgram('return tools.demo__search_release_notes({ query: "sso" });');
  assert.notEqual(status, 0);
  assert.match(output, /program\.ts\(2,43\): error TS2353: Object literal may only specify known properties, and 'query' does not exist/);
  const wrongResult = typecheckProgram("return (await tools.demo__lookup_customer({ email: 'a' })).plan.toFixed();");
  assert.match(wrongResult.output, /error TS2551: Property 'toFixed' does not exist on type 'string'/);
  const unknown = typecheckProgram("return tools.demo__delete_record({ id: '1' });");
  assert.match(unknown.output, /error TS2339: Property 'demo__delete_record' does not exist/);
});

/** Tools the console's templates are generated for: a list result, no outputSchema, a text result, odd property names. */
const TEMPLATE_TOOLS = [
  SEARCH_TOOL,
  { name: "delete_record", inputSchema: { type: "object", properties: { id: { type: "string" } }, required: ["id"] } },
  {
    name: "lookup_customer",
    inputSchema: { type: "object", properties: { email: { type: "string" } }, required: ["email"] },
    outputSchema: { type: "object", properties: { name: { type: "string" }, plan: { type: "string" } }, required: ["name", "plan"] },
  },
  {
    name: "odd",
    inputSchema: { type: "object", properties: { "user-name": { type: "string" }, count: { type: "integer" } } },
    outputSchema: { type: "object", properties: { "hit-list": { type: "array", items: { type: "string" } } } },
  },
  { name: "no_args", inputSchema: { type: "object" } },
];

test("every console template type-checks, passes the shape check and is stored as generated, for every kind of tool", async () => {
  for (const definition of TEMPLATE_TOOLS) {
    const tool = { uid: "tool_t", publicName: `demo__${definition.name}`, definition, definitionHash: "", status: "active" };
    for (const template of TEMPLATES) {
      const source = templateSource(tool, template.id);
      const what = `${definition.name}, ${template.label}`;
      const { status, output } = typecheck(definition, source);
      assert.equal(status, 0, `${what}:\n${output}\n${source}`);
      assert.deepEqual(checkHookShape(source), [], what);
      // The server formats a draft on save with Prettier's defaults: a template is already in that form.
      assert.equal(await format(source, { parser: "typescript" }), source, what);
    }
  }
});
