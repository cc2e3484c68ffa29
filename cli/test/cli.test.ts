// The bundled CLI as users run it: a subprocess on the machine's Node 20 and on
// Node 22, against a real gateway (wrangler dev, local D1/R2/DOs) and the demo upstream.
import { spawn, spawnSync } from "node:child_process";
import { accessSync, constants, cpSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterAll, beforeAll, describe, it } from "vitest";
import { documentPath, documentText, typesPath, typesText } from "../scripts/api-types.ts";
import { request, seedWorkspace, startGateway, type RunningGateway, type SeededWorkspace } from "../../test/node/gateway.ts";

const root = join(import.meta.dirname, "../..");
const bundle = join(root, "cli/dist/rayrun.js");
const examples = join(root, "hooks");

/** The machine's own `node` (Node 20 here), not the Node 22 that npm scripts put first on PATH. */
function systemNode(): string {
  for (const dir of (process.env.PATH ?? "").split(delimiter)) {
    if (dir.includes("node_modules")) continue;
    try {
      accessSync(join(dir, "node"), constants.X_OK);
      return join(dir, "node");
    } catch {
      // not here
    }
  }
  return process.execPath;
}
const nodes = { system: systemNode(), npm: process.execPath };

let gateway: RunningGateway;
let seeded: SeededWorkspace;
let keys: { writer: string; reader: string; caller: string };

beforeAll(async () => {
  const built = spawnSync(process.execPath, [join(root, "cli/build.ts")], { encoding: "utf8" });
  if (built.status !== 0) throw new Error(built.stderr);
  gateway = await startGateway();
  seeded = await seedWorkspace(gateway);
  const key = async (scopes: string[]) =>
    (
      await request(gateway.origin, "POST", `/v1/workspaces/${seeded.ws}/keys`, seeded.adminKey, {
        name: scopes.join(" "),
        scopes,
        profileId: seeded.defaultProfileId,
      })
    ).secret as string;
  keys = { writer: await key(["hooks:read", "hooks:write"]), reader: await key(["hooks:read"]), caller: await key(["tools:call"]) };
});
afterAll(async () => gateway?.stop());

interface Run {
  status: number | null;
  stdout: string;
  stderr: string;
  json: () => any;
}

function rayrun(args: string[], options: { key?: string; node?: string; cwd?: string; env?: Record<string, string> } = {}): Run {
  const result = spawnSync(options.node ?? nodes.system, [bundle, ...args], {
    cwd: options.cwd ?? mkdtempSync(join(tmpdir(), "rayrun-cli-")),
    encoding: "utf8",
    // The CLI's own settings are always the test's, never inherited.
    env: {
      ...process.env,
      RAYRUN_WORKSPACE: undefined,
      RAYRUN_API_URL: gateway.origin,
      RAYRUN_API_KEY: options.key ?? seeded.adminKey,
      ...options.env,
    },
  });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr, json: () => JSON.parse(result.stdout) };
}

describe("the typed API client", () => {
  it("is generated from the OpenAPI document the running Worker serves (npm run api:generate)", async ({ expect }) => {
    const served = (await (await fetch(`${gateway.origin}/v1/openapi.json`)).json()) as object;
    const committed = readFileSync(documentPath, "utf8");
    expect(await documentText(served), "the Worker's routes changed: run `npm run api:generate`").toBe(committed);
    expect(await typesText(JSON.parse(committed)), "cli/src/api/schema.d.ts is stale: run `npm run api:generate`").toBe(
      readFileSync(typesPath, "utf8"),
    );
  });
});

describe("the command itself", () => {
  it("prints its version and help on Node 20 and Node 22", ({ expect }) => {
    for (const node of Object.values(nodes)) {
      const version = rayrun(["--version"], { node });
      expect(version.status).toBe(0);
      expect(version.stdout.trim()).toBe(JSON.parse(readFileSync(join(root, "cli/package.json"), "utf8")).version);
    }
    const help = rayrun(["--help"]);
    for (const noun of ["services", "tools", "hooks", "approvals", "codemode"]) expect(help.stdout).toContain(noun);
    const hooksHelp = rayrun(["hooks", "--help"]);
    for (const verb of [
      "types",
      "pull",
      "push",
      "compile",
      "test",
      "revision",
      "deploy",
      "undeploy",
      "rollback",
      "history",
      "diff",
      "restore",
      "export",
      "reset",
      "logs",
      "apply",
    ]) {
      expect(hooksHelp.stdout).toMatch(new RegExp(`\\n  ${verb} `));
    }
    expect(rayrun(["hooks", "logs", "--help"]).stdout).toContain("--request-id <id>");
  });

  it("exits 2 on an unknown flag or a missing argument", ({ expect }) => {
    const unknown = rayrun(["tools", "list", "--frobnicate"]);
    expect(unknown.status).toBe(2);
    expect(unknown.stderr).toContain("unknown option '--frobnicate'");
    expect(rayrun(["hooks", "push", "demo__search_release_notes"]).status).toBe(2);
  });
});

describe("bad credentials and unreachable APIs", () => {
  it("exits 1 naming unauthorized for a bad key, and never prints the key", ({ expect }) => {
    const secret = "rr_this-key-does-not-exist-anywhere-at-all-000";
    const run = rayrun(["tools", "list"], { key: secret });
    expect(run.status).toBe(1);
    expect(run.stderr).toContain("(unauthorized, HTTP 401)");
    expect(run.stdout + run.stderr).not.toContain(secret);
  });

  it("exits 1 with forbidden and the missing scope when a hooks:read key pushes", ({ expect }) => {
    const dir = mkdtempSync(join(tmpdir(), "rayrun-push-"));
    writeFileSync(join(dir, "hook.ts"), readFileSync(join(examples, "demo__search_release_notes.hook.ts")));
    const run = rayrun(["hooks", "push", "demo__search_release_notes", "hook.ts", "--force"], { key: keys.reader, cwd: dir });
    expect(run.status).toBe(1);
    expect(run.stderr).toContain("(forbidden, HTTP 403); missing scope: hooks:write");
  });

  it("exits 1 for an unknown tool", ({ expect }) => {
    const run = rayrun(["hooks", "pull", "demo__no_such_tool"]);
    expect(run.status).toBe(1);
    expect(run.stderr).toContain("No tool 'demo__no_such_tool'");
  });

  it("exits 5 naming the URL when the API is unreachable", ({ expect }) => {
    const run = rayrun(["tools", "list"], { env: { RAYRUN_API_URL: "http://127.0.0.1:9" } });
    expect(run.status).toBe(5);
    expect(run.stderr).toContain("Could not reach the Rayrun API at http://127.0.0.1:9");
  });
});

describe("hooks apply from the example folder", () => {
  it("deploys to shadow, changes nothing the second time, promotes, and the hook runs on a live call", async ({ expect }) => {
    const first = rayrun(["hooks", "apply", examples, "--json"], { key: keys.writer });
    expect(first.stderr).toBe("");
    expect(first.status).toBe(0);
    expect(first.json().hooks.map((h: { tool: string; status: string }) => [h.tool, h.status])).toEqual([
      ["demo__lookup_customer", "deployed"],
      ["demo__search_release_notes", "deployed"],
    ]);

    const again = rayrun(["hooks", "apply", examples]);
    expect(again.status).toBe(0);
    // Off a TTY (CI), no progress line: stderr stays empty, the report is on stdout.
    expect(again.stderr).toBe("");
    expect(again.stdout).toContain("= demo__lookup_customer: unchanged, nothing to do");
    expect(again.stdout).toContain("= demo__search_release_notes: unchanged, nothing to do");

    const dry = rayrun(["hooks", "apply", examples, "--promote", "--dry-run", "--json"]);
    expect(dry.json().hooks.map((h: { status: string }) => h.status)).toEqual(["would_promote", "would_promote"]);
    const promoted = rayrun(["hooks", "apply", examples, "--promote", "--json"]);
    expect(promoted.json().hooks.map((h: { status: string }) => h.status)).toEqual(["promoted", "promoted"]);

    const since = new Date().toISOString();
    // spawnSync blocked the event loop for seconds, long enough for the gateway to close idle keep-alive sockets
    // unnoticed; one turn of the loop lets fetch see those closes before the client picks a pooled socket.
    await new Promise((resolve) => setImmediate(resolve));
    const client = new Client({ name: "cli-test", version: "1.0.0" });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${gateway.origin}/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${keys.caller}` } },
      }),
    );
    const result = await client.callTool({ name: "demo__search_release_notes", arguments: { query: "  SSO  " } });
    await client.close();
    // The hook's after keeps `limit` (1, from the config file) notes.
    expect((result.structuredContent as { items: unknown[] }).items).toHaveLength(1);

    const lines = await waitForLogs(since, 2);
    const rows = lines.map((line) => JSON.parse(line));
    const before = rows.find((row) => row.stage === "before");
    expect(before).toMatchObject({ channel: "active", outcome: "continue", requestId: expect.stringMatching(/^req_/) });
    expect(rows.find((row) => row.stage === "after")).toMatchObject({ outcome: "return", requestId: before.requestId });
    const one = rayrun(["hooks", "logs", "demo__search_release_notes", "--json", "--request-id", before.requestId]);
    expect(
      one.stdout
        .trim()
        .split("\n")
        .every((line) => JSON.parse(line).requestId === before.requestId),
    ).toBe(true);

    const history = rayrun(["hooks", "history", "demo__search_release_notes", "--json"]).json();
    expect(history.versions[0]).toMatchObject({
      channel: "cli",
      note: expect.stringMatching(/^rayrun hooks apply \(local sha256 [0-9a-f]{64}\)$/),
    });
    expect(history.deployments.events.map((event: { channel: string }) => event.channel)).toContain("cli");
  });

  async function waitForLogs(since: string, count: number): Promise<string[]> {
    for (let attempt = 0; attempt < 40; attempt++) {
      const run = rayrun(["hooks", "logs", "demo__search_release_notes", "--json", "--since", since]);
      const lines = run.stdout.trim().split("\n").filter(Boolean);
      if (lines.length >= count) return lines;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    throw new Error("the call's log rows did not arrive");
  }

  it("shows a status line on a terminal, hook by hook", async ({ expect }) => {
    // A pseudo-terminal from util-linux `script`; spawned, not spawnSync, so this process's sockets keep their timers.
    const child = spawn("script", ["-qec", `"${nodes.system}" "${bundle}" hooks apply "${examples}" --dry-run`, "/dev/null"], {
      env: { ...process.env, RAYRUN_WORKSPACE: undefined, RAYRUN_API_URL: gateway.origin, RAYRUN_API_KEY: seeded.adminKey },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    child.stdout.on("data", (chunk) => (output += chunk));
    const status = await new Promise<number | null>((resolve) => child.on("exit", resolve));
    expect(status).toBe(0);
    expect(output).toContain("\r\x1b[2K[1/2] demo__lookup_customer: applying");
    expect(output).toContain("\r\x1b[2K[2/2] demo__search_release_notes: applying");
    expect(output).toContain("demo__search_release_notes: unchanged, nothing to do");
  });

  it("stops a hook that does not compile, with file, line and column, deploying nothing", ({ expect }) => {
    const dir = exampleCopy();
    writeFileSync(
      join(dir, "demo__lookup_customer.hook.ts"),
      'import fs from "node:fs";\nexport default defineToolAdapter({ apiVersion: "rayrun.hooks/v1" });\n',
    );
    const run = rayrun(["hooks", "apply", dir]);
    expect(run.status).toBe(1);
    expect(run.stdout).toMatch(
      /✗ demo__lookup_customer: does not compile, nothing deployed\n\s+.*demo__lookup_customer\.hook\.ts:1:\d+: import_forbidden/,
    );
  });

  it("stops a hook whose test case fails, showing expected and actual", ({ expect }) => {
    const dir = exampleCopy();
    const cases = JSON.parse(readFileSync(join(dir, "demo__search_release_notes.tests.json"), "utf8"));
    cases[0].expect.value = { action: "continue", arguments: { query: "SSO" } };
    writeFileSync(join(dir, "demo__search_release_notes.tests.json"), JSON.stringify(cases));
    writeFileSync(
      join(dir, "demo__search_release_notes.hook.ts"),
      `// changed\n${readFileSync(join(dir, "demo__search_release_notes.hook.ts"), "utf8")}`,
    );
    const run = rayrun(["hooks", "apply", dir, "--json"]);
    expect(run.status).toBe(1);
    const failed = run.json().hooks.find((h: { tool: string }) => h.tool === "demo__search_release_notes");
    expect(failed).toMatchObject({
      status: "failed",
      code: "test_failed",
      details: {
        expected: { value: { arguments: { query: "SSO" } } },
        actual: { outcome: "continue", value: { action: "continue", arguments: { query: "sso" } } },
      },
    });
    expect(failed.steps).not.toContainEqual(expect.stringContaining("deployed"));
  });

  it("names the file and field of a malformed tests or config file", ({ expect }) => {
    const dir = exampleCopy();
    writeFileSync(
      join(dir, "demo__lookup_customer.tests.json"),
      JSON.stringify([{ stage: "during", arguments: {}, expect: { outcome: "continue" } }]),
    );
    const tests = rayrun(["hooks", "apply", dir]);
    expect(tests.status).toBe(1);
    expect(tests.stderr).toContain(`${join(dir, "demo__lookup_customer.tests.json")}: [0].stage must be "before" or "after"`);
    const other = exampleCopy();
    writeFileSync(join(other, "demo__search_release_notes.config.json"), "{ limit: 1 }");
    const config = rayrun(["hooks", "apply", other]);
    expect(config.status).toBe(1);
    expect(config.stderr).toContain(`${join(other, "demo__search_release_notes.config.json")} is not valid JSON`);
  });
});

describe("following logs", () => {
  it("prints a call made while it follows, then stops cleanly on SIGINT", async ({ expect }) => {
    const started = new Date().toISOString();
    // Spawned, not spawnSync: the test makes a call while the CLI runs. Piped stdio, so no TTY and no status line.
    const follower = spawn(nodes.system, [bundle, "hooks", "logs", "demo__lookup_customer", "--json", "--follow", "--since", started], {
      env: { ...process.env, RAYRUN_WORKSPACE: undefined, RAYRUN_API_URL: gateway.origin, RAYRUN_API_KEY: seeded.adminKey },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    follower.stdout.on("data", (chunk) => (stdout += chunk));
    follower.stderr.on("data", (chunk) => (stderr += chunk));
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
      follower.on("exit", (code, signal) => resolve({ code, signal })),
    );
    try {
      // Arguments the input schema refuses leave a pre-dispatch row, hook or no hook.
      const client = new Client({ name: "cli-follow-test", version: "1.0.0" });
      await client.connect(
        new StreamableHTTPClientTransport(new URL(`${gateway.origin}/mcp`), {
          requestInit: { headers: { authorization: `Bearer ${keys.caller}` } },
        }),
      );
      expect((await client.callTool({ name: "demo__lookup_customer", arguments: { email: 5 } })).isError).toBe(true);
      await client.close();
      const deadline = Date.now() + 15_000;
      while (!stdout.includes('"invalid_arguments"')) {
        if (Date.now() > deadline || follower.exitCode !== null) throw new Error(`the call never appeared: ${stdout} ${stderr}`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      follower.kill("SIGINT");
      expect(await exited).toEqual({ code: 0, signal: null });
    } finally {
      follower.kill("SIGKILL");
    }
    const rows = stdout
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line));
    expect(rows).toContainEqual(expect.objectContaining({ stage: "pre_dispatch", outcome: "refused", code: "invalid_arguments" }));
    expect(stderr).toBe("");
  });
});

describe("codemode runs", () => {
  it("lists a run_code run (outcome, inner calls, the program's digest, never its text) and refuses a bad --outcome", async ({
    expect,
  }) => {
    const profile = (await request(gateway.origin, "POST", `/v1/workspaces/${seeded.ws}/profiles`, seeded.adminKey, {
      name: "cli code mode",
      defaultMode: "allow",
      discovery: "code",
    })) as { id: string };
    const key = (
      await request(gateway.origin, "POST", `/v1/workspaces/${seeded.ws}/keys`, seeded.adminKey, {
        name: "cli code mode agent",
        scopes: ["tools:call"],
        profileId: profile.id,
      })
    ).secret as string;
    const client = new Client({ name: "cli-codemode-test", version: "1.0.0" });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${gateway.origin}/mcp`), { requestInit: { headers: { authorization: `Bearer ${key}` } } }),
    );
    const program = 'const notes = await tools.demo__search_release_notes({ query: "sso" });\nreturn notes.items.length;';
    const answer = await client.callTool({ name: "run_code", arguments: { code: program } });
    await client.close();
    expect(answer.isError).toBeFalsy();

    // The row is written after the response: read until it is there.
    let runs: { outcome: string; innerCalls: number; programBytes: number; programSha256: string }[] = [];
    for (let tries = 0; tries < 50 && runs.length === 0; tries++) {
      const listed = rayrun(["codemode", "runs", "--json", "--outcome", "ok"]);
      expect(listed.status, listed.stderr).toBe(0);
      runs = listed.json();
      if (runs.length === 0) await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(runs).toHaveLength(1);
    expect(runs[0]).toMatchObject({ outcome: "ok", innerCalls: 1, programBytes: Buffer.byteLength(program) });
    const table = rayrun(["codemode", "runs"]);
    expect(table.stdout).toContain(runs[0]!.programSha256.slice(0, 12));
    expect(table.stdout).not.toContain("search_release_notes");

    const bad = rayrun(["codemode", "runs", "--outcome", "maybe"]);
    expect(bad.status).toBe(2);
    expect(bad.stderr).toContain("--outcome must be ok or error");
  });
});

describe("drafts, history and rate limits", () => {
  it("refuses to push over a draft changed since the pull (exit 3), and --force overwrites", ({ expect }) => {
    const dir = mkdtempSync(join(tmpdir(), "rayrun-pull-"));
    const tool = "demo__lookup_customer";
    expect(rayrun(["hooks", "pull", tool, "-o", "hook.ts"], { key: keys.writer, cwd: dir }).status).toBe(0);
    // Someone else saves meanwhile.
    const elsewhere = mkdtempSync(join(tmpdir(), "rayrun-other-"));
    writeFileSync(join(elsewhere, "hook.ts"), `// theirs\n${readFileSync(join(dir, "hook.ts"), "utf8")}`);
    expect(rayrun(["hooks", "push", tool, "hook.ts", "--force"], { key: keys.writer, cwd: elsewhere }).status).toBe(0);
    writeFileSync(join(dir, "hook.ts"), `// mine\n${readFileSync(join(dir, "hook.ts"), "utf8")}`);
    const stale = rayrun(["hooks", "push", tool, "hook.ts"], { key: keys.writer, cwd: dir });
    expect(stale.status).toBe(3);
    expect(stale.stderr).toContain("precondition_failed");
    expect(rayrun(["hooks", "pull", tool], { key: keys.writer, cwd: elsewhere }).stdout).toContain("// theirs");
    const forced = rayrun(["hooks", "push", tool, "hook.ts", "--force", "--json"], { key: keys.writer, cwd: dir });
    expect(forced.status).toBe(0);
    expect(forced.json()).toMatchObject({ created: true });

    const history = rayrun(["hooks", "history", tool, "--json"]).json();
    const [newest, previous] = history.versions;
    expect(rayrun(["hooks", "diff", tool, newest.versionId]).stdout).toContain("+// mine");
    const restored = rayrun(["hooks", "restore", tool, previous.versionId, "--json"]);
    expect(restored.json()).toMatchObject({ created: true });
    expect(rayrun(["hooks", "pull", tool]).stdout).toContain("// theirs");
  });

  it("exits 4 with the retry time when the save quota is spent", async ({ expect }) => {
    // A second workspace, so the quota spent here does not touch the other tests; the API spends most of it.
    const other = await seedWorkspace(gateway, "quota");
    const tools = await request(gateway.origin, "GET", `/v1/workspaces/${other.ws}/tools`, other.adminKey);
    const uid = tools.tools.find((tool: { publicName: string }) => tool.publicName === "demo__lookup_customer").uid;
    const draftPath = `/v1/workspaces/${other.ws}/tools/${uid}/hook/draft`;
    const source = (n: number) =>
      `// ${n}\nexport default defineToolAdapter({ apiVersion: "rayrun.hooks/v1", before: ({ arguments: args }) => ({ action: "continue", arguments: args }) });\n`;
    for (let n = 0; ; n++) {
      const { etag } = await request(gateway.origin, "GET", draftPath, other.adminKey);
      const res = await fetch(`${gateway.origin}${draftPath}`, {
        method: "PUT",
        headers: { authorization: `Bearer ${other.adminKey}`, "content-type": "application/json", "if-match": etag },
        body: JSON.stringify({ source: source(n) }),
      });
      await res.arrayBuffer();
      if (res.status === 429) break;
      expect(res.status).toBe(200);
    }
    const dir = mkdtempSync(join(tmpdir(), "rayrun-quota-"));
    writeFileSync(join(dir, "hook.ts"), source(-1));
    const run = rayrun(["hooks", "push", "demo__lookup_customer", "hook.ts", "--force"], { key: other.adminKey, cwd: dir });
    expect(run.status).toBe(4);
    expect(run.stderr).toMatch(/\(rate_limited, HTTP 429\); retry after \d+ s/);
  });

  it("hooks reset refuses without --yes (exit 2)", ({ expect }) => {
    const run = rayrun(["hooks", "reset", "demo__lookup_customer"]);
    expect(run.status).toBe(2);
    expect(run.stderr).toContain("pass --yes to confirm");
  });
});

describe("the npm package", () => {
  it("packs to a tarball that installs into an empty folder and runs from there", ({ expect }) => {
    const packs = mkdtempSync(join(tmpdir(), "rayrun-pack-"));
    const packed = spawnSync("npm", ["pack", "-w", "cli", "--pack-destination", packs, "--json"], { cwd: root, encoding: "utf8" });
    expect(packed.status, packed.stderr).toBe(0);
    const { filename, files } = (JSON.parse(packed.stdout) as { filename: string; files: { path: string }[] }[])[0]!;
    // The command (its launcher, bundle and the chunks it loads per command), the rayrun/hooks library (Node and
    // runtime-neutral core) with its declarations, and nothing else.
    const paths = files.map((file) => file.path).sort();
    expect(paths.filter((path) => !path.startsWith("dist/types/") && !path.startsWith("dist/cli/"))).toEqual([
      "README.md",
      "bin/rayrun.js",
      "dist/hooks-core.js",
      "dist/hooks.js",
      "dist/rayrun.js",
      "package.json",
    ]);
    expect(paths.filter((path) => path.startsWith("dist/types/")).every((path) => path.endsWith(".d.ts"))).toBe(true);
    expect(paths).toContain("dist/types/index.d.ts");
    const chunks = paths.filter((path) => path.startsWith("dist/cli/"));
    expect(chunks.length).toBeGreaterThan(0);
    expect(chunks.every((path) => /^dist\/cli\/[\w-]+\.js$/.test(path))).toBe(true);

    const project = mkdtempSync(join(tmpdir(), "rayrun-user-"));
    writeFileSync(join(project, "package.json"), JSON.stringify({ name: "user-ci", private: true }));
    const installed = spawnSync("npm", ["install", "--no-audit", "--no-fund", join(packs, filename)], { cwd: project, encoding: "utf8" });
    expect(installed.status, installed.stderr).toBe(0);
    const bin = join(project, "node_modules/.bin/rayrun");
    const version = spawnSync(bin, ["--version"], { cwd: project, encoding: "utf8" });
    expect(version.stdout.trim()).toBe("0.1.0");
    // The rules engine is a chunk loaded when `hooks check` or `hooks run` runs: it must be in the package too.
    writeFileSync(
      join(project, "gateway-hooks.toml"),
      '[[hooks.PreToolUse]]\nmatcher = "^Bash$"\nhandlers = [{ type = "deny", reason = "no shell" }]\n',
    );
    const checked = spawnSync(bin, ["hooks", "check", "gateway-hooks.toml", "--tool", "Bash", "--input", '{"command":"ls"}'], {
      cwd: project,
      encoding: "utf8",
    });
    expect(checked.stderr).not.toMatch(/ERR_MODULE_NOT_FOUND|Cannot find module/);
    expect(checked.stdout).toContain("no shell");
    const tools = spawnSync(bin, ["tools", "list", "--json"], {
      cwd: project,
      encoding: "utf8",
      env: { ...process.env, RAYRUN_WORKSPACE: undefined, RAYRUN_API_URL: gateway.origin, RAYRUN_API_KEY: seeded.adminKey },
    });
    expect(tools.status, tools.stderr).toBe(0);
    expect(JSON.parse(tools.stdout).map((tool: { publicName: string }) => tool.publicName)).toContain("demo__search_release_notes");
  });
});

function exampleCopy(): string {
  const dir = mkdtempSync(join(tmpdir(), "rayrun-hooks-"));
  cpSync(examples, dir, { recursive: true });
  return dir;
}
