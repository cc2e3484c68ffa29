// The shipped examples examples/hooks/duckduckgo.toml and exa.toml, each run against saved
// fixture pages on a local server (the copies point their hosts at it), through the SDK
// and through `rayrun hooks check` (the [tools] listing and --probe) on Node 20 and 22.
import { spawn, spawnSync } from "node:child_process";
import { cpSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, it } from "vitest";
import { HookRun, type LiveLine } from "../src/rules/index.ts";
import { EXA_KEY, startFixtureServer, type FixtureServer } from "./live-server.ts";

const root = join(import.meta.dirname, "../..");
const bundle = join(root, "cli/dist/rayrun.js");
const nodes = { "20": "/usr/bin/node", "22": process.execPath };

let server: FixtureServer;
beforeAll(async () => {
  const built = spawnSync(process.execPath, [join(root, "cli/build.ts")], { encoding: "utf8" });
  if (built.status !== 0) throw new Error(built.stderr);
  server = await startFixtureServer();
});
afterAll(() => server.close());

/** A copy of examples/hooks whose tools call the fixture server instead of the real hosts. */
function examples(): string {
  const dir = mkdtempSync(join(tmpdir(), "rayrun-live-examples-"));
  cpSync(join(root, "examples/hooks"), dir, { recursive: true });
  for (const [file, host] of [
    ["duckduckgo.toml", "https://html.duckduckgo.com"],
    ["exa.toml", "https://api.exa.ai"],
    ["exa.connector.toml", "https://api.exa.ai"],
  ] as const) {
    const path = join(dir, file);
    writeFileSync(path, readFileSync(path, "utf8").replaceAll(host, server.origin));
  }
  // The fixture server is on this machine: web_fetch's URLs (the input's) may reach it only when the file says so.
  const ddg = join(dir, "duckduckgo.toml");
  writeFileSync(ddg, readFileSync(ddg, "utf8").replace("[live]\n", "[live]\nallow_private = true\n"));
  return dir;
}

const lines = (path: string): LiveLine[] =>
  readFileSync(path, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((line) => JSON.parse(line) as LiveLine);

/** The bundle as a user runs it; async, so the in-process fixture server keeps answering. */
function rayrun(node: string, args: string[], cwd: string, env: Record<string, string> = {}) {
  return new Promise<{ status: number | null; stdout: string; stderr: string }>((resolve) => {
    const childEnv = { ...process.env, ...env };
    if (env.EXA_API_KEY === undefined) delete childEnv.EXA_API_KEY;
    const child = spawn(node, [bundle, ...args], { cwd, env: childEnv });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk) => (stdout += chunk));
    child.stderr.on("data", (chunk) => (stderr += chunk));
    child.on("close", (status) => resolve({ status, stdout, stderr }));
  });
}

describe("examples/hooks/duckduckgo.toml", () => {
  it("searches (regex-parsed, links unwrapped) and fetches a page's text, one record line per call", async ({ expect }) => {
    const dir = examples();
    const run = await HookRun.fromConfig(join(dir, "duckduckgo.toml"), { cwd: dir, runId: "run-ddg" });
    const { web_search, web_fetch } = await run.tools();
    const seenFrom = server.seen.length;
    const results = (await web_search!({ query: "Matthew Nowell" })) as { title: string; url: string; snippet: string }[];
    expect(results.map((result) => result.url)).toEqual([
      "https://tidewater.example/people/matthew-nowell",
      "https://news.example/2024/03/harbour?ref=ddg",
      "https://registry.example/companies/0447812",
    ]);
    expect(results[0]).toEqual({
      title: "Matthew Nowell – Director, Tidewater Holdings",
      url: "https://tidewater.example/people/matthew-nowell",
      snippet: 'Matthew Nowell joined Tidewater in 2019 & leads its "coastal" portfolio.',
    });
    expect(await web_search!({ query: "Matthew Nowell", max_results: 1 })).toHaveLength(1);
    const request = server.seen[seenFrom]!;
    expect([request.method, request.url, request.headers["user-agent"]]).toEqual([
      "GET",
      "/html/?q=Matthew%20Nowell",
      "Mozilla/5.0 (compatible; rayrun-hooks; +https://github.com/rayrun)",
    ]);
    const page = await web_fetch!({ url: `${server.origin}/article` });
    expect(page).toMatchObject({ status: 200, title: "Harbour plan approved — News Example", truncated: false });
    expect(await web_fetch!({ url: "file:///etc/passwd" }).catch((error: { code: string }) => error.code)).toBe("live_url_refused");
    const record = lines(join(dir, "runs/run-ddg/live.jsonl"));
    expect(record.map((line) => [line.tool, line.input_sent, line.error_raw?.code ?? null])).toEqual([
      ["web_search", { query: "Matthew Nowell", max_results: 10 }, null],
      ["web_search", { query: "Matthew Nowell", max_results: 1 }, null],
      ["web_fetch", { url: `${server.origin}/article` }, null],
      ["web_fetch", { url: "file:///etc/passwd" }, "live_url_refused"],
    ]);
  });
});

describe("examples/hooks/exa.toml", () => {
  it("posts a JSON body with the key from EXA_API_KEY, maps the results, and shares a connector", async ({ expect }) => {
    const dir = examples();
    const run = await HookRun.fromConfig(join(dir, "exa.toml"), { cwd: dir, runId: "run-exa", env: { EXA_API_KEY: EXA_KEY } });
    const { web_search, find_similar } = await run.tools();
    const seenFrom = server.seen.length;
    const results = (await web_search!({ query: "harbour plan", num_results: 2, since: "2024-01-01" })) as Record<string, unknown>[];
    expect(results).toEqual([
      {
        title: "Matthew Nowell - Director, Tidewater Holdings",
        url: "https://tidewater.example/people/matthew-nowell",
        published: "2023-11-02T00:00:00.000Z",
        author: "Tidewater Holdings",
        text: "Matthew Nowell joined Tidewater in 2019 and leads its coastal portfolio.",
      },
      {
        title: "Harbour plan approved",
        url: "https://news.example/2024/03/harbour",
        published: "2024-03-12T00:00:00.000Z",
        author: null,
        text: "The council voted 7-2 on Tuesday to approve the harbour plan.",
      },
    ]);
    const sent = server.seen[seenFrom]!;
    expect([sent.method, sent.url, sent.headers["x-api-key"], sent.headers["content-type"]]).toEqual([
      "POST",
      "/search",
      EXA_KEY,
      "application/json",
    ]);
    expect(JSON.parse(sent.body)).toEqual({
      query: "harbour plan",
      numResults: 2,
      startPublishedDate: "2024-01-01",
      type: "auto",
      contents: { text: { maxCharacters: 2000 } },
    });
    await web_search!({ query: "no date" });
    expect(JSON.parse(server.seen.at(-1)!.body)).not.toHaveProperty("startPublishedDate");
    expect(await find_similar!({ url: "https://tidewater.example/" })).toHaveLength(3);
    expect(server.seen.at(-1)).toMatchObject({ url: "/findSimilar", headers: { "x-api-key": EXA_KEY, accept: "application/json" } });
    const record = readFileSync(join(dir, "runs/run-exa/live.jsonl"), "utf8");
    expect(record.split("\n").filter(Boolean)).toHaveLength(3);
    expect(record).not.toContain(EXA_KEY);

    const keyless = await HookRun.fromConfig(join(dir, "exa.toml"), { cwd: dir, env: {} });
    const refused = await (await keyless.tools()).web_search!({ query: "x" }).catch((error: { code: string; message: string }) => error);
    expect(refused).toMatchObject({ code: "live_env_missing", message: "web_search: EXA_API_KEY is not set (no request was made)" });
  });
});

describe("rayrun hooks check on the examples", () => {
  for (const [version, node] of Object.entries(nodes)) {
    it(`lists the [tools] table with each tool's input, and --probe makes one real call (Node ${version})`, async ({ expect }) => {
      const dir = examples();
      const listed = await rayrun(node, ["hooks", "check", "duckduckgo.toml"], dir);
      expect(listed.status, listed.stderr).toBe(0);
      expect(listed.stdout).toContain("  web_search (http) { query: string, max_results: integer? }  Search the open web.");
      expect(listed.stdout).toContain("  web_fetch (http) { url: string }");
      const json = JSON.parse((await rayrun(node, ["hooks", "check", "exa.toml", "--json"], dir)).stdout);
      expect(json.tools).toEqual([
        expect.objectContaining({
          name: "web_search",
          kind: "http",
          input: { query: "string", num_results: "integer?", since: "string?" },
        }),
        expect.objectContaining({ name: "find_similar", kind: "connector", input: { url: "string", num_results: "integer?" } }),
      ]);

      const probe = await rayrun(
        node,
        ["hooks", "check", "duckduckgo.toml", "--probe", "web_search", "--input", '{"query": "Matthew Nowell", "max_results": 1}'],
        dir,
      );
      expect(probe.status, probe.stderr).toBe(0);
      expect(probe.stderr).toContain("--probe web_search makes one real call: it uses the network and any key the tool reads");
      expect(probe.stdout).toContain("probe web_search (a real call over the network): answered");
      expect(probe.stdout).toContain("https://tidewater.example/people/matthew-nowell");

      const keyless = await rayrun(
        node,
        ["hooks", "check", "exa.toml", "--probe", "web_search", "--input", '{"query": "x"}', "--json"],
        dir,
      );
      expect(keyless.status).toBe(1);
      expect(JSON.parse(keyless.stdout).problems).toEqual([
        { code: "live_env_missing", message: "web_search: EXA_API_KEY is not set (no request was made)" },
      ]);
      const keyed = await rayrun(
        node,
        ["hooks", "check", "exa.toml", "--probe", "web_search", "--input", '{"query": "x"}', "--json"],
        dir,
        {
          EXA_API_KEY: EXA_KEY,
        },
      );
      expect(keyed.status, keyed.stderr).toBe(0);
      const report = JSON.parse(keyed.stdout);
      expect(report.probe).toMatchObject({ tool: "web_search", network: true, line: { tool: "web_search", replayed: false } });
      expect(keyed.stdout).not.toContain(EXA_KEY);
      const unknown = await rayrun(node, ["hooks", "check", "exa.toml", "--probe", "nope", "--json"], dir);
      expect([unknown.status, JSON.parse(unknown.stdout).problems[0].code]).toEqual([1, "unknown_tool"]);
    });
  }
});
