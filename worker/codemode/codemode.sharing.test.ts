/**
 * Issue 26, findings 4 and 5: how one Worker isolate's Code Mode compute and sandboxes are shared between
 * workspaces (docs/code-mode.md, "Sharing the isolate"). One workspace cannot spend the isolate's thread
 * (a compute allowance, compiles cached), and runs waiting on tools cannot keep another tenant's program waiting.
 */
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { describe, it } from "vitest";
import { api, connectMcp, createKey, eventually, gatewayError, upstreamReceived } from "../../test/helpers.ts";
import { hookGateway } from "../hooks/lifecycle/lifecycle.fixtures.ts";
import { ComputeAllowance } from "./codemode.allowance.ts";
import { bigProgram } from "./codemode.attacks.fixtures.ts";
import { codeGateway, run, type Client } from "./codemode.fixtures.ts";
import { compiledProgram } from "./codemode.programs.ts";

const BUSY_MESSAGE = /^This workspace used its share of Code Mode's compute on this server; run the program again in (\d+) s$/;

/**
 * Runs `code` (`together` runs at once) until the workspace is refused code_mode_busy; returns the codes of the
 * runs before it and the refusal.
 */
async function runUntilBusy(client: Client, code: (attempt: number) => string, rounds: number, together = 1) {
  const before: string[] = [];
  for (let round = 0; round < rounds; round++) {
    const results = await Promise.all(Array.from({ length: together }, (_, i) => run(client, code(round * together + i))));
    const codes = results.map((result) => (result.isError ? gatewayError(result) : undefined));
    const busy = codes.find((error) => error?.code === "code_mode_busy");
    if (busy) return { before, busy };
    before.push(...codes.map((error) => error?.code ?? "ok"));
  }
  return { before, busy: undefined };
}

describe("finding 4 (issue 26): one workspace cannot starve the isolate's CPU through run_code", () => {
  it("a workspace spinning to the work budget is refused code_mode_busy with retryAfterSeconds; another workspace is not", async ({
    expect,
  }) => {
    const spinner = await codeGateway();
    // Two at once: the allowance earns back while they spin, but far less than they spend.
    const { before, busy } = await runUntilBusy(spinner.client, () => "while (true) {}", 8, 2);
    // The allowance (1.5 s) is one and a half full work budgets (1 s each), then the refusal.
    expect(before.length).toBeGreaterThanOrEqual(1);
    expect(before.every((code) => code === "timeout")).toBe(true);
    const wait = Number(BUSY_MESSAGE.exec(busy?.message ?? "")?.[1]);
    expect(busy).toEqual({ code: "code_mode_busy", message: expect.stringMatching(BUSY_MESSAGE), details: { retryAfterSeconds: wait } });
    expect(wait).toBeGreaterThanOrEqual(1);
    // At most two runs' charges (1 s each) below zero.
    expect(wait).toBeLessThanOrEqual(20);
    // Refused before it compiles or runs, so even a trivial program of the spinner's is, and no call is made.
    expect(gatewayError(await run(spinner.client, "return await tools.demo__search_release_notes({ query: 'sso' });")).code).toBe(
      "code_mode_busy",
    );
    expect((await upstreamReceived(spinner.tag)).calls).toEqual([]);
    // Another workspace's program runs as usual.
    const calm = await codeGateway();
    expect((await run(calm.client, "return 1;")).structuredContent).toEqual({ result: 1, logs: [], calls: [] });
    // Once the allowance has earned enough back, the spinner runs again.
    await new Promise((resolve) => setTimeout(resolve, wait * 1000));
    expect((await run(spinner.client, "return 2;")).structuredContent).toEqual({ result: 2, logs: [], calls: [] });
  }, 60_000);

  it("work the counts cannot see is charged by the time it took: a workspace comparing long strings is refused code_mode_busy", async ({
    expect,
  }) => {
    // Two 4 MiB strings built by concatenation (not charged) that differ only at the end: each === reads both to the
    // end with no poll (docs/isolate.md, "What the budget does not see"). The run ends well inside the work budget.
    const program = `let x = "x"; for (let i = 0; i < 22; i++) x += x;
      const a = x + "a", b = x + "b"; let same = 0;
      for (let i = 0; i < 150; i++) if (a === b) same++;
      return same;`;
    const gateway = await codeGateway();
    const { before, busy } = await runUntilBusy(gateway.client, () => program, 40);
    expect(before.length).toBeGreaterThanOrEqual(1);
    expect(before.every((code) => code === "ok")).toBe(true);
    expect(busy).toEqual({
      code: "code_mode_busy",
      message: expect.stringMatching(BUSY_MESSAGE),
      details: { retryAfterSeconds: expect.any(Number) },
    });
  }, 120_000);

  it("a program is compiled once per workspace: a repeat comes from the cache, another workspace's compiles its own", async ({
    expect,
  }) => {
    const source = bigProgram(0);
    const first = await compiledProgram("ws_cache_a", source);
    expect(first.compiled).toBe(true);
    expect(first.program.ok).toBe(true);
    expect(await compiledProgram("ws_cache_a", source)).toEqual({ program: first.program, compiled: false });
    expect((await compiledProgram("ws_cache_b", source)).compiled).toBe(true);
    // A program that does not compile is kept too: its repeat costs no esbuild either.
    const broken = await compiledProgram("ws_cache_a", `${source}\nreturn +;`);
    expect(broken).toMatchObject({ compiled: true, program: { ok: false, error: { code: "compile_failed" } } });
    expect((await compiledProgram("ws_cache_a", `${source}\nreturn +;`)).compiled).toBe(false);
  }, 60_000);

  it("new 95 KiB programs each pay esbuild: a workspace sending one after another is refused code_mode_busy", async ({ expect }) => {
    const gateway = await codeGateway();
    const fresh = await runUntilBusy(gateway.client, (attempt) => bigProgram(attempt + 1), 16);
    expect(fresh.before.length).toBeGreaterThanOrEqual(1);
    expect(fresh.before.every((code) => code === "ok")).toBe(true);
    expect(fresh.busy).toEqual({
      code: "code_mode_busy",
      message: expect.stringMatching(BUSY_MESSAGE),
      details: { retryAfterSeconds: expect.any(Number) },
    });
  }, 120_000);

  it("a workspace runs at most 4 programs at once; the 5th is refused code_mode_busy", async ({ expect }) => {
    const gateway = await codeGateway();
    const clients = [
      gateway.client,
      ...(await Promise.all([1, 2, 3].map(async () => connectMcp(await createKey(gateway, ["tools:call"], gateway.defaultProfileId))))),
    ];
    const slow = clients.map((client) => run(client, "await tools.slow__wait({ ms: 2000 }); return 'slow';"));
    for (let i = 0; i < 100 && (await upstreamReceived(gateway.slowTag)).calls.length < 1; i++) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const fifth = await connectMcp(await createKey(gateway, ["tools:call"], gateway.defaultProfileId));
    expect(gatewayError(await run(fifth, "return 5;"))).toEqual({
      code: "code_mode_busy",
      message: "This workspace already has 4 programs running here; run it again when one has finished",
      details: { limit: 4, retryAfterSeconds: 1 },
    });
    const results = await Promise.all(slow);
    expect(results.map((result) => (result.structuredContent as { result: unknown }).result)).toEqual(Array(4).fill("slow"));
  }, 60_000);

  it("the allowance holds burstMs, earns refillMsPerSecond back, and tells the whole seconds until it is positive", ({ expect }) => {
    let now = 0;
    const allowance = new ComputeAllowance(1500, 100, () => now);
    expect(allowance.retryAfterSeconds("ws")).toBe(0);
    allowance.charge("ws", 1500);
    expect(allowance.retryAfterSeconds("ws")).toBe(1);
    allowance.charge("ws", 250);
    expect(allowance.retryAfterSeconds("ws")).toBe(3);
    now += 2500;
    expect(allowance.retryAfterSeconds("ws")).toBe(1);
    now += 501;
    expect(allowance.retryAfterSeconds("ws")).toBe(0);
    now += 60_000;
    allowance.charge("ws", 1499);
    expect(allowance.retryAfterSeconds("ws")).toBe(0);
    expect(allowance.retryAfterSeconds("other")).toBe(0);
  });
});

describe("finding 5 (issue 26): runs waiting on slow tools hold no compute and cannot keep another tenant waiting", () => {
  /** Waits `seconds` on the slow tool (5 s at most per call), one call after another. */
  const hogProgram = (seconds: number) => `for (let i = 0; i < ${seconds}; i++) await tools.slow__wait({ ms: 1000 });\nreturn "hog";`;
  const settledInOrder = (finished: string[], label: string, client: Client, code: string) =>
    (client.callTool({ name: "run_code", arguments: { code } }, undefined, { timeout: 40_000 }) as Promise<CallToolResult>).then(
      (result) => {
        finished.push(label);
        return result;
      },
    );
  const untilCalls = async (tags: string[], count: number) => {
    for (let i = 0; i < 600; i++) {
      const received = await Promise.all(tags.map((tag) => upstreamReceived(tag)));
      if (received.every((calls) => calls.calls.length >= count)) return;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    throw new Error("the hostile runs did not reach their upstreams");
  };

  it("two hostile tenants waiting on slow tools cannot keep a third tenant's `return 1` waiting", async ({ expect }) => {
    const [first, second, third] = [await codeGateway(), await codeGateway(), await codeGateway()];
    const finished: string[] = [];
    const hogs = [
      settledInOrder(finished, "hog 1", first.client, hogProgram(15)),
      settledInOrder(finished, "hog 2", second.client, hogProgram(15)),
    ];
    // Both hostile runs hold a sandbox each, waiting on their slow calls.
    await untilCalls([first.slowTag, second.slowTag], 1);
    const calm = await settledInOrder(finished, "calm", third.client, "return 1;");
    expect(calm.structuredContent).toEqual({ result: 1, logs: [], calls: [] });
    // Answered while both hostile runs were still waiting on their tools.
    expect(finished).toEqual(["calm"]);
    for (const hog of await Promise.all(hogs)) expect((hog.structuredContent as { result: unknown }).result).toBe("hog");
  }, 60_000);

  it("a third tenant's program that calls a tool gets the next free sandbox before the hostile tenants' next runs", async ({ expect }) => {
    const [first, second, third] = [await codeGateway(), await codeGateway(), await codeGateway()];
    const extra = async (gateway: typeof first) => connectMcp(await createKey(gateway, ["tools:call"], gateway.defaultProfileId));
    const finished: string[] = [];
    const hogs = [
      settledInOrder(finished, "hog 1", first.client, hogProgram(3)),
      settledInOrder(finished, "hog 2", second.client, hogProgram(3)),
    ];
    await untilCalls([first.slowTag, second.slowTag], 1);
    // Each hostile tenant queues its next run, before the calm tenant asks.
    hogs.push(settledInOrder(finished, "hog 1 again", await extra(first), hogProgram(3)));
    hogs.push(settledInOrder(finished, "hog 2 again", await extra(second), hogProgram(3)));
    await new Promise((resolve) => setTimeout(resolve, 300));
    const calm = settledInOrder(finished, "calm", third.client, "return (await tools.slow__wait({ ms: 10 })).waited;");
    expect(((await calm).structuredContent as { result: unknown }).result).toBe(10);
    await Promise.all(hogs);
    // The calm run took the first sandbox freed; each hostile tenant's next run waited for the one after.
    expect(finished.indexOf("calm")).toBeLessThan(finished.indexOf("hog 1 again"));
    expect(finished.indexOf("calm")).toBeLessThan(finished.indexOf("hog 2 again"));
  }, 60_000);
});

/** A demo gateway in Code Mode with `source` deployed to `slot` on search_release_notes, and a tools:call client. */
async function codeModeWithHook(source: string, slot: "active" | "shadow") {
  const gateway = await hookGateway();
  const { revisionId } = await gateway.tested(source);
  const deployed = await gateway.deploy(slot, revisionId);
  if (deployed.status !== 200) throw new Error(`deploy: ${deployed.status}`);
  const patched = await api(`/v1/workspaces/${gateway.ws}/profiles/${gateway.defaultProfileId}`, {
    method: "PATCH",
    key: gateway.adminKey,
    body: { discovery: "code" },
  });
  if (patched.status !== 200) throw new Error(`profile: ${patched.status}`);
  return { gateway, client: await connectMcp(gateway.clientKey) };
}

describe("an inner call's hook stages are the workspace's Code Mode compute", () => {
  /** Spins to its work budget when asked to, else passes the call on (so the stage tests pass). */
  const SPINNING_HOOK = `export default defineToolAdapter({
  apiVersion: "rayrun.hooks/v1",
  before({ arguments: args }) {
    if (args.query === "spin") while (true) {}
    return { action: "continue", arguments: args };
  },
});
`;

  it("charges each stage's work to the allowance, so a run calling a spinning hook stops at code_mode_busy", async ({ expect }) => {
    const { gateway, client } = await codeModeWithHook(SPINNING_HOOK, "active");

    // Each call's `before` spends a whole work budget (1,000 polls, charged 1 s): two of them take the 1.5 s allowance
    // below zero, and the program's next turn is refused. Uncharged, all ten would have run.
    const result = await run(
      client,
      `const codes = [];
      for (let i = 0; i < 10; i++) {
        try { await tools.demo__search_release_notes({ query: "spin" }); codes.push("ok"); } catch (error) { codes.push(error.code); }
      }
      return codes;`,
    );
    const busy = gatewayError(result);
    expect(busy).toMatchObject({ code: "code_mode_busy", message: expect.stringMatching(BUSY_MESSAGE) });
    expect(busy.details.retryAfterSeconds).toBeGreaterThanOrEqual(1);
    expect(busy.details.calls.map((call: { index: number; code: string }) => [call.index, call.code])).toEqual([
      [0, "hook_failed"],
      [1, "hook_failed"],
    ]);
    const stages = await eventually(
      async () => (await api(`${gateway.base()}/logs`, { key: gateway.adminKey })).body.logs as { stage: string; code: string | null }[],
      (rows) => rows.length >= 2,
    );
    expect(stages.map((row) => [row.stage, row.code])).toEqual([
      ["before", "timeout"],
      ["before", "timeout"],
    ]);
    expect((await upstreamReceived(gateway.tag)).calls).toEqual([]);
    // A run's own inner call is refused the same way while the allowance is spent, before any stage runs.
    expect(gatewayError(await run(client, "return await tools.demo__search_release_notes({ query: 'sso' });")).code).toBe("code_mode_busy");
  }, 60_000);
  it("checks each stage as it runs, so calls in flight together cannot all pass one check before any is charged", async ({ expect }) => {
    const { gateway, client } = await codeModeWithHook(SPINNING_HOOK, "active");

    // Eight calls at once, each past the run's check while the allowance was full. Their stages run one after another
    // on the isolate's thread: the first two take the 1.5 s allowance below zero, and the other six do not run.
    const result = await run(
      client,
      `return await Promise.allSettled(Array.from({ length: 8 }, () => tools.demo__search_release_notes({ query: "spin" })));`,
    );
    const busy = gatewayError(result);
    expect(busy.code).toBe("code_mode_busy");
    const calls = busy.details.calls as { index: number; code: string }[];
    expect(calls.map((call) => call.code).sort()).toEqual([...Array(6).fill("code_mode_busy"), "hook_failed", "hook_failed"]);
    const stages = await eventually(
      async () => (await api(`${gateway.base()}/logs`, { key: gateway.adminKey })).body.logs as { stage: string; code: string | null }[],
      (rows) => rows.length >= 8,
    );
    expect(stages.map((row) => `${row.stage} ${row.code}`).sort()).toEqual([
      ...Array(6).fill("before code_mode_busy"),
      "before timeout",
      "before timeout",
    ]);
    expect((await upstreamReceived(gateway.tag)).calls).toEqual([]);
  }, 60_000);
});

describe("an inner call's shadow stages are the workspace's Code Mode compute too", () => {
  /** A shadow that spins to its work budget in both stages when asked to, else passes the call through. */
  const SPINNING_SHADOW = `export default defineToolAdapter({
  apiVersion: "rayrun.hooks/v1",
  before({ arguments: args }) {
    if (args.query === "spin") while (true) {}
    return { action: "continue", arguments: args };
  },
  after({ arguments: args, result }) {
    if (args.query === "spin") while (true) {}
    return { action: "return", result };
  },
});
`;

  it("charges the shadow's stages after the response, and runs none once the allowance is spent", async ({ expect }) => {
    const { gateway, client } = await codeModeWithHook(SPINNING_SHADOW, "shadow");

    // No active hook: the live calls cost the allowance nothing. Each shadow stage spins to its work budget (1 s) after
    // the response; uncharged, six calls would spend twelve budgets of the isolate's thread and the next run go ahead.
    const first = await run(
      client,
      `for (let i = 0; i < 6; i++) await tools.demo__search_release_notes({ query: "spin" }); return "done";`,
    );
    expect(first.isError).toBeFalsy();
    const shadowRows = await eventually(
      async () =>
        (
          (await api(`${gateway.base()}/logs`, { key: gateway.adminKey })).body.logs as {
            channel: string;
            stage: string;
            code: string | null;
          }[]
        ).filter((row) => row.channel === "shadow"),
      (rows) => rows.length >= 7,
      45_000,
    );
    // The first call's stages (a budget each, or the time they took if more) take the 1.5 s allowance below zero: its
    // `after` at most runs too. Each later call's shadow is one refused row, run no further.
    const codes = shadowRows.map((row) => row.code);
    expect(shadowRows).toHaveLength(7);
    const ran = codes.filter((code) => code === "timeout").length;
    expect(ran === 1 || ran === 2).toBe(true);
    expect(codes.filter((code) => code === "code_mode_busy")).toHaveLength(7 - ran);
    expect(gatewayError(await run(client, "return 1;")).code).toBe("code_mode_busy");
  }, 90_000);
});
