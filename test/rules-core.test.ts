// The rules engine's core (cli/src/rules/core) inside workerd: it bundles for a
// Worker and runs there unchanged — parsing with line numbers, matching, the answer
// contract and merging — so the gateway can run the same rules later.
import { describe, expect, it } from "vitest";
import {
  AliasDoor,
  buildRules,
  coreHandlerFactory,
  DenyHandler,
  HookDenied,
  HookError,
  HookRun,
  parseRules,
  RulesFileError,
  type HookEvent,
} from "../cli/src/rules/core/index.ts";

const FILE = `
[vendors]
search = "web_search"

[[hooks.PreToolUse]]
matcher = "^(delete|drop)_table$ | shell"
handlers = [{ type = "deny", reason = "destructive" }]

[[hooks.pre_tool_call]]
vendor = "search"
handlers = [{ type = "deny", reason = "searches are read from the cache", async = true }]
`;

describe("the rules core in workerd", () => {
  it("parses a file, builds its deny rules and runs them around tools", async () => {
    const config = parseRules(FILE, "toml", "gateway-hooks.toml");
    const run = new HookRun({ rules: await buildRules(config, coreHandlerFactory()), vendors: config.vendors });
    const seen: HookEvent[] = [];
    run.on("post_tool_call", (event) => {
      seen.push(event);
      return { additional_context: "checked in workerd", findings: [{ check: "post" }] };
    });
    const tools = run.wrapTools({ delete_table: async () => "dropped", web_search: async () => ({ hits: 1 }) });
    const denied = await tools.delete_table({ name: "users" }).catch((error: unknown) => error);
    expect(denied).toBeInstanceOf(HookDenied);
    expect(denied).toMatchObject({ reason: "destructive" });
    expect(await tools.web_search({ q: "x" })).toEqual({ hits: 1, hook_context: ["[hook function] checked in workerd"] });
    await run.settled();
    expect(run.asyncAnswers).toMatchObject([{ hook: "deny", answer: { decision: "deny" } }]);
    expect(seen.map((event) => [event.tool_name, event.error ?? null])).toEqual([
      ["delete_table", "denied: destructive"],
      ["web_search", null],
    ]);
    expect(run.findings).toHaveLength(2);
  });

  it("names the key path and line of a mistake", () => {
    let error: unknown;
    try {
      parseRules(`[[hooks.post_tool_call]]\n\nhandlers = [{ type = "deny" }]\n`, "toml", "gateway-hooks.toml");
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(RulesFileError);
    expect(error).toMatchObject({ code: "rules_handler_not_allowed", path: "hooks.post_tool_call[0].handlers[0].type", line: 3 });
  });

  it("refuses handlers that need Node, and two rewriters", async () => {
    const config = parseRules(`[[hooks.pre_tool_call]]\nhandlers = [{ type = "command", command = "true" }]\n`, "toml");
    await expect(buildRules(config, coreHandlerFactory())).rejects.toMatchObject({ code: "rules_handler_unavailable" });
    const run = new HookRun();
    run.on("pre_tool_call", [
      () => ({ decision: "rewrite", updated_input: { a: 1 } }),
      () => ({ decision: "rewrite", updated_input: { a: 2 } }),
    ]);
    await expect(run.wrapTools({ t: async () => 1 }).t({})).rejects.toBeInstanceOf(HookError);
    run.on("pre_tool_call", new DenyHandler("first"), { before: true });
    await expect(run.wrapTools({ t: async () => 1 }).t({})).rejects.toMatchObject({ reason: "first" });
  });

  it("runs the alias door: Web Crypto derivation matching the pinned vectors, both directions and the check", async () => {
    const vectors = (await import("../fixtures/hooks/alias-vectors.json")).default as {
      cases: {
        run_key: string;
        options: ConstructorParameters<typeof AliasDoor>[0];
        seeds: { type: string; value: string }[];
        expected: { aliases: { alias: string }[] };
      }[];
    };
    const vector = vectors.cases[0]!;
    const config = parseRules(
      `[[hooks.pre_tool_call]]\nhandlers = [{ type = "alias" }]\n[[hooks.post_tool_call]]\nhandlers = [{ type = "alias" }]\n[[hooks.run_end]]\nhandlers = [{ type = "alias" }]\n`,
      "toml",
    );
    const alias = new AliasDoor({ ...vector.options, key: vector.run_key });
    const run = new HookRun({ rules: await buildRules(config, coreHandlerFactory({ alias })), alias });
    await run.seed(vector.seeds);
    expect(run.legend().entries.map((entry) => entry.alias)).toEqual(vector.expected.aliases.map((entry) => entry.alias));
    const name = run.legend().entries[0]!.alias;
    const got: unknown[] = [];
    const tools = run.wrapTools({ lookup: async (input) => (got.push(input), `Found ${vector.seeds[0]!.value}`) });
    expect(await tools.lookup({ who: name })).toBe(`Found ${name}`);
    expect(got).toEqual([{ who: vector.seeds[0]!.value }]);
    expect((await run.end({ text: vector.seeds[0]!.value })).passed).toBe(false);
  });

  it("normalises real values as Node does: every pinned spelling rewritten, counted and mapped back alike", async () => {
    const vectors = (await import("../fixtures/hooks/alias-vectors.json")).default as {
      cases: {
        run_key: string;
        seeds: { type: string; value: string }[];
        expected: {
          spellings?: {
            inbound: { text: string; inbound: string; real_values: number }[];
            outbound: { text: string; outbound: string }[];
          };
        };
      }[];
    };
    const spelt = vectors.cases.filter((candidate) => candidate.expected.spellings);
    expect(spelt.length).toBeGreaterThanOrEqual(2);
    for (const vector of spelt) {
      const door = new AliasDoor({ key: vector.run_key });
      await door.seed(vector.seeds);
      const { inbound, outbound } = vector.expected.spellings!;
      expect(inbound.map(({ text }) => [door.toAlias(text).value, door.countReal(text)])).toEqual(
        inbound.map((spelling) => [spelling.inbound, spelling.real_values]),
      );
      expect(outbound.map(({ text }) => door.toReal(text).value)).toEqual(outbound.map((spelling) => spelling.outbound));
    }
  });
});
