// Declared live tools (`[live]`, `[tools.<name>]`) in-process: every parse mode and template
// rule against a local fixture server, the bad inputs the issue names, the record line,
// replay without the network, connectors, callables and the tool definitions.
import { mkdtempSync, readFileSync, writeFileSync, mkdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { Validator } from "@cfworker/json-schema";
import fc from "fast-check";
import { query, type JsonValue } from "jsonpath-rfc9535";
import { afterAll, beforeAll, describe, it, vi } from "vitest";
import {
  HookDenied,
  HookRun,
  InputChecker,
  LiveToolError,
  LiveTools,
  parsePage,
  parseRules,
  RulesFileError,
  type HttpTool,
  type LiveLine,
} from "../src/rules/index.ts";
import { fetchDialChecked, fetchPublicOnly, PrivateAddressError } from "../src/rules/node/live/private-address.ts";
import { EXA_KEY, startFixtureServer, type FixtureServer } from "./live-server.ts";

let server: FixtureServer;
let origin: string;
beforeAll(async () => {
  server = await startFixtureServer();
  origin = server.origin;
});
afterAll(() => server.close());

function folder(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), "rayrun-live-"));
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, name)), { recursive: true });
    writeFileSync(join(dir, name), text);
  }
  return dir;
}

async function runOf(toml: string, files: Record<string, string> = {}, options: Parameters<typeof HookRun.fromConfig>[1] = {}) {
  const dir = folder({ "gateway-hooks.toml": toml, ...files });
  const run = await HookRun.fromConfig(join(dir, "gateway-hooks.toml"), { cwd: dir, ...options });
  return { run, dir, tools: await run.tools() };
}

async function loadError(toml: string, files: Record<string, string> = {}, env?: Record<string, string>): Promise<RulesFileError> {
  try {
    await runOf(toml, files, env ? { env } : {});
  } catch (error) {
    if (error instanceof RulesFileError) return error;
    throw error;
  }
  throw new Error("the file loaded");
}

async function rejection(promise: Promise<unknown>): Promise<Error> {
  try {
    await promise;
  } catch (error) {
    return error as Error;
  }
  throw new Error("it resolved");
}

const lines = (path: string): LiveLine[] =>
  readFileSync(path, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((line) => JSON.parse(line) as LiveLine);

/** Requests the fixture server saw from one test on, so a test can say none was made. */
function requestsFrom() {
  const start = server.seen.length;
  return () => server.seen.slice(start);
}

describe("loading [live] and [tools]", () => {
  it("loads the seed's own example file, every kind of tool, and lists them", async ({ expect }) => {
    const seed = `
[live]
record = "runs/live.jsonl"
replay = ""
allowed_env = ["EXA_API_KEY"]
timeout = 45

[tools.web_search]
description = "Open web search."
input = { query = "string: The query.", max_results = "integer?: At most this many." }
defaults = { max_results = 10 }
method = "GET"
url = "https://html.duckduckgo.com/html/?q={query}"
headers = { User-Agent = "..." }
parse = "regex"
pattern = '<a[^>]+class="result__a"[^>]+href="(?<url>[^"]+)"[^>]*>(?<title>.*?)</a>'
fields = { title = "title", url = { from = "url", query_param = "uddg" }, snippet = "snippet" }
limit = "{max_results}"

[tools.web_fetch]
input = { url = "string" }
url = "{url}"
parse = "text"
max_bytes = 200000

[tools.lookup]
callable = "./guards.mjs#lookup"
input = { id = "string" }

[tools.breach_by_email]
connector = "./spycloud/connector.toml"
operation = "get_records_by_email"
`;
    const { run, tools } = await runOf(seed, {
      "guards.mjs": "export async function lookup(input) { return { id: input.id, found: true }; }",
      "spycloud/connector.toml": `base_url = "https://api.spycloud.io/sp-v2"\nauth = { type = "header", name = "X-API-Key", env = "EXA_API_KEY" }\n[operations.get_records_by_email]\ninput = { email = "string: An email address." }\npath = "/breach/data/emails/{email}"\nresults = "$.results[*]"\n`,
    });
    expect(Object.keys(tools)).toEqual(["web_search", "web_fetch", "lookup", "breach_by_email"]);
    expect(await tools.lookup!({ id: "a1" })).toEqual({ id: "a1", found: true });
    expect(run.liveLog).toMatchObject([
      { tool: "lookup", input_asked: { id: "a1" }, input_sent: { id: "a1" }, result_raw: { id: "a1", found: true }, replayed: false },
    ]);
  });

  describe("redirects", () => {
    let other: FixtureServer;
    beforeAll(async () => {
      other = await startFixtureServer();
    });
    afterAll(() => other.close());
    const keyed = { env: { EXA_API_KEY: EXA_KEY } };
    const redirectTo = (to: string, status = 302) => `${origin}/redirect?status=${status}&to=${encodeURIComponent(to)}`;

    it("refuses a redirect off the origin the template fixes: the API key header never reaches the other origin", async ({ expect }) => {
      const { tools, run } = await runOf(
        `[live]\nallowed_env = ["EXA_API_KEY"]\n\n[tools.search]\ninput = { query = "string" }\nmethod = "POST"\nurl = "${redirectTo(`${other.origin}/echo/steal`)}"\nheaders = { x-api-key = "$EXA_API_KEY" }\nbody = { query = "{query}" }\n`,
        {},
        keyed,
      );
      const error = (await rejection(tools.search!({ query: "harbour" }))) as LiveToolError;
      expect([error.code, error.message]).toEqual([
        "live_url_refused",
        `search: POST ${origin}/redirect redirected to ${other.origin}, off the template's origin ${origin}`,
      ]);
      expect(other.seen).toEqual([]);
      expect(run.liveLog[0]!.error_raw).toMatchObject({ code: "live_url_refused" });
    });

    it("a {url} tool follows a redirect to another origin without the file's headers, and records where it went", async ({ expect }) => {
      // A {url} tool reads no variable (round 5, finding 2): its file's own headers are what a redirect leaves behind.
      const { tools, run } = await runOf(
        `[live]\nallow_private = true\n[tools.fetch_json]\ninput = { url = "string" }\nurl = "{url}"\nheaders = { x-client = "rayrun-agent", accept = "application/json" }\n`,
      );
      const landed = (await tools.fetch_json!({ url: redirectTo(`${other.origin}/echo/landed`) })) as {
        path: string;
        headers: Record<string, string>;
      };
      expect(landed.path).toBe("/echo/landed");
      expect(landed.headers["x-client"]).toBeUndefined();
      expect(landed.headers.accept).not.toBe("application/json");
      expect(run.liveLog[0]!.request).toEqual({ method: "GET", url: `${other.origin}/echo/landed` });
    });

    it("follows redirects on the same origin with the headers; a 303 after a POST is a GET without the body, a 307 repeats it", async ({
      expect,
    }) => {
      const tool = (status: number) =>
        `[tools.post_${status}]\ninput = { query = "string" }\nmethod = "POST"\nurl = "${origin}/redirect?hops=2&status=${status}"\nheaders = { x-api-key = "$EXA_API_KEY" }\nbody = { query = "{query}" }\n`;
      const { tools } = await runOf(`[live]\nallowed_env = ["EXA_API_KEY"]\n\n${tool(303)}\n${tool(307)}`, {}, keyed);
      type Echo = { method: string; path: string; headers: Record<string, string>; body: string | null };
      const seeOther = (await tools.post_303!({ query: "q" })) as Echo;
      expect([seeOther.method, seeOther.path, seeOther.body, seeOther.headers["x-api-key"]]).toEqual([
        "GET",
        "/echo/landed",
        null,
        EXA_KEY,
      ]);
      const repeated = (await tools.post_307!({ query: "q" })) as Echo;
      expect([repeated.method, repeated.body, repeated.headers["x-api-key"]]).toEqual(["POST", '{"query":"q"}', EXA_KEY]);
    });

    it("stops after 5 redirects, and refuses a redirect to a URL that is not http(s)", async ({ expect }) => {
      const { tools } = await runOf(
        `[tools.loop]\nurl = "${origin}/redirect?hops=6"\n\n[tools.to_file]\nurl = "${redirectTo("file:///etc/passwd")}"\n`,
      );
      const loop = (await rejection(tools.loop!({}))) as LiveToolError;
      expect([loop.code, loop.message]).toEqual(["live_url_refused", `loop: GET ${origin}/redirect redirected more than 5 times`]);
      const file = (await rejection(tools.to_file!({}))) as LiveToolError;
      expect([file.code, file.message]).toEqual([
        "live_url_refused",
        `to_file: GET ${origin}/redirect redirected to a URL that is not http(s)`,
      ]);
    });
  });

  it("keeps the last 1,000 calls' lines in memory, while the record file keeps every call", async ({ expect }) => {
    const { run, tools, dir } = await runOf(
      `[live]\nrecord = "live.jsonl"\n\n[tools.lookup]\ncallable = "./guards.mjs#lookup"\ninput = { id = "string" }\n`,
      {
        "guards.mjs": "export async function lookup(input) { return { id: input.id }; }",
      },
    );
    for (let n = 0; n < 1_005; n++) await tools.lookup!({ id: `c${n}` });
    expect(run.liveLog).toHaveLength(1_000);
    expect([run.liveLog[0]!.input_sent, run.liveLog.at(-1)!.input_sent]).toEqual([{ id: "c5" }, { id: "c1004" }]);
    expect(lines(join(dir, "live.jsonl"))).toHaveLength(1_005);
  });

  it("refuses a template hole that names no input field, with its key path and line", async ({ expect }) => {
    const error = await loadError(`[tools.search]\ninput = { query = "string" }\nurl = "https://x.test/?q={qeury}"\n`);
    expect([error.code, error.path, error.line]).toEqual(["rules_bad_template", "tools.search.url", 3]);
    expect(error.message).toContain("the hole {qeury} names no input field (fields: query)");
    const body = await loadError(
      `[tools.search]\ninput = { query = "string" }\nmethod = "POST"\nurl = "https://x.test/"\nbody = { q = { text = "{nope}" } }\n`,
    );
    expect([body.code, body.path]).toEqual(["rules_bad_template", "tools.search.body"]);
    const limit = await loadError(`[tools.search]\nurl = "https://x.test/"\nresults = "$[*]"\nlimit = "{n}"\n`);
    expect([limit.code, limit.path]).toEqual(["rules_bad_template", "tools.search.limit"]);
  });

  it("refuses an env name outside [live].allowed_env, in a header and in a connector's auth", async ({ expect }) => {
    const header = await loadError(
      `[live]\nallowed_env = ["A_KEY"]\n[tools.search]\nurl = "https://x.test/"\nheaders = { Authorization = "Bearer $OTHER_KEY" }\n`,
    );
    expect([header.code, header.path, header.line]).toEqual(["rules_env_not_allowed", "tools.search.headers.Authorization", 5]);
    expect(header.message).toContain("$OTHER_KEY is not listed in [live].allowed_env");
    const auth = await loadError(`[tools.breach]\nconnector = "./c.toml"\noperation = "get"\n`, {
      "c.toml": `base_url = "https://api.example"\n\nauth = { type = "bearer", env = "SECRET_TOKEN" }\n[operations.get]\npath = "/x"\n`,
    });
    expect([auth.code, auth.file, auth.path, auth.line]).toEqual(["rules_env_not_allowed", "./c.toml", "auth.env", 3]);
  });

  it("refuses bad patterns, JSONPaths, tool names, unknown keys, input shorthands and defaults", async ({ expect }) => {
    const cases: [string, string, string][] = [
      [`[tools.s]\nurl = "https://x.test/"\nparse = "regex"\npattern = "<a>(.*)</a>"\n`, "rules_bad_pattern", "tools.s.pattern"],
      [`[tools.s]\nurl = "https://x.test/"\nparse = "regex"\npattern = "(?<a>["\n`, "rules_bad_pattern", "tools.s.pattern"],
      [`[tools.s]\nurl = "https://x.test/"\nresults = "$.items[*"\n`, "rules_bad_jsonpath", "tools.s.results"],
      [`[tools."web search"]\nurl = "https://x.test/"\n`, "rules_wrong_type", "tools.web search"],
      [`[tools.s]\nurl = "https://x.test/"\nquery_string = "x"\n`, "rules_unknown_key", "tools.s.query_string"],
      [`[tools.s]\ninput = { q = "text" }\nurl = "https://x.test/"\n`, "rules_wrong_type", "tools.s.input.q"],
      [
        `[tools.s]\ninput = { n = "integer?" }\ndefaults = { n = "ten" }\nurl = "https://x.test/"\n`,
        "rules_wrong_type",
        "tools.s.defaults.n",
      ],
      [`[tools.s]\nurl = "file:///etc/{x}"\ninput = { x = "string" }\n`, "rules_wrong_type", "tools.s.url"],
      [`[tools.s]\n`, "rules_missing_key", "tools.s"],
      [`[tools.s]\nurl = "https://x.test/"\ncallable = "./a.mjs#b"\n`, "rules_wrong_type", "tools.s.callable"],
      [`[live]\nrecord = "a.jsonl"\nreplay = "a.jsonl"\n`, "rules_wrong_type", "live.record"],
      [`[live]\nreplay = "missing.jsonl"\n`, "rules_replay_unreadable", "live.replay"],
      [`[tools.s]\nconnector = "./none.toml"\noperation = "x"\n`, "rules_connector_unreadable", "tools.s.connector"],
    ];
    for (const [toml, code, path] of cases) {
      const error = await loadError(toml);
      expect([error.code, error.path], toml).toEqual([code, path]);
    }
  });

  it("checks a connector tool's own defaults against its operation's input, and shows them as defaults", async ({ expect }) => {
    const files = { "c.toml": `base_url = "https://api.example"\n[operations.get]\ninput = { n = "integer?" }\npath = "/x"\n` };
    const wrong = await loadError(`[tools.t]\nconnector = "./c.toml"\noperation = "get"\ndefaults = { n = "ten" }\n`, files);
    expect([wrong.code, wrong.path]).toEqual(["rules_wrong_type", "tools.t.defaults.n"]);
    const unknown = await loadError(`[tools.t]\nconnector = "./c.toml"\noperation = "get"\ndefaults = { m = 1 }\n`, files);
    expect([unknown.code, unknown.path]).toEqual(["rules_unknown_key", "tools.t.defaults.m"]);
    const operation = await loadError(`[tools.t]\nconnector = "./c.toml"\noperation = "put"\n`, files);
    expect([operation.code, operation.path, operation.message]).toEqual([
      "rules_unknown_key",
      "tools.t.operation",
      expect.stringContaining('has no operation "put" (operations: get)'),
    ]);
    const { run } = await runOf(`[tools.t]\nconnector = "./c.toml"\noperation = "get"\ndefaults = { n = 7 }\n`, files);
    expect(await run.toolDefinitions("anthropic")).toEqual([
      { name: "t", input_schema: { type: "object", properties: { n: { type: "integer", default: 7 } } } },
    ]);
  });

  it("refuses a recording line that is not JSON, naming its line", async ({ expect }) => {
    const good = JSON.stringify({ tool: "s", input_asked: {}, input_sent: {}, result_raw: [], elapsed: 0, replayed: false });
    const error = await loadError(`[live]\nreplay = "rec.jsonl"\n[tools.s]\nurl = "https://x.test/"\n`, {
      "rec.jsonl": `${good}\n${good}\n{"tool": "s", oops\n`,
    });
    expect([error.code, error.line]).toEqual(["rules_replay_bad_line", 3]);
    expect(error.message).toContain("line 3 of the recording is not JSON");
  });
});

describe("parse modes and templates against a local server", () => {
  it("json: a JSONPath to the results, fields by item path (and a redirect unwrapped), limit as a template", async ({ expect }) => {
    const { tools, run } = await runOf(`
[tools.items]
input = { n = "integer?: How many." }
defaults = { n = 2 }
url = "${origin}/items"
results = "$.items[*]"
fields = { title = "name", link = "meta.link", first = "$.meta.link", out = { from = "meta.go", query_param = "to" }, missing = "nope" }
limit = "{n}"

[tools.nothing]
url = "${origin}/items"
results = "$.records[*]"

[tools.whole]
url = "${origin}/items"
`);
    expect(await tools.items!({})).toEqual([
      { title: "item 1", link: "https://items.example/1", first: "https://items.example/1", out: "https://items.example/1" },
      { title: "item 2", link: "https://items.example/2", first: "https://items.example/2", out: "https://items.example/2" },
    ]);
    expect(await tools.items!({ n: 3 })).toHaveLength(3);
    // A JSONPath that matches nothing is an empty list, not an error.
    expect(await tools.nothing!({})).toEqual([]);
    expect(await tools.whole!({})).toMatchObject({ total: 4 });
    expect(run.liveLog.map((line) => line.input_sent)).toEqual([{ n: 2 }, { n: 3 }, {}, {}]);
  });

  it("json: results and $ field paths select what RFC 9535 selects (the JSONPath library's own query), on any document", ({ expect }) => {
    // Names, indices (negative ones from the end) and wildcards in every combination, and the shapes the library
    // evaluates itself (descendants, slices, filters).
    const name = fc.constantFrom("a", "b", "items", "0", "x y");
    const selector = fc.oneof(
      name.map((key) => `.${/^[a-z]+$/.test(key) ? key : "*"}`),
      name.map((key) => `[${JSON.stringify(key)}]`),
      fc.integer({ min: -3, max: 3 }).map((index) => `[${index}]`),
      fc.constant("[*]"),
      fc.tuple(name, fc.integer({ min: -2, max: 2 })).map(([key, index]) => `[${JSON.stringify(key)}, ${index}, *]`),
      fc.constantFrom("..a", "[1:]", "[?@.a]", "..*"),
    );
    const path = fc.array(selector, { maxLength: 4 }).map((parts) => `$${parts.join("")}`);
    const value: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
      node: fc.oneof(
        { depthSize: "small" },
        fc.jsonValue({ maxDepth: 0 }),
        fc.array(tie("node"), { maxLength: 4 }),
        fc.dictionary(name, tie("node"), { maxKeys: 4 }),
      ),
    })).node;
    fc.assert(
      fc.property(value, path, (document, results) => {
        const page = {
          url: "https://items.example/",
          status: 200,
          contentType: "application/json",
          body: JSON.stringify(document),
          truncated: false,
        };
        const parsed = JSON.parse(page.body) as JsonValue;
        expect(parsePage("t", { mode: "json", results }, page, undefined).result).toEqual(query(parsed, results));
        const field = parsePage("t", { mode: "json", results: "$", fields: { f: results } }, page, undefined).result;
        expect(field).toEqual([query(parsed, results)[0] === undefined ? {} : { f: query(parsed, results)[0] }]);
      }),
      { numRuns: 2000 },
    );
  });

  it("regex: one object per match, tags stripped and entities decoded; no match is an empty list", async ({ expect }) => {
    const { tools } = await runOf(`
[tools.search]
input = { query = "string", max_results = "integer?" }
url = "${origin}/html/?q={query}"
parse = "regex"
pattern = '<a[^>]+class="result__a"[^>]+href="(?<url>[^"]+)"[^>]*>(?<title>.*?)</a>.*?<a[^>]+class="result__snippet"[^>]*>(?<snippet>.*?)</a>'
fields = { title = "title", url = { from = "url", query_param = "uddg" }, snippet = "snippet" }
limit = "{max_results}"
`);
    const results = await tools.search!({ query: "Matthew Nowell" });
    expect(results).toEqual([
      {
        title: "Matthew Nowell – Director, Tidewater Holdings",
        url: "https://tidewater.example/people/matthew-nowell",
        snippet: 'Matthew Nowell joined Tidewater in 2019 & leads its "coastal" portfolio.',
      },
      {
        title: "Harbour plan approved — News Example",
        url: "https://news.example/2024/03/harbour?ref=ddg",
        snippet: "The council's vote follows a proposal by M. Nowell <Tidewater>.",
      },
      {
        title: "NOWELL LTD – Company Registry",
        url: "https://registry.example/companies/0447812",
        snippet: "Officers: Matthew NOWELL (director, appointed 2016).",
      },
    ]);
    expect(await tools.search!({ query: "Matthew Nowell", max_results: 1 })).toHaveLength(1);
    expect(await tools.search!({ query: "zzqxjv-nothing" })).toEqual([]);
  });

  it("text: title and readable text, scripts, styles and comments removed; past max_bytes it is cut and says so", async ({ expect }) => {
    const { tools, run } = await runOf(`
[live]
allow_private = true

[tools.fetch]
input = { url = "string" }
url = "{url}"
parse = "text"
max_bytes = 50000
`);
    const page = (await tools.fetch!({ url: `${origin}/article` })) as Record<string, unknown>;
    expect(page).toMatchObject({ url: `${origin}/article`, status: 200, title: "Harbour plan approved — News Example", truncated: false });
    expect(page.text).toContain(
      "The council voted 7–2 on Tuesday to approve the harbour plan put forward by Matthew Nowell of Tidewater Holdings.",
    );
    expect(page.text).toContain("“It’s a good day for the coast,” he said. Work starts in May.");
    expect(page.text).toContain("Votes for 7");
    for (const hidden of ["tracker", "BUY NOW", "font-family", "editor's note", "Enable JavaScript", "not text"])
      expect(page.text).not.toContain(hidden);
    const big = (await tools.fetch!({ url: `${origin}/big` })) as Record<string, unknown>;
    expect(big).toMatchObject({ title: "Big", truncated: true });
    expect((big.text as string).length).toBeLessThan(50_000);
    expect(run.liveLog.at(-1)).toMatchObject({ tool: "fetch", truncated: true });
    // A page is returned whatever its status: the text shape carries it.
    expect(await tools.fetch!({ url: `${origin}/status/404` })).toMatchObject({ status: 404 });
  });

  it("reads 2 MB of lone < and </ as text in one pass (it took seconds per megabyte, quadratic, with the thread held)", async ({
    expect,
  }) => {
    const { tools } = await runOf(
      `[live]\nallow_private = true\n[tools.fetch]\ninput = { url = "string" }\nurl = "{url}"\nparse = "text"\nmax_bytes = 4194304\n`,
    );
    const page = (await tools.fetch!({ url: `${origin}/lone-brackets` })) as { text: string; truncated: boolean };
    expect(page.truncated).toBe(false);
    expect(page.text).toBe(`${"< ".repeat(500_000)}${"</ ".repeat(333_000)}`.trim() + "\nend");
  }, 10_000);

  it("URL holes are percent-encoded and can never change the scheme, host or path the template fixes", async ({ expect }) => {
    const { tools } = await runOf(`
[tools.echo]
input = { q = "string", page = "integer?", id = "string?" }
url = "${origin}/echo/items/{id}?q={q}&page={page}"
`);
    const hostile = "a b&page=9#frag/../../x?y=1";
    const answer = (await tools.echo!({ q: hostile, id: "evil.test@other.test:81" })) as Record<string, unknown>;
    expect(answer).toMatchObject({ path: "/echo/items/evil.test%40other.test%3A81", query: { q: hostile } });
    // An absent optional field drops its query parameter.
    expect(answer.rawQuery).not.toContain("page=");
    expect(await tools.echo!({ q: "x", page: 2 })).toMatchObject({ query: { q: "x", page: "2" } });
    const up = await rejection(tools.echo!({ q: "x", id: ".." }));
    expect(up).toMatchObject({ name: "LiveToolError", code: "live_url_refused" });
  });

  it("a {url}-only template takes http and https URLs only: file: and javascript: are refused before any request", async ({ expect }) => {
    const { tools, run } = await runOf(`[tools.fetch]\ninput = { url = "string" }\nurl = "{url}"\nparse = "text"\n`);
    const made = requestsFrom();
    for (const url of ["file:///etc/passwd", "javascript:alert(1)", "ftp://files.example/x", "not a url"]) {
      const error = await rejection(tools.fetch!({ url }));
      expect(error, url).toBeInstanceOf(LiveToolError);
      expect(error, url).toMatchObject({ code: "live_url_refused" });
    }
    expect(made()).toEqual([]);
    expect(run.liveLog.map((line) => line.error_raw?.code)).toEqual(Array(4).fill("live_url_refused"));
  });

  it("body: a JSON template keeps a sole hole's type and drops an absent optional key; a string template is text", async ({ expect }) => {
    const { tools } = await runOf(`
[tools.post]
input = { query = "string", n = "integer?", tags = "string[]?", since = "string?" }
defaults = { n = 5 }
method = "POST"
url = "${origin}/echo/search"
body = { query = "{query}", numResults = "{n}", filters = { tags = "{tags}", since = "{since}" }, label = "q: {query}", fixed = true }

[tools.form]
input = { query = "string" }
method = "POST"
url = "${origin}/echo/form"
headers = { Content-Type = "application/x-www-form-urlencoded" }
body = "q={query}&format=json"
`);
    const posted = (await tools.post!({ query: "harbour", tags: ["a", "b"] })) as { body: string; headers: Record<string, string> };
    expect(JSON.parse(posted.body)).toEqual({
      query: "harbour",
      numResults: 5,
      filters: { tags: ["a", "b"] },
      label: "q: harbour",
      fixed: true,
    });
    expect(posted.headers["content-type"]).toBe("application/json");
    const form = (await tools.form!({ query: "harbour" })) as { body: string; headers: Record<string, string> };
    expect([form.body, form.headers["content-type"]]).toEqual(["q=harbour&format=json", "application/x-www-form-urlencoded"]);
  });
});

describe("bad input and bad answers", () => {
  it("refuses exactly the inputs JSON Schema refuses, for any shorthand input table", ({ expect }) => {
    const type = fc.constantFrom("string", "integer", "number", "boolean", "object", "array");
    const shorthand = fc
      .tuple(type, fc.boolean(), fc.boolean())
      .map(([kind, list, optional]) => `${kind}${list && kind !== "array" && kind !== "object" ? "[]" : ""}${optional ? "?" : ""}`);
    const table = fc.dictionary(fc.constantFrom("q", "n", "tags", "x"), shorthand, { minKeys: 1 });
    const value = fc.oneof(
      fc.jsonValue({ maxDepth: 2 }),
      fc.constantFrom(1.5, -0, 2 ** 60, Number.NaN, Number.POSITIVE_INFINITY),
      fc.array(fc.oneof(fc.string(), fc.integer(), fc.double()), { maxLength: 3 }),
    );
    const input = fc.dictionary(fc.constantFrom("q", "n", "tags", "x", "other"), value, { maxKeys: 4 });
    fc.assert(
      fc.property(table, input, (fields, given) => {
        const config = parseRules(
          `[tools.t]\ninput = ${JSON.stringify(fields).replaceAll('":', '" =')}\nurl = "https://x.example/"\n`,
          "toml",
        );
        const schema = (config.live!.tools[0] as HttpTool).input;
        const expected = new Validator(schema as never, "2020-12", false).validate(given).valid;
        let refused: unknown;
        try {
          new InputChecker("t", schema).check(given);
        } catch (error) {
          refused = error;
        }
        expect(refused === undefined).toBe(expected);
        if (refused) expect((refused as LiveToolError).code).toBe("live_input_invalid");
      }),
      { numRuns: 3000 },
    );
  });

  const file = () => `
[tools.search]
input = { query = "string: The query.", max_results = "integer?" }
url = "${origin}/echo?q={query}"

[tools.api]
input = { code = "integer" }
url = "${origin}/status/{code}"
results = "$.items[*]"

[tools.page]
url = "${origin}/not-json"

[tools.slow]
url = "${origin}/hang"
timeout = 0.3
`;

  it("refuses a missing required field and a wrong type by name, before any request, and records the refusal", async ({ expect }) => {
    const { tools, run } = await runOf(file());
    const made = requestsFrom();
    const missing = await rejection(tools.search!({ max_results: 3 }));
    expect(missing).toMatchObject({ code: "live_input_invalid" });
    expect(missing.message).toContain('missing required field "query"');
    const wrong = await rejection(tools.search!({ query: "x", max_results: "ten" }));
    expect(wrong).toMatchObject({ code: "live_input_invalid" });
    expect(wrong.message).toMatch(/max_results: type "string" is invalid. Expected "integer"/);
    expect(made()).toEqual([]);
    expect(run.liveLog).toMatchObject([
      { tool: "search", input_asked: { max_results: 3 }, error_raw: { code: "live_input_invalid" }, replayed: false },
      { tool: "search", error_raw: { code: "live_input_invalid" } },
    ]);
    expect(run.liveLog[0]).not.toHaveProperty("result_raw");
  });

  it("turns a 404, a 500 and a non-JSON body into stable errors, each a recorded line", async ({ expect }) => {
    const { tools, run } = await runOf(file());
    const notFound = await rejection(tools.api!({ code: 404 }));
    expect([notFound.name, (notFound as LiveToolError).code]).toEqual(["LiveToolError", "live_http_status"]);
    expect(notFound.message).toContain("answered 404");
    expect(await rejection(tools.api!({ code: 500 }))).toMatchObject({
      code: "live_http_status",
      message: expect.stringContaining("upstream exploded"),
    });
    expect(await rejection(tools.page!({}))).toMatchObject({ code: "live_not_json" });
    expect(run.liveLog.map((line) => [line.error_raw?.code, line.error?.slice(0, 10)])).toEqual([
      ["live_http_status", "api: GET h"],
      ["live_http_status", "api: GET h"],
      ["live_not_json", "page: the "],
    ]);
  });

  it("gives up on a server that never answers at the timeout, and records the timeout", async ({ expect }) => {
    const { tools, run } = await runOf(file());
    const started = performance.now();
    const error = await rejection(tools.slow!({}));
    expect(error).toMatchObject({ code: "live_timeout", message: "slow: no answer within 0.3 s" });
    expect(performance.now() - started).toBeLessThan(5000);
    expect(run.liveLog).toMatchObject([{ tool: "slow", error: "slow: no answer within 0.3 s", error_raw: { code: "live_timeout" } }]);
  });

  it("refuses a JSON answer over max_bytes (a cut body cannot be read), and says so", async ({ expect }) => {
    const { tools } = await runOf(`[tools.items]\nurl = "${origin}/items"\nmax_bytes = 40\n`);
    expect(await rejection(tools.items!({}))).toMatchObject({ code: "live_response_too_large" });
  });
});

describe("callable and connector tools", () => {
  it("a callable gets the input as sent; a refusal it throws is recorded as denied", async ({ expect }) => {
    const { tools, run } = await runOf(
      `
[tools.lookup]
callable = "./tools.mjs#lookup"
input = { id = "string", depth = "integer?" }
defaults = { depth = 1 }

[tools.guarded]
callable = "./tools.mjs#guarded"
input = { id = "string" }
`,
      {
        "tools.mjs": `
export function lookup(input, context) { return { ...input, run: context.run_id, signal: context.signal instanceof AbortSignal }; }
class PolicyRefusal extends Error { name = "PolicyRefusal"; }
export function guarded(input) {
  if (input.id === "refused") throw new PolicyRefusal("not this one");
  if (input.id === "reason") throw Object.assign(new Error("closed"), { reason: "closed for the night" });
  throw new TypeError("a plain failure");
}`,
      },
    );
    expect(await tools.lookup!({ id: "x" })).toEqual({ id: "x", depth: 1, run: run.runId, signal: true });
    for (const id of ["refused", "reason", "plain"]) await rejection(tools.guarded!({ id }));
    expect(run.liveLog.slice(1).map((line) => [line.error, line.denied ?? false])).toEqual([
      ["not this one", true],
      ["closed", true],
      ["a plain failure", false],
    ]);
  });

  it("a connector sends its operation with the connection's own auth; no secret reaches a line", async ({ expect }) => {
    const connector = (auth: string) => `
base_url = "${origin}"
headers = { Accept = "application/json" }
auth = ${auth}

[operations.similar]
description = "Pages like url."
input = { url = "string", num_results = "integer?" }
defaults = { num_results = 2 }
method = "POST"
path = "/findSimilar"
body = { url = "{url}", numResults = "{num_results}" }
results = "$.results[*]"
fields = { title = "title", url = "url" }
limit = "{num_results}"

[operations.echo]
input = { id = "string" }
path = "/echo/records/{id}"
`;
    const toml = `
[live]
allowed_env = ["EXA_API_KEY"]
record = "live.jsonl"

[tools.similar]
connector = "./exa.toml"
operation = "similar"
description = "Find similar pages."

[tools.by_query_key]
connector = "./query.toml"
operation = "echo"

[tools.by_bearer]
connector = "./bearer.toml"
operation = "echo"
`;
    const { tools, run, dir } = await runOf(
      toml,
      {
        "exa.toml": connector(`{ type = "header", name = "x-api-key", env = "EXA_API_KEY" }`),
        "query.toml": connector(`{ type = "query", name = "api_key", env = "EXA_API_KEY" }`),
        "bearer.toml": connector(`{ type = "bearer", env = "EXA_API_KEY" }`),
      },
      { env: { EXA_API_KEY: EXA_KEY } },
    );
    expect(await tools.similar!({ url: "https://tidewater.example/" })).toEqual([
      { title: "Matthew Nowell - Director, Tidewater Holdings", url: "https://tidewater.example/people/matthew-nowell" },
      { title: "Harbour plan approved", url: "https://news.example/2024/03/harbour" },
    ]);
    const byQuery = (await tools.by_query_key!({ id: "r1" })) as { query: Record<string, string>; headers: Record<string, string> };
    expect([byQuery.query.api_key, byQuery.headers.accept]).toEqual([EXA_KEY, "application/json"]);
    const byBearer = (await tools.by_bearer!({ id: "r2" })) as { headers: Record<string, string> };
    expect(byBearer.headers.authorization).toBe(`Bearer ${EXA_KEY}`);
    const record = readFileSync(join(dir, "live.jsonl"), "utf8");
    expect(record).not.toContain(EXA_KEY);
    expect(record).toContain("[redacted:EXA_API_KEY]");
    expect(run.liveLog[1]!.request).toEqual({ method: "GET", url: `${origin}/echo/records/r1?api_key=[redacted:EXA_API_KEY]` });
    expect(JSON.stringify(run.liveLog)).not.toContain(EXA_KEY);
    const definitions = await run.toolDefinitions();
    expect(definitions[0]).toMatchObject({ function: { name: "similar", description: "Find similar pages." } });
  });

  it("a tool whose variable is not set is refused before any request", async ({ expect }) => {
    const { tools } = await runOf(
      `[live]\nallowed_env = ["UNSET_KEY_FOR_TEST"]\n[tools.s]\nurl = "${origin}/echo"\nheaders = { X-Key = "$UNSET_KEY_FOR_TEST" }\n`,
      {},
      { env: {} },
    );
    const made = requestsFrom();
    expect(await rejection(tools.s!({}))).toMatchObject({
      code: "live_env_missing",
      message: "s: UNSET_KEY_FOR_TEST is not set (no request was made)",
    });
    expect(made()).toEqual([]);
  });
});

describe("the rules around declared tools", () => {
  it("a pre_tool_call rule rewrites a declared tool's input: the record shows input_asked and input_sent", async ({ expect }) => {
    const { tools, run, dir } = await runOf(
      `
[live]
record = "{run_dir}/live.jsonl"

[vendors]
search = "^search$"

[[hooks.pre_tool_call]]
vendor = "search"
handlers = [{ type = "callable", target = "./rules.mjs#cap", name = "cap" }]

[[hooks.post_tool_call]]
matcher = "^search$"
handlers = [{ type = "callable", target = "./rules.mjs#note", name = "note" }]

[tools.search]
input = { query = "string", limit = "integer?" }
defaults = { limit = 10 }
url = "${origin}/echo/search?q={query}&limit={limit}"
`,
      {
        "rules.mjs": `
export function cap(event) {
  return { decision: "rewrite", updated_input: { ...event.tool_input, query: event.tool_input.query.trim(), limit: 3 }, additional_context: "capped at 3" };
}
export function note(event) { return "seen by " + event.vendor; }`,
      },
      { runId: "run-rewrite" },
    );
    const shown = (await tools.search!({ query: "  harbour  " })) as { query: Record<string, string>; hook_context: string[] };
    expect(shown.query).toEqual({ q: "harbour", limit: "3" });
    expect(shown.hook_context).toEqual(["[hook cap] capped at 3", "[hook note] seen by search"]);
    const [line] = lines(join(dir, "runs/run-rewrite/live.jsonl"));
    expect(line).toMatchObject({
      run_id: "run-rewrite",
      tool: "search",
      vendor: "search",
      input_asked: { query: "  harbour  " },
      input_sent: { query: "harbour", limit: 3 },
      request: { method: "GET", url: `${origin}/echo/search?q=harbour&limit=3` },
      result_shown: { hook_context: ["[hook cap] capped at 3", "[hook note] seen by search"] },
      replayed: false,
    });
    expect(line!.result_raw).not.toHaveProperty("hook_context");
    expect(typeof line!.elapsed).toBe("number");
  });

  it("input_asked is the input as the agent gave it: a copy as structuredClone makes one, whatever a rule does to the input", async ({
    expect,
  }) => {
    const { tools, run } = await runOf(
      `
[[hooks.pre_tool_call]]
handlers = [{ type = "callable", target = "./rules.mjs#scribble" }]

[tools.echo]
input = { type = "object", properties = {} }
callable = "./echo.mjs#echo"
`,
      {
        "rules.mjs": `export function scribble(event) { for (const key of Object.keys(event.tool_input)) event.tool_input[key] = "scribbled"; }`,
        "echo.mjs": `export const echo = (input) => input;`,
      },
    );
    const asked = async (input: Record<string, unknown>) => {
      const expected = structuredClone(input);
      await tools.echo!(input);
      return { got: run.liveLog.at(-1)!.input_asked, expected };
    };
    await fc.assert(
      fc.asyncProperty(fc.dictionary(fc.string(), fc.jsonValue(), { maxKeys: 5 }), async (input) => {
        const { got, expected } = await asked(input);
        expect(got).toStrictEqual(expected);
      }),
      { numRuns: 200 },
    );
    // What JSON cannot say is kept as structuredClone keeps it: a shared object stays shared, a Date a Date,
    // a hole a hole, a __proto__ key a key.
    const shared = { n: 1 };
    const sharing = await asked({ a: shared, b: [shared] });
    expect(sharing.got).toStrictEqual(sharing.expected);
    const got = sharing.got as { a: object; b: object[] };
    expect(got.a).toBe(got.b[0]);
    for (const input of [{ when: new Date(0) }, { holes: [1, , 3] }, JSON.parse('{"__proto__": {"x": 1}}') as Record<string, unknown>]) {
      const { got, expected } = await asked(input);
      expect(got).toStrictEqual(expected);
      expect(Object.getPrototypeOf(got)).toBe(Object.prototype);
    }
  });

  it("a denied call is a line with denied: true and no input_sent; the tool is never called", async ({ expect }) => {
    const { tools, run } = await runOf(`
[[hooks.pre_tool_call]]
matcher = "^search$"
handlers = [{ type = "deny", reason = "searching is closed" }]

[tools.search]
input = { query = "string" }
url = "${origin}/echo?q={query}"
`);
    const made = requestsFrom();
    const error = await rejection(tools.search!({ query: "x" }));
    expect(error).toBeInstanceOf(HookDenied);
    expect(made()).toEqual([]);
    expect(run.liveLog).toMatchObject([
      { tool: "search", input_asked: { query: "x" }, error: "denied: searching is closed", denied: true },
    ]);
    expect(run.liveLog[0]).not.toHaveProperty("input_sent");
  });

  it("a tool's own vendor is carried by its events; run.tools({ vendor }) gives one to tools that name none", async ({ expect }) => {
    const dir = folder({
      "gateway-hooks.toml": `
[[hooks.pre_tool_call]]
vendor = "exa"
handlers = [{ type = "deny", reason = "exa is off today" }]

[[hooks.post_tool_call]]
handlers = [{ type = "callable", target = "./v.mjs#vendor", name = "vendor" }]

[tools.keyed]
vendor = "exa"
url = "${origin}/items"

[tools.plain]
url = "${origin}/items"
results = "$.total"
`,
      "v.mjs": "export const vendor = (event) => `vendor ${event.vendor}`;",
    });
    const run = await HookRun.fromConfig(join(dir, "gateway-hooks.toml"), { cwd: dir });
    const tools = await run.tools({ vendor: "search" });
    expect(await rejection(tools.keyed!({}))).toMatchObject({ reason: "exa is off today" });
    expect(await tools.plain!({})).toEqual({ result: [4], hook_context: ["[hook vendor] vendor search"] });
    expect(run.liveLog.map((line) => [line.tool, line.vendor, line.denied ?? false])).toEqual([
      ["keyed", "exa", true],
      ["plain", "search", false],
    ]);
  });

  it("LiveTools.fromConfig builds a file's tools for an existing run, under that run's rules", async ({ expect }) => {
    const dir = folder({ "tools.toml": `[tools.items]\nurl = "${origin}/items"\nresults = "$.items[*].id"\n` });
    const run = new HookRun({ cwd: dir }).on("post_tool_call", () => "from code");
    const live = await LiveTools.fromConfig(join(dir, "tools.toml"), run);
    expect(await live.tools().items!({})).toEqual({ result: [1, 2, 3, 4], hook_context: ["[hook function] from code"] });
    expect(run.liveLog).toHaveLength(1);
    expect(live.log).toBe(run.liveLog);
  });
});

describe("record, then replay without the network", () => {
  const file = `
[live]
record = "{run_dir}/live.jsonl"
replay = "{replay}"
allow_private = true

[[hooks.PreToolUse]]
handlers = [{ type = "alias" }]
[[hooks.PostToolUse]]
handlers = [{ type = "alias" }]

[tools.web_search]
input = { query = "string", max_results = "integer?" }
defaults = { max_results = 2 }
url = "ORIGIN/html/?q={query}"
parse = "regex"
pattern = '<a[^>]+class="result__a"[^>]+href="(?<url>[^"]+)"[^>]*>(?<title>.*?)</a>.*?<a[^>]+class="result__snippet"[^>]*>(?<snippet>.*?)</a>'
fields = { title = "title", url = { from = "url", query_param = "uddg" }, snippet = "snippet" }
limit = "{max_results}"

[tools.web_fetch]
input = { url = "string" }
url = "{url}"
parse = "text"

[tools.counter]
url = "ORIGIN/counter"

[tools.missing]
url = "ORIGIN/status/404"
`;
  const seeds = [
    { type: "person_name", value: "Matthew Nowell", identity: "subject" },
    { type: "company", value: "Tidewater Holdings", identity: "subject" },
  ];
  const aliasKey = "ab".repeat(32);

  it("gives identical result_shown lines, answers repeated calls in order, and refuses an unrecorded call by name", async ({ expect }) => {
    const dir = folder({});
    const write = (replay: string) =>
      writeFileSync(join(dir, "gateway-hooks.toml"), file.replaceAll("ORIGIN", origin).replace("{replay}", replay));
    /** One scripted agent: the same calls, in alias space, each run. */
    async function agent(run: HookRun) {
      await run.seed(seeds);
      const tools = await run.tools();
      const subject = run.legend().entries.find((entry) => entry.value === "Matthew Nowell")!.alias;
      const outcomes: unknown[] = [];
      for (const call of [
        () => tools.web_search!({ query: subject }),
        () => tools.web_fetch!({ url: `${origin}/article` }),
        () => tools.counter!({}),
        () => tools.counter!({}),
        () => tools.missing!({}),
      ])
        outcomes.push(await call().catch((error: Error) => ({ error: error.message })));
      return outcomes;
    }

    write("");
    const first = await HookRun.fromConfig(join(dir, "gateway-hooks.toml"), { cwd: dir, runId: "run-live", aliasKey });
    const live = await agent(first);
    const recorded = lines(join(dir, "runs/run-live/live.jsonl"));
    expect(recorded.map((line) => [line.tool, line.replayed])).toEqual([
      ["web_search", false],
      ["web_fetch", false],
      ["counter", false],
      ["counter", false],
      ["missing", false],
    ]);
    // The raw answer holds the real name; what the agent was shown holds its alias.
    expect(JSON.stringify(recorded[0]!.result_raw)).toContain("Matthew Nowell");
    expect(JSON.stringify(recorded[0]!.result_shown)).not.toContain("Nowell");
    expect(recorded[0]!.input_sent).toEqual({ query: "Matthew Nowell", max_results: 2 });

    // The network is gone: the server is closed and any fetch would be caught here.
    write("runs/run-live/live.jsonl");
    const fetches: string[] = [];
    vi.stubGlobal("fetch", async (url: unknown) => {
      fetches.push(String(url));
      throw new Error("the network is unavailable");
    });
    try {
      const second = await HookRun.fromConfig(join(dir, "gateway-hooks.toml"), { cwd: dir, runId: "run-replay", aliasKey });
      const replayed = await agent(second);
      expect(replayed).toEqual(live);
      const again = lines(join(dir, "runs/run-replay/live.jsonl"));
      expect(again.map((line) => line.result_shown)).toEqual(recorded.map((line) => line.result_shown));
      expect(again.map((line) => line.error)).toEqual(recorded.map((line) => line.error));
      expect(again.every((line) => line.replayed)).toBe(true);
      expect(replayed.slice(2, 4)).toEqual([{ n: 1 }, { n: 2 }]);
      // A third identical call, and a call with another input, were never recorded.
      const tools = await second.tools();
      const third = await rejection(tools.counter!({}));
      expect(third).toMatchObject({ code: "live_replay_unrecorded" });
      expect(third.message).toContain("counter: replay has no recorded answer for this input (it was recorded 2 time(s); this is call 3)");
      const other = await rejection(tools.web_fetch!({ url: `${origin}/elsewhere` }));
      expect(other).toMatchObject({ code: "live_replay_unrecorded" });
      expect(other.message).toMatch(/^web_fetch: replay has no recorded answer/);
      expect(fetches).toEqual([]);
    } finally {
      vi.unstubAllGlobals();
    }
  });
});

/**
 * The vendors' documented tool shapes, as JSON schemas. OpenAI's Chat Completions `tools[]` item
 * (ChatCompletionTool: `type: "function"`, `function: { name, description?, parameters?, strict? }`,
 * name "a-z, A-Z, 0-9, or contain underscores and dashes, with a maximum length of 64",
 * parameters "described as a JSON Schema object"); Anthropic's Messages `tools[]` item (Tool: `name`,
 * `description?`, `input_schema: { type: "object", properties?, required? }`, plus `cache_control`, `type: "custom"`).
 */
const VENDOR_SHAPES = {
  openai: {
    type: "object",
    required: ["type", "function"],
    additionalProperties: false,
    properties: {
      type: { const: "function" },
      function: {
        type: "object",
        required: ["name"],
        additionalProperties: false,
        properties: {
          name: { type: "string", pattern: "^[a-zA-Z0-9_-]{1,64}$" },
          description: { type: "string" },
          parameters: { type: "object" },
          strict: { type: ["boolean", "null"] },
        },
      },
    },
  },
  anthropic: {
    type: "object",
    required: ["name", "input_schema"],
    additionalProperties: false,
    properties: {
      name: { type: "string", pattern: "^[a-zA-Z0-9_-]{1,64}$" },
      description: { type: "string" },
      type: { enum: ["custom", null] },
      cache_control: { type: ["object", "null"] },
      input_schema: {
        type: "object",
        required: ["type"],
        properties: {
          type: { const: "object" },
          properties: { type: ["object", "null"] },
          required: { type: ["array", "null"], items: { type: "string" } },
        },
      },
    },
  },
} as const;

describe("tool definitions for a model", () => {
  it("gives OpenAI's function shape by default and Anthropic's tool shape on request", async ({ expect }) => {
    const { run } = await runOf(
      `
[tools.web_search]
description = "Open web search."
input = { query = "string: The query.", max_results = "integer?: At most this many.", tags = "string[]?" }
defaults = { max_results = 10 }
url = "https://x.test/?q={query}"

[tools.lookup]
callable = "./t.mjs#lookup"
input = { type = "object", properties = { id = { type = "string", pattern = "^[a-z0-9]+$" } }, required = ["id"] }
`,
      { "t.mjs": "export const lookup = (input) => input;" },
    );
    const parameters = {
      type: "object",
      properties: {
        query: { type: "string", description: "The query." },
        max_results: { type: "integer", description: "At most this many.", default: 10 },
        tags: { type: "array", items: { type: "string" } },
      },
      required: ["query"],
    };
    expect(await run.toolDefinitions()).toEqual([
      { type: "function", function: { name: "web_search", description: "Open web search.", parameters } },
      {
        type: "function",
        function: {
          name: "lookup",
          parameters: { type: "object", properties: { id: { type: "string", pattern: "^[a-z0-9]+$" } }, required: ["id"] },
        },
      },
    ]);
    expect((await run.toolDefinitions("anthropic"))[0]).toEqual({
      name: "web_search",
      description: "Open web search.",
      input_schema: parameters,
    });
    await expect(run.toolDefinitions("gemini" as "openai")).rejects.toThrow(/unknown shape "gemini"/);
    for (const shape of ["openai", "anthropic"] as const) {
      const vendor = new Validator(VENDOR_SHAPES[shape] as never, "2020-12", false);
      for (const definition of await run.toolDefinitions(shape)) {
        expect(vendor.validate(definition).errors, `${shape} ${JSON.stringify(definition)}`).toEqual([]);
        // The schema inside is a working JSON schema: it takes a good input and refuses a bad one.
        const schema = "function" in definition ? definition.function.parameters : definition.input_schema;
        const input = new Validator(schema as never, "2020-12", false);
        expect(input.validate({ query: "x", id: "abc" }).valid).toBe(true);
        expect(input.validate({}).valid).toBe(false);
      }
    }
    // A JSON-schema input is enforced as written.
    expect(await rejection((await run.tools()).lookup!({ id: "NOT OK" }))).toMatchObject({ code: "live_input_invalid" });
  });
});

describe("round 5, finding 2: a secret goes only to an origin the file names", () => {
  const keyed = { env: { EXA_API_KEY: EXA_KEY } };

  it("refuses at load a tool whose URL the input chooses and that reads a variable, in a header or a connector's auth", async ({
    expect,
  }) => {
    const whole = await loadError(
      `[live]\nallowed_env = ["EXA_API_KEY"]\n[tools.fetch]\ninput = { url = "string" }\nurl = "{url}"\nheaders = { x-api-key = "$EXA_API_KEY" }\n`,
    );
    expect([whole.code, whole.path, whole.line]).toEqual(["rules_env_not_allowed", "tools.fetch.headers.x-api-key", 6]);
    expect(whole.message).toContain("the input chooses where it goes");
    // A hole right after the host extends it: `https://api.example.test{path}` fixes no origin either.
    const extended = await loadError(
      `[live]\nallowed_env = ["EXA_API_KEY"]\n[tools.get]\ninput = { path = "string" }\nurl = "https://api.example.test{path}"\nheaders = { Authorization = "Bearer $EXA_API_KEY" }\n`,
    );
    expect([extended.code, extended.path]).toEqual(["rules_env_not_allowed", "tools.get.headers.Authorization"]);
    // A fixed origin with holes after it is fine, and so is a {url} tool that reads nothing.
    await runOf(
      `[live]\nallowed_env = ["EXA_API_KEY"]\n[tools.get]\ninput = { path = "string" }\nurl = "https://api.example.test/{path}"\nheaders = { x-api-key = "$EXA_API_KEY" }\n[tools.fetch]\ninput = { url = "string" }\nurl = "{url}"\n`,
      {},
      keyed,
    );
  });

  it("keeps a connector's calls on its base_url's origin: a path hole cannot extend the host", async ({ expect }) => {
    const { tools } = await runOf(
      `[live]\nallowed_env = ["EXA_API_KEY"]\n[tools.op]\nconnector = "./c.toml"\noperation = "get"\n`,
      {
        "c.toml": `base_url = "https://api.example.test"\nauth = { type = "header", name = "x-api-key", env = "EXA_API_KEY" }\n[operations.get]\ninput = { p = "string" }\npath = "{p}"\nparse = "text"\n`,
      },
      keyed,
    );
    // `https://api.example.test` + `.evil.test`: the key would go to a host the input chose. Refused before any request.
    const error = (await rejection(tools.op!({ p: ".evil.test" }))) as LiveToolError;
    expect([error.code, error.message]).toEqual([
      "live_url_refused",
      "op: the input would change the template's origin https://api.example.test to https://api.example.test.evil.test",
    ]);
  });
});

/**
 * Round-5 finding 8: a query key spelled the way URLSearchParams spells it. A connector's `auth` of type `query`
 * sets the key with URLSearchParams, which encodes `~ ! ' ( )` and writes a space as `+`, where encodeURIComponent
 * (the redactor's second spelling) does not: such a key stood in the record line's `request.url` and in an echo of
 * the raw query as it was sent.
 */
describe("round 5, finding 8: a query key is redacted however the query spells it", () => {
  it("leaves no spelling of a key with ~, !, ', (, ) and a space in the record", async ({ expect }) => {
    const key = "sk~live!('quoted') key 42";
    const { tools, run, dir } = await runOf(
      `[live]\nallowed_env = ["EXA_API_KEY"]\nrecord = "live.jsonl"\n[tools.echo]\nconnector = "./q.toml"\noperation = "echo"\n`,
      {
        "q.toml": `base_url = "${origin}"\nauth = { type = "query", name = "api_key", env = "EXA_API_KEY" }\n[operations.echo]\ninput = { id = "string" }\npath = "/echo/records/{id}"\n`,
      },
      { env: { EXA_API_KEY: key } },
    );
    const echoed = (await tools.echo!({ id: "r1" })) as { query: Record<string, string>; rawQuery: string };
    // The server got the key; the raw query spells it the URLSearchParams way.
    expect(echoed.query.api_key).toBe(key);
    const formSpelling = new URLSearchParams({ k: key }).toString().slice(2);
    expect(echoed.rawQuery).toBe(`?api_key=${formSpelling}`);
    const record = readFileSync(join(dir, "live.jsonl"), "utf8");
    for (const spelling of [key, encodeURIComponent(key), formSpelling, JSON.stringify(key).slice(1, -1)]) {
      expect(record).not.toContain(spelling);
    }
    expect(run.liveLog[0]!.request).toEqual({ method: "GET", url: `${origin}/echo/records/r1?api_key=[redacted:EXA_API_KEY]` });
  });
});

/**
 * Round-5 finding 9: a page against the author's pattern. JavaScript's RegExp backtracks and a match cannot be
 * interrupted: the DuckDuckGo example's own pattern took 2.5 s on 16 KiB of result links with no snippet, 128 s on
 * 64 KiB, and a page may be 2 MiB, so a page's writer held the agent's process (the tool's timeout could not fire on
 * a blocked thread). The pattern now runs off the thread, stopped at the tool's timeout.
 */
describe("round 5, finding 9: a page written against the author's pattern", () => {
  it("ends at the tool's timeout as live_timeout, and the process stays free meanwhile", async ({ expect }) => {
    const pattern = readFileSync(join(import.meta.dirname, "../../examples/hooks/duckduckgo.toml"), "utf8").match(/^pattern = (.*)$/m)![1]!;
    const { tools, run } = await runOf(
      `[tools.search]\nurl = "${origin}/result-links"\nparse = "regex"\npattern = ${pattern}\ntimeout = 1\n`,
    );
    let ticks = 0;
    const ticking = setInterval(() => ticks++, 50);
    const error = (await rejection(tools.search!({}))) as LiveToolError;
    clearInterval(ticking);
    expect([error.code, error.message]).toEqual(["live_timeout", "search: no answer within 1 s"]);
    // The thread answered timers while the pattern ran.
    expect(ticks).toBeGreaterThan(5);
    expect(run.liveLog[0]!.error_raw).toMatchObject({ code: "live_timeout" });
  });

  it("still gives one object per match off the thread", async ({ expect }) => {
    const { tools } = await runOf(
      `[tools.links]\nurl = "${origin}/result-links"\nparse = "regex"\npattern = '<a class="(?<kind>[^"]+)" href="(?<href>[^"]+)">(?<text>[^<]*)</a>'\nlimit = 2\n`,
    );
    expect(await tools.links!({})).toEqual([
      { kind: "result__a", href: "x", text: "t" },
      { kind: "result__a", href: "x", text: "t" },
    ]);
  });
});

/**
 * Round-5 finding 11: a URL the input chose, on the agent's own machine or network. A `{url}` tool fetched whatever
 * the model named, and followed redirects anywhere, so a page the model read could have the agent fetch its cloud
 * metadata (169.254.169.254), a local admin port or a LAN device and hand the answer to the model.
 */
describe("round 5, finding 11: a URL the input chose, on the agent's own machine or network", () => {
  it("is refused before any request, by address or by what the name resolves to, unless [live].allow_private is set", async ({
    expect,
  }) => {
    const file = (allow: string) => `${allow}[tools.fetch]\ninput = { url = "string" }\nurl = "{url}"\nparse = "text"\n`;
    const { tools, run } = await runOf(file(""));
    const made = requestsFrom();
    const port = new URL(origin).port;
    for (const url of [
      `${origin}/article`,
      `http://localhost:${port}/article`,
      `http://[::1]:${port}/article`,
      "http://169.254.169.254/latest/meta-data/",
      "http://10.0.0.1/",
      "http://[::ffff:127.0.0.1]/",
    ]) {
      const error = (await rejection(tools.fetch!({ url }))) as LiveToolError;
      expect([error.code, error.message], url).toEqual([
        "live_url_refused",
        expect.stringMatching(/^fetch: \S+ is a private, loopback or link-local address \(\S+\); \[live\]\.allow_private lets/),
      ]);
    }
    expect(made()).toEqual([]);
    expect(run.liveLog.every((line) => line.error_raw?.code === "live_url_refused")).toBe(true);
    // A template that names its origin is the file's own choice, and `allow_private` opens the rest.
    const fixed = await runOf(`[tools.article]\nurl = "${origin}/article"\nparse = "text"\n`);
    expect(await fixed.tools.article!({})).toMatchObject({ status: 200 });
    const allowed = await runOf(file("[live]\nallow_private = true\n"));
    expect(await allowed.tools.fetch!({ url: `${origin}/article` })).toMatchObject({ status: 200 });
    expect(await loadError(`[live]\nallow_private = "yes"\n`)).toMatchObject({ code: "rules_wrong_type", path: "live.allow_private" });
  });

  it("checks the address again as the connection is dialled, so a name that resolves elsewhere by then (DNS rebinding) is refused", async ({
    expect,
  }) => {
    // The first check is skipped here, as a name that answered a public address to it and a private one to the dial
    // would skip it: the dial's own lookup refuses, and nothing reaches the server.
    const made = requestsFrom();
    const port = new URL(origin).port;
    const dialled = fetchPublicOnly(new URL(`http://localhost:${port}/article`), {
      method: "GET",
      headers: {},
      body: undefined,
      signal: AbortSignal.timeout(5_000),
    });
    const error = await rejection(dialled);
    expect(error).toBeInstanceOf(PrivateAddressError);
    expect((error as PrivateAddressError).address).toMatch(/^(127\.0\.0\.1|::1)$/);
    expect(made()).toEqual([]);
  });

  it("reads a dial-checked response as fetch would: status, headers, body, a bodiless status, a sent body, a stop", async ({ expect }) => {
    const allowAll = () => false;
    const request = (path: string, method = "GET", body?: string, signal = AbortSignal.timeout(5_000)) =>
      fetchDialChecked(
        new URL(`${origin}${path}`.replace("127.0.0.1", "localhost")),
        { method, headers: body ? { "content-type": "text/plain" } : {}, body, signal },
        allowAll,
      );
    const [checked, plain] = [await request("/article"), await fetch(`${origin}/article`)];
    expect([checked.status, checked.headers.get("content-type"), await checked.text()]).toEqual([
      plain.status,
      plain.headers.get("content-type"),
      await plain.text(),
    ]);
    const missing = await request("/status/404");
    expect([missing.status, await missing.json()]).toEqual([404, { error: "no such record" }]);
    const made = requestsFrom();
    await (await request("/counter", "POST", "hello")).text();
    expect(made()).toMatchObject([{ method: "POST", body: "hello", headers: { "content-type": "text/plain" } }]);
    const stopping = new AbortController();
    const hanging = request("/hang", "GET", undefined, stopping.signal);
    setTimeout(() => stopping.abort(new Error("stopped")), 50);
    await expect(hanging).rejects.toThrow();
  });
});
