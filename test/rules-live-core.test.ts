// The declared-tools core (cli/src/rules/core/live) inside workerd: validating [live] and
// [tools], the URL template's safety, the parse modes with their bounds, and replay, so
// the gateway can run declared tools at the edge later with the same code.
import { describe, expect, it } from "vitest";
import {
  fillUrl,
  HookRun,
  LiveToolError,
  LiveTools,
  MAX_PATTERN_INPUT,
  parsePage,
  parseRules,
  ReplayBook,
  RulesFileError,
  urlTemplate,
  type HttpTool,
  type LiveLine,
} from "../cli/src/rules/core/index.ts";

const FILE = `
[live]
timeout = 5

[tools.search]
description = "Search."
input = { query = "string: The query.", n = "integer?" }
defaults = { n = 3 }
url = "https://search.example/find?q={query}&n={n}"
parse = "regex"
pattern = '<i>(?<word>[a-z]+)</i>'
limit = "{n}"
`;

function failure(run: () => unknown): unknown {
  try {
    run();
  } catch (error) {
    return error;
  }
  throw new Error("it did not throw");
}

describe("declared live tools in workerd", () => {
  it("validates [live] and [tools] with key paths and lines", () => {
    const config = parseRules(FILE, "toml", "gateway-hooks.toml");
    const [tool] = config.live!.tools as HttpTool[];
    expect([config.live!.live.timeout, tool!.name, tool!.request.url.fixedOrigin, tool!.input.required]).toEqual([
      5,
      "search",
      "https://search.example",
      ["query"],
    ]);
    const error = failure(() => parseRules(`[tools.s]\ninput = { q = "string" }\nurl = "https://x.test/{nope}"\n`, "toml", "f.toml"));
    expect(error).toBeInstanceOf(RulesFileError);
    expect(error).toMatchObject({ code: "rules_bad_template", path: "tools.s.url", line: 3 });
  });

  it("keeps a URL template's origin and path, and takes only http(s) for a whole-URL hole", () => {
    const fixed = urlTemplate("https://api.example/items/{id}?q={q}");
    expect(fillUrl("t", fixed, { id: "a/../../b", q: "x&y=1" }).href).toBe("https://api.example/items/a%2F..%2F..%2Fb?q=x%26y%3D1");
    expect(failure(() => fillUrl("t", fixed, { id: "..", q: "" }))).toMatchObject({ code: "live_url_refused" });
    const whole = urlTemplate("{url}");
    expect(fillUrl("t", whole, { url: "https://example.com/a" }).href).toBe("https://example.com/a");
    for (const url of ["file:///etc/passwd", "javascript:alert(1)", "data:text/html,x"]) {
      expect(failure(() => fillUrl("t", whole, { url }))).toBeInstanceOf(LiveToolError);
    }
  });

  it("bounds a pattern run on input size and says the page was cut", () => {
    const [tool] = parseRules(FILE, "toml").live!.tools as HttpTool[];
    const body = `<i>first</i>${" ".repeat(MAX_PATTERN_INPUT)}<i>last</i>`;
    const page = { url: "https://search.example/", status: 200, contentType: "text/html", body, truncated: false };
    expect(parsePage("search", tool!.request.parse, page, undefined)).toEqual({ result: [{ word: "first" }], truncated: true });
    const text = parsePage("fetch", { mode: "text" }, { ...page, body: "<title>T</title><script>x()</script><p>a &amp; b</p>" }, undefined);
    expect(text.result).toEqual({ url: "https://search.example/", status: 200, title: "T", text: "a & b", truncated: false });
  });

  it("answers from a recording in order, through the run's rules, and refuses what was not recorded", async () => {
    const [tool] = parseRules(FILE, "toml").live!.tools as HttpTool[];
    const recorded = (n: number): LiveLine => ({
      ts: "",
      run_id: "r",
      tool: "search",
      input_asked: { query: "x" },
      input_sent: { query: "x", n: 3 },
      result_raw: [{ word: `w${n}` }],
      elapsed: 0,
      replayed: false,
    });
    const book = ReplayBook.parse(`${JSON.stringify(recorded(1))}\n${JSON.stringify(recorded(2))}\n`, "rec.jsonl");
    const run = new HookRun().on("post_tool_call", () => "replayed in workerd");
    const written: string[] = [];
    const live = new LiveTools(run, [{ spec: tool!, execute: () => Promise.reject(new Error("the network is not used")) }], {
      settings: { allowed_env: [], timeout: 5 },
      replay: book,
      sink: { append: async (line) => void written.push(line) },
    });
    const { search } = live.tools();
    expect(await search!({ query: "x" })).toEqual({ result: [{ word: "w1" }], hook_context: ["[hook function] replayed in workerd"] });
    expect(await search!({ query: "x" })).toMatchObject({ result: [{ word: "w2" }] });
    await expect(search!({ query: "x" })).rejects.toMatchObject({ code: "live_replay_unrecorded" });
    expect(written.map((line) => JSON.parse(line).replayed)).toEqual([true, true, false]);
  });
});
