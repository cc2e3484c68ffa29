// The alias door (issue 18) through the SDK: derivation pinned by
// fixtures/hooks/alias-vectors.json, variants, the three directions through
// wrapTools, session requests and run_end, the public layer, the meter, the
// legend and the bounds. Real files, real record sinks; nothing stands in.
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { describe, it } from "vitest";
import { AliasDoor, AliasError, HookDenied, HookRun, MAX_ALIAS_TEXT, MAX_SEEDS, type SeedEntity } from "../src/rules/index.ts";

const KEY = "5e".repeat(32);
const SUBJECT: SeedEntity[] = [
  { type: "person_name", value: "Matthew Nowell", identity: "subject" },
  { type: "email", value: "matthew.nowell@nowell-ltd.com", identity: "subject" },
  { type: "username", value: "mnowell", identity: "subject" },
  { type: "phone", value: "+44 20 7946 0958", identity: "subject" },
  { type: "company", value: "Nowell Ltd", identity: "nowell-ltd" },
];

/** A rules file with the door on every event, and a record handler after the inbound alias rule. */
const DOOR_FILE = `
[alias]
slugs = ["acme"]

[[hooks.pre_tool_call]]
handlers = [{ type = "alias" }]

[[hooks.pre_request]]
handlers = [{ type = "alias" }]

[[hooks.post_tool_call]]
matcher = "^[^u]"
handlers = [{ type = "alias" }]

[[hooks.post_tool_call]]
handlers = [{ type = "record", sink = "transcript.jsonl" }]

[[hooks.post_response]]
handlers = [{ type = "alias" }]

[[hooks.run_end]]
handlers = [{ type = "alias", check = "outgoing" }]
`;

async function doorRun(seeds: SeedEntity[] = SUBJECT, file = DOOR_FILE): Promise<{ run: HookRun; dir: string }> {
  const dir = mkdtempSync(join(tmpdir(), "rayrun-alias-"));
  writeFileSync(join(dir, "gateway-hooks.toml"), file);
  const run = await HookRun.fromConfig(join(dir, "gateway-hooks.toml"), { cwd: dir, aliasKey: KEY });
  await run.seed(seeds);
  return { run, dir };
}

const aliasOf = (run: HookRun, value: string) => run.legend().entries.find((entry) => entry.value === value)!.alias;

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error("it resolved");
}

/** A fixture case's spellings: each text rewritten inbound (with its real values counted), or mapped back outbound. */
interface Spellings {
  inbound: { name: string; text: string; inbound: string; real_values: number }[];
  outbound: { name: string; text: string; outbound: string }[];
}

/** What the door does to a case's spellings, in the fixture's shape; the run_end check must find each inbound one. */
function spelt(door: AliasDoor, spellings: Spellings): Spellings {
  return {
    inbound: spellings.inbound.map(({ name, text }) => {
      const found = door.check({ text }, {}).total;
      return { name, text, inbound: door.toAlias(text).value, real_values: found === door.countReal(text) ? found : -1 };
    }),
    outbound: spellings.outbound.map(({ name, text }) => ({ name, text, outbound: door.toReal(text).value })),
  };
}

describe("derivation", () => {
  it("reproduces fixtures/hooks/alias-vectors.json: aliases, attempts and every variant", async ({ expect }) => {
    const vectors = JSON.parse(readFileSync(join(import.meta.dirname, "../../fixtures/hooks/alias-vectors.json"), "utf8")) as {
      cases: {
        name: string;
        run_key: string;
        options: ConstructorParameters<typeof AliasDoor>[0];
        seeds: SeedEntity[];
        expected: { aliases: unknown[]; variants: unknown[]; spellings?: Spellings };
      }[];
    };
    expect(vectors.cases.length).toBeGreaterThanOrEqual(6);
    for (const vector of vectors.cases) {
      const door = new AliasDoor({ ...vector.options, key: vector.run_key });
      await door.seed(vector.seeds);
      const aliases = door.legend().entries.map(({ type, value, alias, attempt }) => ({ type, value, alias, attempt }));
      const { spellings, ...derivation } = vector.expected;
      expect({ name: vector.name, aliases, variants: door.variants() }).toEqual({ name: vector.name, ...derivation });
      if (spellings) expect(spelt(door, spellings)).toEqual(spellings);
    }
    const spellingCase = vectors.cases.find((vector) => vector.expected.spellings)!;
    expect(spellingCase.expected.spellings!.inbound.length).toBeGreaterThanOrEqual(14);
    // The collision case really collides: its second identity took a second draw.
    expect(vectors.cases.some((vector) => (vector.expected.aliases as { attempt: number }[]).some((alias) => alias.attempt > 0))).toBe(
      true,
    );
  });

  it("gives one identity consistent attributes, and the same aliases for the same key and seeds only", async ({ expect }) => {
    const door = new AliasDoor({ key: KEY });
    await door.seed(SUBJECT);
    const [name, email, handle, phone, company] = door.legend().entries.map((entry) => entry.alias) as string[];
    const [given, surname] = name!.split(" ") as [string, string];
    expect(email).toMatch(new RegExp(`^${given.toLowerCase()}\\.${surname.toLowerCase()}@[a-z]+-[a-z-]+\\.alias$`));
    expect(handle).toBe(`${given[0]!.toLowerCase()}${surname.toLowerCase().replace(/[^a-z]/g, "")}`);
    expect(phone).toMatch(/^\+1 999 555 01\d\d$/);
    expect(company).toMatch(/^[A-Z][\w-]+ [A-Z][\w-]+ Ltd$/);
    const again = new AliasDoor({ key: KEY });
    await again.seed(SUBJECT);
    expect(again.legend()).toEqual(door.legend());
    const other = new AliasDoor({ key: "77".repeat(32) });
    await other.seed(SUBJECT);
    expect(other.legend().entries[0]!.alias).not.toBe(name);
    expect(other.legend().run_key).toBe("77".repeat(32));
  });

  it("re-derives two identities that draw the same persona, deterministically, and IPs come from the documentation ranges", async ({
    expect,
  }) => {
    const seeds = Array.from({ length: 2000 }, (_, i) => ({ type: "person_name", value: `Subject Number${i}`, identity: `p${i}` }));
    const door = new AliasDoor({ key: KEY });
    await door.seed(seeds);
    const entries = door.legend().entries;
    expect(new Set(entries.map((entry) => entry.alias.toLowerCase())).size).toBe(2000);
    expect(entries.filter((entry) => entry.attempt > 0).length).toBeGreaterThan(0);
    // No minted name has a compound surname: half of one would map back and half not (Delphine Verity → Matthew Verity).
    expect(entries.filter((entry) => /-/.test(entry.alias))).toEqual([]);
    const companies = new AliasDoor({ key: KEY });
    await companies.seed(Array.from({ length: 500 }, (_, i) => ({ type: "company", value: `Firm${i} Ltd`, identity: `c${i}` })));
    expect(companies.legend().entries.filter((entry) => /-/.test(entry.alias))).toEqual([]);
    const ips = new AliasDoor({ key: KEY });
    await ips.seed(Array.from({ length: 50 }, (_, i) => ({ type: "ip", value: `10.0.0.${i}` })));
    for (const entry of ips.legend().entries) expect(entry.alias).toMatch(/^(192\.0\.2|198\.51\.100|203\.0\.113)\.\d+$/);
  });

  it("maps every part of a real compound surname to the persona, alone or after the given name, in the meter and the check too", async ({
    expect,
  }) => {
    const door = new AliasDoor({ key: KEY });
    await door.seed([{ type: "person_name", value: "Ann Smith-Jones" }]);
    const alias = door.legend().entries[0]!.alias;
    const text = "Ann Smith-Jones wrote to Ms Jones; Ann Smith replied. SMITH agreed.";
    const shown = door.toAlias(text).value;
    expect(shown).toBe(`${alias} wrote to Ms ${alias.split(" ")[1]}; ${alias} replied. ${alias.split(" ")[1]!.toUpperCase()} agreed.`);
    expect(door.countReal(text)).toBe(4);
    expect(door.check({ text: "Ms Jones" }, {}).findings).toEqual([
      { check: "alias_leak", kind: "person_name", where: "report.text", count: 1 },
    ]);
    // The way back is whole: the persona's surname is one word and maps to the real surname.
    expect(door.toReal(`Dear ${alias.split(" ")[1]}`).value).toBe("Dear Smith-Jones");
  });

  it("refuses bad seeds with rules_alias_bad_seed and too many with rules_alias_too_many_seeds", async ({ expect }) => {
    const door = new AliasDoor({ key: KEY });
    const bad = async (seeds: unknown) => (await rejection(door.seed(seeds as SeedEntity[]))) as AliasError;
    expect(await bad([{ type: "email", value: "not-an-email" }])).toMatchObject({
      code: "rules_alias_bad_seed",
      message: "seed 0: an email needs one @ and a domain with a dot",
    });
    expect(await bad([{ type: "person_name", value: "   " }])).toMatchObject({
      code: "rules_alias_bad_seed",
      message: "seed 0: value is empty",
    });
    expect(await bad([{ type: "Person", value: "x" }])).toMatchObject({ code: "rules_alias_bad_seed" });
    expect(await bad([{ type: "phone", value: "+44 12" }])).toMatchObject({ message: "seed 0: a phone has 7 to 15 digits" });
    expect(await bad([{ type: "person_name", value: "A B", role: "secret" }])).toMatchObject({
      message: 'seed 0: role must be "public" or "private"',
    });
    const many = Array.from({ length: MAX_SEEDS + 1 }, (_, i) => ({ type: "account", value: `acct-${i}` }));
    expect(await bad(many)).toMatchObject({
      code: "rules_alias_too_many_seeds",
      message: `a run holds at most ${MAX_SEEDS} seeds (this would make ${MAX_SEEDS + 1})`,
    });
    expect(() => new AliasDoor({ key: "short" })).toThrow(expect.objectContaining({ code: "rules_alias_bad_key" }));
    // A refused seed() leaves the door usable.
    await door.seed([{ type: "person_name", value: "Ada Byron" }]);
    expect(door.legend().entries).toHaveLength(1);
  });
});

describe("inbound: real values become aliases", () => {
  it("rewrites every variant over the whole JSON tree, keeps longer words, and the tool still gets the real name", async ({ expect }) => {
    const { run } = await doorRun();
    const name = aliasOf(run, "Matthew Nowell");
    const [given, surname] = name.split(" ") as [string, string];
    const email = aliasOf(run, "matthew.nowell@nowell-ltd.com");
    const phone = aliasOf(run, "+44 20 7946 0958");
    const company = aliasOf(run, "Nowell Ltd");
    const seen: unknown[] = [];
    const tools = run.wrapTools({
      lookup: async (input) => {
        seen.push(input);
        return {
          "Matthew Nowell": { first: "Matthew", last: "Nowell" },
          shout: "MATTHEW NOWELL",
          spaced: "matthew \n\t  nowell",
          listed: "Nowell, Matthew; M. Nowell; profile /in/nowell and /in/matthew-nowell; handle mnowell",
          obfuscated: "write to matthew.nowell [at] nowell-ltd [dot] com or matthew.nowell at nowell-ltd dot com",
          phones: ["+44 20 7946 0958", "020 7946 0958", "+44 (0)20 7946 0958", "+442079460958"],
          numeric: 442079460958,
          company: "NOWELL LTD filed late",
          longer: "Nowellian prose and Matthews",
        };
      },
    });
    const result = (await tools.lookup({ who: name })) as Record<string, unknown>;
    expect(seen).toEqual([{ who: "Matthew Nowell" }]);
    expect(result).toEqual({
      [name]: { first: given, last: surname },
      shout: name.toUpperCase(),
      spaced: name.toLowerCase(),
      listed: `${surname}, ${given}; ${given[0]}. ${surname}; profile /in/${surname.toLowerCase()} and /in/${given.toLowerCase()}-${surname.toLowerCase()}; handle ${aliasOf(run, "mnowell")}`,
      obfuscated: `write to ${email.replace("@", " [at] ").replaceAll(".alias", " [dot] alias")} or ${email.replace("@", " at ").replace(/\.alias$/, " dot alias")}`,
      phones: [phone, phone.slice(3), phone, phone.replaceAll(" ", "")],
      numeric: Number(phone.replace(/\D/g, "")),
      company: `${company.toUpperCase()} filed late`,
      longer: "Nowellian prose and Matthews",
    });
    expect(run.summary().leak_through_inbound).toBe(0);
  });

  it("rewrites a tool's error text, and a record handler after the rule stores alias-space arguments only", async ({ expect }) => {
    const { run, dir } = await doorRun();
    const name = aliasOf(run, "Matthew Nowell");
    const tools = run.wrapTools({
      lookup: async (input) => {
        throw new RangeError(`no record for ${String(input.who)} (matthew.nowell@nowell-ltd.com)`);
      },
    });
    const error = (await rejection(tools.lookup({ who: name }))) as Error;
    expect(error).toBeInstanceOf(RangeError);
    expect(error.message).toBe(`no record for ${name} (${aliasOf(run, "matthew.nowell@nowell-ltd.com")})`);
    const line = JSON.parse(readFileSync(join(dir, "transcript.jsonl"), "utf8").trim()) as Record<string, unknown>;
    expect(line.tool_input).toEqual({ who: name });
    expect(line.error).toBe(error.message);
    expect(JSON.stringify(line)).not.toMatch(/nowell/i);
  });

  it('keeps the real arguments for the record with args = "keep"', async ({ expect }) => {
    const { run, dir } = await doorRun(
      SUBJECT,
      `[[hooks.pre_tool_call]]\nhandlers = [{ type = "alias" }]\n[[hooks.post_tool_call]]\nhandlers = [{ type = "alias", args = "keep" }]\n[[hooks.post_tool_call]]\nhandlers = [{ type = "record", sink = "t.jsonl" }]\n`,
    );
    await run.wrapTools({ lookup: async () => "ok" }).lookup({ who: aliasOf(run, "Matthew Nowell") });
    expect(JSON.parse(readFileSync(join(dir, "t.jsonl"), "utf8")).tool_input).toEqual({ who: "Matthew Nowell" });
  });

  it("meters real values that reach the agent where no alias rule rewrote them", async ({ expect }) => {
    const { run } = await doorRun();
    const tools = run.wrapTools({ unguarded: async () => "Matthew Nowell, +44 20 7946 0958", guarded: async () => "Matthew Nowell" });
    expect(await tools.unguarded({})).toBe("Matthew Nowell, +44 20 7946 0958");
    expect(await tools.guarded({})).toBe(aliasOf(run, "Matthew Nowell"));
    expect(run.summary().leak_through_inbound).toBe(2);
  });

  it("puts a post_tool_call rule's context and denial reason through the door and the meter, like the result", async ({ expect }) => {
    const { run } = await doorRun();
    const name = aliasOf(run, "Matthew Nowell");
    // Ahead of the alias rule, a rule that echoes what the tool returned (the real name) to the agent.
    run.on("post_tool_call", (event) => ({ additional_context: `saw ${String(event.tool_result)}` }), { name: "echo", before: true });
    run.on("post_tool_call", (event) => ({ decision: "deny", reason: `refused: ${String(event.tool_result)}` }), {
      name: "refuser",
      matcher: "^refused",
      before: true,
    });
    const tools = run.wrapTools({
      guarded: async () => "Matthew Nowell",
      unguarded: async () => "Matthew Nowell",
      refused: async () => "Matthew Nowell",
    });
    expect(await tools.guarded({})).toBe(`${name}\n\n[hook echo] saw ${name}`);
    expect(run.summary().leak_through_inbound).toBe(0);
    // No alias rule guards it: result and context reach the agent as they are, and both are counted.
    expect(await tools.unguarded({})).toBe("Matthew Nowell\n\n[hook echo] saw Matthew Nowell");
    expect(run.summary().leak_through_inbound).toBe(2);
    // The deny came before the alias rule ran, and its reason is still in alias space.
    const denied = (await rejection(tools.refused({}))) as HookDenied;
    expect(denied).toBeInstanceOf(HookDenied);
    expect(denied.reason).toBe(`refused: ${name}`);
    expect(run.summary().leak_through_inbound).toBe(2);
  });

  it("meters a pre_tool_call rule's context and deny reason, which the door leaves as written (it maps out on pre events)", async ({
    expect,
  }) => {
    const { run } = await doorRun();
    const name = aliasOf(run, "Matthew Nowell");
    // After the file's outbound alias rule: this rule sees the real name the agent's alias mapped to.
    run.on("pre_tool_call", (event) =>
      event.tool_input?.stop
        ? { decision: "deny", reason: `not about ${String(event.tool_input.who)}` }
        : { additional_context: `asked about ${String(event.tool_input?.who)}` },
    );
    const tools = run.wrapTools({ lookup: async () => "ok" });
    expect(await tools.lookup({ who: name })).toBe("ok\n\n[hook function] asked about Matthew Nowell");
    expect(run.summary().leak_through_inbound).toBe(1);
    const denied = (await rejection(tools.lookup({ who: name, stop: true }))) as HookDenied;
    expect(denied.reason).toBe("not about Matthew Nowell");
    expect(run.summary().leak_through_inbound).toBe(2);
  });

  it("rewrites a 5 MiB result with 10,000 seeds", async ({ expect }) => {
    const seeds: SeedEntity[] = Array.from({ length: 10_000 }, (_, i) => ({
      type: i % 2 ? "email" : "person_name",
      value: i % 2 ? `person${i}@example${i}.org` : `Given${i} Family${i}`,
      identity: `i${Math.floor(i / 2)}`,
    }));
    const { run } = await doorRun(seeds);
    const row = (i: number) => ({ id: i, owner: `Given${(i % 5000) * 2} Family${(i % 5000) * 2}`, note: "x".repeat(240) });
    const rows = Array.from({ length: 20_000 }, (_, i) => row(i));
    expect(JSON.stringify(rows).length).toBeGreaterThan(5 * 1024 * 1024);
    const result = (await run.wrapTools({ big: async () => rows }).big({})) as { owner: string }[];
    expect(result).toHaveLength(20_000);
    expect(result[3]!.owner).toBe(aliasOf(run, "Given6 Family6"));
    expect(JSON.stringify(result)).not.toMatch(/Family\d/);
  }, 120_000);

  it("refuses a result past the door's text bound rather than let it through unread", async ({ expect }) => {
    const { run } = await doorRun();
    const huge = "a".repeat(MAX_ALIAS_TEXT + 1);
    const error = (await rejection(run.wrapTools({ big: async () => huge }).big({}))) as HookDenied;
    expect(error).toBeInstanceOf(HookDenied);
    expect(error.reason).toBe(
      `rules_alias_text_too_large: the value holds more than ${MAX_ALIAS_TEXT} characters of text; the alias door reads at most that`,
    );
  });

  it("with an empty seed list, passes text through and refuses only alias-shaped arguments", async ({ expect }) => {
    const { run } = await doorRun([]);
    const tools = run.wrapTools({ echo: async (input) => input });
    expect(await tools.echo({ q: "Matthew Nowell" })).toEqual({ q: "Matthew Nowell" });
    expect(run.legend().entries).toEqual([]);
    expect(((await rejection(tools.echo({ q: "a@b-c.alias" }))) as HookDenied).reason).toBe(
      "alias door: a email alias that resolves to no seeded value",
    );
  });
});

describe("outbound: aliases become real values, or the call is refused", () => {
  it("denies an alias that resolves to nothing, and a sha256 selector", async ({ expect }) => {
    const { run } = await doorRun();
    const calls: unknown[] = [];
    const tools = run.wrapTools({ lookup: async (input) => calls.push(input) });
    const unknown = (await rejection(tools.lookup({ email: "someone.else@tidewater-wexler.alias" }))) as HookDenied;
    expect(unknown).toBeInstanceOf(HookDenied);
    expect(unknown.reason).toBe("alias door: a email alias that resolves to no seeded value");
    const phone = (await rejection(
      tools.lookup({ phone: "+1 999 555 0199" === aliasOf(run, "+44 20 7946 0958") ? "+1 999 555 0198" : "+1 999 555 0199" }),
    )) as HookDenied;
    expect(phone.reason).toBe("alias door: a phone alias that resolves to no seeded value");
    const selector = (await rejection(tools.lookup({ id: `sha256:${"ab".repeat(32)}` }))) as HookDenied;
    expect(selector.reason).toBe("alias door: a sha256 digest used as a selector");
    expect(calls).toEqual([]);
  });

  it("maps a world's stored sha256 form inbound, and refuses it as a selector outbound", async ({ expect }) => {
    const { run } = await doorRun();
    const digest = async (text: string) =>
      `sha256:${Buffer.from(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text))).toString("hex")}`;
    const real = await digest("acme:matthew.nowell@nowell-ltd.com");
    const alias = await digest(`acme:${aliasOf(run, "matthew.nowell@nowell-ltd.com")}`);
    const tools = run.wrapTools({ row: async () => ({ email_hash: real }), find: async () => "found" });
    expect(await tools.row({})).toEqual({ email_hash: alias });
    expect(((await rejection(tools.find({ email_hash: alias }))) as HookDenied).reason).toBe(
      "alias door: a sha256 digest used as a selector",
    );
  });

  it("maps path, query and body of a session request back to real values, and the response to aliases", async ({ expect }) => {
    const { run } = await doorRun();
    const name = aliasOf(run, "Matthew Nowell");
    const sent: unknown[] = [];
    const session = run.session(
      {},
      {
        requestFn: async (request) => {
          sent.push(request);
          return { status: 404, body: { error: `no person Matthew Nowell at ${request.query?.email}` } };
        },
      },
    );
    const response = await session.request("POST", `/people/${encodeURIComponent(name)}/records`, {
      query: { email: aliasOf(run, "matthew.nowell@nowell-ltd.com") },
      body: { phone: aliasOf(run, "+44 20 7946 0958"), handle: aliasOf(run, "mnowell") },
    });
    expect(sent).toEqual([
      {
        method: "POST",
        path: "/people/Matthew%20Nowell/records",
        query: { email: "matthew.nowell@nowell-ltd.com" },
        body: { phone: "+44 20 7946 0958", handle: "mnowell" },
      },
    ]);
    expect(response).toMatchObject({
      status: 404,
      body: { error: `no person ${name} at ${aliasOf(run, "matthew.nowell@nowell-ltd.com")}` },
    });
    const refused = await rejection(session.request("GET", "/people/nobody.alias"));
    expect(refused).toMatchObject({ reason: "alias door: a domain alias that resolves to no seeded value" });
  });
});

describe("the public layer", () => {
  const seeds: SeedEntity[] = [
    { type: "company", value: "Acme Corp", role: "public" },
    { type: "person_name", value: "Jane Doe", identity: "jane" },
    { type: "email", value: "jane.doe@acme.com", identity: "jane" },
    { type: "email", value: "jdoe@gmail.com", identity: "jane" },
  ];

  it("never rewrites a public seed; with public_layer_wins its domain stays real inside a private email", async ({ expect }) => {
    const { run } = await doorRun(seeds, `[alias]\npublic_layer_wins = true\n[[hooks.post_tool_call]]\nhandlers = [{ type = "alias" }]\n`);
    const email = aliasOf(run, "jane.doe@acme.com");
    expect(email).toMatch(/@acme\.com$/);
    expect(aliasOf(run, "jdoe@gmail.com")).toMatch(/@gmail\.com$/);
    const out = await run.wrapTools({ page: async () => "Jane Doe of Acme Corp (acme.com): jane.doe@acme.com" }).page({});
    expect(out).toBe(`${aliasOf(run, "Jane Doe")} of Acme Corp (acme.com): ${email}`);
  });

  it("without public_layer_wins the private email's domain is aliased, and public_mailbox_domains = [] keeps none", async ({ expect }) => {
    const { run } = await doorRun(
      seeds,
      `[alias]\npublic_mailbox_domains = []\n[[hooks.post_tool_call]]\nhandlers = [{ type = "alias" }]\n`,
    );
    expect(aliasOf(run, "jane.doe@acme.com")).toMatch(/\.alias$/);
    expect(aliasOf(run, "jdoe@gmail.com")).toMatch(/\.alias$/);
    const out = await run.wrapTools({ page: async () => "Acme Corp" }).page({});
    expect(out).toBe("Acme Corp");
  });
});

describe("run_end check", () => {
  it("fails the run with findings that name the kind and place, never the value", async ({ expect }) => {
    const { run } = await doorRun();
    const verdict = await run.end(
      { summary: `Subject: ${aliasOf(run, "Matthew Nowell")}`, people: [{ name: "M. NOWELL" }], "Matthew Nowell": true },
      { "graph.json": `{\n"a": 1,\n"b": "+44 20 7946 0958"\n}` },
    );
    expect(verdict.passed).toBe(false);
    const findings = verdict.findings.map(({ kind, where, count }) => ({ kind, where, count }));
    expect(findings).toEqual([
      { kind: "person_name", where: "report.people[0].name", count: 1 },
      { kind: "person_name", where: "report[<person_name>]", count: 1 },
      { kind: "phone", where: 'artifacts["graph.json"] line 3', count: 1 },
    ]);
    expect(verdict.reasons[0]).toBe(
      'alias check: 3 real value(s) reached the report or artifacts (person_name at report.people[0].name, person_name at report[<person_name>], phone at artifacts["graph.json"] line 3)',
    );
    expect(JSON.stringify(verdict)).not.toMatch(/nowell|7946/i);
  });

  it("reads a bracketed dotted phone and a +-joined name as the real values: rewritten, metered and failing run_end", async ({
    expect,
  }) => {
    const { run } = await doorRun();
    const name = aliasOf(run, "Matthew Nowell");
    const page = "Call (020).7946 0958 or search ?q=Matthew+Nowell&page=2";
    const tools = run.wrapTools({ guarded: async () => page, unguarded: async () => page });
    // Rewritten whole: the bracket goes with the phone, the + join stays a + join (the query stays valid).
    expect(await tools.guarded({})).toBe(
      `Call 999 555 ${aliasOf(run, "+44 20 7946 0958").slice(-4)} or search ?q=${name.replace(" ", "+")}&page=2`,
    );
    expect(run.summary().leak_through_inbound).toBe(0);
    expect(await tools.unguarded({})).toBe(page);
    expect(run.summary().leak_through_inbound).toBe(2);
    const verdict = await run.end({ notes: page });
    expect(verdict.passed).toBe(false);
    expect(verdict.findings.map(({ kind, where, count }) => ({ kind, where, count }))).toEqual([
      { kind: "phone", where: "report.notes", count: 1 },
      { kind: "person_name", where: "report.notes", count: 1 },
    ]);
  });

  it("passes a report in alias space", async ({ expect }) => {
    const { run } = await doorRun();
    const verdict = await run.end({ summary: `${aliasOf(run, "Matthew Nowell")} runs ${aliasOf(run, "Nowell Ltd")}` });
    expect(verdict).toMatchObject({ passed: true, reasons: [] });
  });
});

describe("encoded spellings stay bounded", () => {
  it("reads texts made of escape openers in time linear in their length", async ({ expect }) => {
    const door = new AliasDoor({ key: KEY });
    await door.seed(SUBJECT);
    const texts = [
      ">Nowell ".repeat(100_000),
      "\\".repeat(1_000_000),
      "\\u{1".repeat(200_000),
      "\\ud800".repeat(150_000),
      "\\xc3".repeat(250_000),
      "=C3".repeat(300_000),
      "=\n".repeat(500_000),
      "<wbr".repeat(250_000),
      "x\\nNowell".repeat(100_000),
    ];
    for (const text of texts) {
      const started = performance.now();
      door.countReal(text);
      door.toAlias(text);
      expect({ text: text.slice(0, 12), ms: performance.now() - started < 3_000 }).toEqual({ text: text.slice(0, 12), ms: true });
    }
  });
});

describe("German transliteration", () => {
  it("finds a value with umlauts as German writes it without them, for seeded values only, both ways", async ({ expect }) => {
    // This key gives Hans Müller the alias Ephraim Bergström: an alias with an umlaut, for the way back.
    const door = new AliasDoor({ key: "4e".repeat(32) });
    await door.seed([
      { type: "person_name", value: "Hans Müller", identity: "a" },
      { type: "person_name", value: "Eva Mueller", identity: "b" },
    ]);
    expect(door.legend().entries.map((entry) => entry.alias)).toEqual(["Ephraim Bergström", "Idris Musgrave"]);
    expect(door.toAlias("Hans Mueller, HANS MUELLER, Hans Muller and Eva Mueller").value).toBe(
      "Ephraim Bergström, EPHRAIM BERGSTRÖM, Ephraim Bergström and Idris Musgrave",
    );
    // A value seeded as written keeps its own phrase: `Mueller` alone is Eva's surname, not Hans's.
    expect(door.toAlias("Mr Mueller").value).toBe("Mr Musgrave");
    expect(door.toReal("Ephraim Bergstroem and Ephraim Bergstrom").value).toBe("Hans Müller and Hans Müller");
    // Nothing else starts to match: the normalisation still reads `ue` as `ue`.
    expect(door.countReal("a blue queue; Mueßer; Muellerian; Ephraim")).toBe(0);
  });
});

describe("RFC 2047 encoded-words", () => {
  const b64 = (text: string) => Buffer.from(text, "utf8").toString("base64");

  it("reads a header's encoded-words decoded and writes a changed one back in its own encoding, each word within 75 characters", async ({
    expect,
  }) => {
    const door = new AliasDoor({ key: KEY });
    await door.seed(SUBJECT);
    const alias = door.legend().entries.find((entry) => entry.value === "Matthew Nowell")!.alias;
    const long = `Re: the minutes of the meeting with Matthew Nowell about the harbour plan, and what came of it`;
    const header = `Subject: =?UTF-8?B?${b64(long.slice(0, 40))}?=\r\n =?UTF-8?B?${b64(long.slice(40))}?=`;
    expect(door.countReal(header)).toBe(1);
    const shown = door.toAlias(header).value;
    const words = shown.slice("Subject: ".length).split("\r\n ");
    expect(words.every((word) => /^=\?UTF-8\?B\?[A-Za-z0-9+/=]+\?=$/.test(word) && word.length <= 75)).toBe(true);
    const decoded = words.map((word) => Buffer.from(word.slice(10, -2), "base64").toString("utf8")).join("");
    expect(decoded).toBe(long.replace("Matthew Nowell", alias));
    const back = door.toReal(shown).value.slice("Subject: ".length).split("\r\n ");
    expect(back.map((word) => Buffer.from(word.slice(10, -2), "base64").toString("utf8")).join("")).toBe(long);
  });

  it("leaves what it cannot decode as it is, and reads a text of many openers in linear time", async ({ expect }) => {
    const door = new AliasDoor({ key: KEY });
    await door.seed(SUBJECT);
    for (const text of [
      "=?UTF-8?B?TWF0dGhldyBOb3dlbGw?!", // no closing ?=
      "=?KOI8-R?Q?=ED=C1=D4=D7=C5=CA?=", // a charset it does not read
      `=?UTF-8?Q?${"x".repeat(1001)}?=`,
    ])
      expect(door.toAlias(text).value).toBe(text);
    const many = "=?a?Q?".repeat(200_000) + "Matthew Nowell";
    const started = performance.now();
    expect(door.countReal(many)).toBe(1);
    expect(performance.now() - started).toBeLessThan(2_000);
  });
});

describe("one normalisation for real values, over random mixes of spellings", () => {
  /** One character, spelt another way a reader still reads as the same: a look-alike, fullwidth, an entity, percent-encoded, with a mark or a format character after it. */
  const LOOK_ALIKES: Record<string, string> = {
    a: "а",
    c: "с",
    e: "е",
    o: "о",
    p: "р",
    x: "х",
    A: "А",
    E: "Е",
    O: "О",
    M: "М",
    H: "Н",
    T: "Т",
  };
  /** Read as nothing: format characters, `<wbr>` and a quoted-printable soft line break. */
  const FORMAT = ["\u200b", "\u00ad", "\u2060", "\u200c", "\ufeff", "<wbr>", "=\n", "=\r\n"];
  const character = (char: string) =>
    fc.constantFrom(
      ...[
        char,
        char,
        String.fromCharCode(char.charCodeAt(0) + 0xfee0),
        `&#${char.charCodeAt(0)};`,
        `&#x${char.charCodeAt(0).toString(16)};`,
        `%${char.charCodeAt(0).toString(16).toUpperCase().padStart(2, "0")}`,
        `\\u${char.charCodeAt(0).toString(16).padStart(4, "0")}`,
        `\\x${char.charCodeAt(0).toString(16)}`,
        ...(LOOK_ALIKES[char]
          ? [
              LOOK_ALIKES[char]!,
              encodeURIComponent(LOOK_ALIKES[char]!),
              // Quoted-printable, and the look-alike's UTF-8 bytes as `\x` escapes.
              encodeURIComponent(LOOK_ALIKES[char]!).replaceAll("%", "="),
              encodeURIComponent(LOOK_ALIKES[char]!).replaceAll("%", "\\x"),
            ]
          : []),
        ...(/[aeiou]/i.test(char) ? [`${char}\u0301`, `${char}\u0308`] : []),
        ...FORMAT.map((format) => `${char}${format}`),
      ],
    );
  const space = fc.constantFrom(" ", "  ", "%20", "+", "&nbsp;", "&#32;", "\u00a0", "\u3000", "\t", " \u200b", "\\u0020", "\\xa0", " =\n");
  const separator = fc.constantFrom(" ", ".", "-", "\u2013", "\u2014", "/", "&#45;", "\u200b-");
  /** A spelling of `text`: each letter spelt one of the ways above, each space one of the spaces. */
  const spelling = (text: string) =>
    fc
      .tuple(...[...text].map((char) => (char === " " ? space : /[A-Za-z0-9]/.test(char) ? character(char) : fc.constant(char))))
      .map((parts) => parts.join(""));
  /** A phone's digits in groups, with any of the separators (a digit spelt another way now and then). */
  const phone = (groups: string[]) =>
    fc.tuple(...groups.map((group) => spelling(group)), ...groups.slice(1).map(() => separator)).map((parts) => {
      const digits = parts.slice(0, groups.length);
      const seps = parts.slice(groups.length);
      return digits.map((group, i) => (i === 0 ? group : `${seps[i - 1]}${group}`)).join("");
    });
  /** A phone whose first group is in brackets, then any separators a bracket takes (`(020).7946 0958`). */
  const bracketed = (groups: [string, string, string]) =>
    fc
      .tuple(
        spelling(groups[0]),
        fc.constantFrom(")", ") ", ").", ")-", ")\u2013", ")/"),
        spelling(groups[1]),
        separator,
        spelling(groups[2]),
      )
      .map(([first, close, second, between, third]) => `(${first}${close}${second}${between}${third}`);
  const before = fc.constantFrom("", "Met ", "(", "Call: ", "Notes:\n", "« ", "?q=");
  const after = fc.constantFrom("", " in Leeds.", ").", "\n", ", twice", " »");

  it("rewrites every spelling of a real value inbound with the text around it intact, meters it and fails run_end on it", async ({
    expect,
  }) => {
    const door = new AliasDoor({ key: KEY });
    await door.seed(SUBJECT);
    const reals = fc.oneof(
      spelling("Matthew Nowell"),
      spelling("Nowell"),
      spelling("MATTHEW NOWELL"),
      phone(["020", "7946", "0958"]),
      phone(["+44", "20", "7946", "0958"]),
      bracketed(["020", "7946", "0958"]),
    );
    fc.assert(
      fc.property(before, reals, after, (head, real, tail) => {
        const text = `${head}${real}${tail}`;
        expect(door.countReal(text)).toBeGreaterThanOrEqual(1);
        expect(door.check({ text }, {}).total).toBeGreaterThanOrEqual(1);
        const shown = door.toAlias(text).value;
        expect(door.countReal(shown)).toBe(0);
        expect(shown.startsWith(head) && shown.endsWith(tail)).toBe(true);
      }),
      { seed: 25, numRuns: 400 },
    );
  });

  it("maps every spelling of an alias back to the real value outbound, the text around it intact", async ({ expect }) => {
    const door = new AliasDoor({ key: KEY });
    await door.seed(SUBJECT);
    const [name, , , phoneAlias] = door.legend().entries.map((entry) => entry.alias) as string[];
    const national = phoneAlias!.replace("+1 ", "").split(" ");
    const aliases = fc.oneof(
      spelling(name!),
      spelling(name!.split(" ")[1]!),
      phone(national),
      bracketed(national as [string, string, string]),
    );
    fc.assert(
      fc.property(before, aliases, after, (head, alias, tail) => {
        const out = door.toReal(`${head}${alias}${tail}`);
        expect(out.refusals).toEqual([]);
        expect(door.countReal(out.value)).toBeGreaterThanOrEqual(1);
        expect(out.value.startsWith(head) && out.value.endsWith(tail)).toBe(true);
      }),
      { seed: 25, numRuns: 400 },
    );
  });
});
