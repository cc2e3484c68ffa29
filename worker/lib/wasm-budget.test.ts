/**
 * The isolate's wasm budget with its real holders: the shared QuickJS instance (hooks), Code Mode sandboxes
 * (programs parked on a tool call the test answers, so nothing here waits on time) and esbuild. Each is driven to
 * its cap; the memories together never pass the budget, and past a (lowered) budget new instances are refused with
 * the documented codes while the work that holds memory goes on, and everything is served again afterwards.
 */
import { afterEach, describe, it } from "vitest";
import { api, connectMcp, demoUpstreamUrl, eventually, gatewayError, newTag } from "../../test/helpers.ts";
import { BEFORE_TEST, gatewayFor, prefixHook } from "../calls/call-path.fixtures.ts";
import { runShadow } from "../calls/shadow.ts";
import { runProgram } from "../codemode/codemode.sandbox.ts";
import type { ProgramHost, ProgramRun } from "../codemode/codemode.run.ts";
import { compileHook, CompilerUnavailableError } from "../hooks/compiler/index.ts";
import { syntheticHook } from "../hooks/compiler/compiler.bench.ts";
import { compilerWasmBytes, resetEsbuild } from "../hooks/compiler/compiler.esbuild.ts";
import { SEARCH_TOOL } from "../hooks/compiler/compiler.fixtures.ts";
import { beforeBundle, runBefore, TRIVIAL_BUNDLE } from "../hooks/isolate/isolate.fixtures.ts";
import { isolateWasmBudget, WASM_BUDGET } from "./wasm-budget.ts";

const MiB = 1024 * 1024;
let restoreBudget = isolateWasmBudget.lowerTo(WASM_BUDGET.totalBytes);
afterEach(() => restoreBudget());

/** A hook whose `before` allocates until its instance's memory is exhausted. */
const HUNGRY_HOOK = beforeBundle("const keep = []; for (;;) keep.push(new Uint8Array(512 * 1024))");
/** A program that fills most of its sandbox's heap, then waits on one tool call, then returns. */
const FILLING_PROGRAM = `const kept = "x".repeat(6 * 1024 * 1024);
const answer = await tools.hold({});
return kept.length + answer.n;`;

/** Tool calls that wait until the test answers them. */
function heldTools() {
  const waiting: (() => void)[] = [];
  const host: ProgramHost = {
    callTool: () => new Promise((resolve) => waiting.push(() => resolve({ ok: true, value: { n: 1 } }))),
  };
  /** Turns of the event loop until `count` calls wait (bounded: the programs run on this isolate's own turns). */
  const untilWaiting = async (count: number) => {
    for (let turn = 0; turn < 10_000 && waiting.length < count; turn++) await scheduler.wait(1);
    if (waiting.length < count) throw new Error(`${waiting.length} tool calls waiting, not ${count}`);
  };
  return { host, waiting, untilWaiting };
}

const program = (host: ProgramHost, workspaceId: string): Promise<ProgramRun> =>
  runProgram({ source: FILLING_PROGRAM, host, requestId: `req_${newTag()}`, workspaceId });

const workspace = () => `ws_budget_${newTag()}`;

describe("the isolate's wasm budget", () => {
  it("holds every instance at its cap at once without passing the budget; a third program queues for a sandbox", async ({ expect }) => {
    expect(WASM_BUDGET.sharedInstanceBytes + 2 * WASM_BUDGET.sandboxBytes + WASM_BUDGET.compilerBytes).toBe(WASM_BUDGET.totalBytes);
    expect(WASM_BUDGET.totalBytes).toBeLessThanOrEqual(80 * MiB);
    expect((await compileHook({ source: syntheticHook(1024), config: {}, upstreamDefinition: SEARCH_TOOL })).ok).toBe(true);
    restoreBudget = isolateWasmBudget.lowerTo(WASM_BUDGET.totalBytes); // the high-water mark counts from here

    // Two workspaces' programs each fill a sandbox and wait there on a tool.
    const tools = heldTools();
    const first = program(tools.host, workspace());
    const second = program(tools.host, workspace());
    await tools.untilWaiting(2);

    // The shared instance, driven to its cap by a hook, meanwhile: the hook fails alone, the instance is dropped.
    const reserved = isolateWasmBudget.reservedBytes;
    const hungry = await runBefore(HUNGRY_HOOK);
    expect(hungry.error?.code).toBe("memory_exceeded");
    expect(hungry.usage.wasmBytes).toBeGreaterThan(WASM_BUDGET.sharedInstanceBytes - 4 * MiB);
    expect(hungry.usage.wasmBytes).toBeLessThanOrEqual(WASM_BUDGET.sharedInstanceBytes);
    expect(isolateWasmBudget.reservedBytes).toBe(reserved - WASM_BUDGET.sharedInstanceBytes);
    // What the sandboxes and the compiler hold now, plus the shared instance at its peak, is within the budget.
    expect(isolateWasmBudget.usedBytes + hungry.usage.wasmBytes).toBeLessThanOrEqual(WASM_BUDGET.totalBytes);

    // The largest hook the compiler accepts, compiled meanwhile: esbuild stays within its share, or is replaced.
    let compilerPeak = 0;
    for (let i = 0; i < 4; i++) {
      expect((await compileHook({ source: syntheticHook(100 * 1024 - 512), config: {}, upstreamDefinition: SEARCH_TOOL })).ok).toBe(true);
      compilerPeak = Math.max(compilerPeak, compilerWasmBytes());
    }
    expect(compilerPeak).toBeLessThanOrEqual(WASM_BUDGET.compilerBytes);

    // A third workspace's program needing a tool waits for a sandbox (its first step ran on the shared instance).
    const third = program(tools.host, workspace());
    expect(await runBefore(TRIVIAL_BUNDLE)).toMatchObject({ outcome: "continue" });
    expect(tools.waiting).toHaveLength(2);
    tools.waiting.shift()!();
    expect(await first).toEqual({ ok: true, value: 6 * MiB + 1, logs: [] });
    await tools.untilWaiting(2);
    for (const answer of tools.waiting.splice(0)) answer();
    expect(await Promise.all([second, third])).toEqual([
      { ok: true, value: 6 * MiB + 1, logs: [] },
      { ok: true, value: 6 * MiB + 1, logs: [] },
    ]);
    expect(isolateWasmBudget.highWaterBytes).toBeLessThanOrEqual(WASM_BUDGET.totalBytes);
  });

  it("refuses new instances past the budget with the documented codes, and serves every workspace again after", async ({ expect }) => {
    const tag = newTag();
    const g = await gatewayFor("demo", demoUpstreamUrl(tag));
    const uid = g.uidOf("search_release_notes");
    await g.deploy(uid, "active", (await g.revision(uid, prefixHook("A"), BEFORE_TEST)).revisionId);
    const client = await connectMcp(g.clientKey);
    const search = () => client.callTool({ name: "demo__search_release_notes", arguments: { query: "sso" } });
    expect((await search()).isError).toBeFalsy();

    // No room left: the compiler starts afresh, the shared instance is dropped (the hook grows it past its cap), and
    // the budget is lowered to what is still held.
    await resetEsbuild();
    expect((await compileHook({ source: syntheticHook(1024), config: {}, upstreamDefinition: SEARCH_TOOL })).ok).toBe(true);
    expect((await runBefore(HUNGRY_HOOK)).error?.code).toBe("memory_exceeded");
    restoreBudget = isolateWasmBudget.lowerTo(isolateWasmBudget.reservedBytes);

    const hooked = await search();
    expect(gatewayError(hooked as never)).toMatchObject({ code: "hook_unavailable" });
    // Its stage row says the gateway refused the hook, as the call was refused: no hook ran, so none failed.
    const refusedRows = await eventually(
      async () => (await g.logs(uid)).filter((row) => row.code === "hook_unavailable"),
      (rows) => rows.length > 0,
    );
    expect(refusedRows).toEqual([
      expect.objectContaining({ stage: "before", channel: "active", outcome: "refused", code: "hook_unavailable" }),
    ]);
    expect(await runBefore(TRIVIAL_BUNDLE)).toMatchObject({ outcome: "error", unavailable: true });
    // A shadow revision that cannot get an isolate did not run: one row says so, and nothing is compared.
    const shadowRevision = { revisionId: "rev_shadow", bundle: TRIVIAL_BUNDLE, stages: ["before" as const], contract: null, config: {} };
    const shadowRows = await runShadow({
      call: {
        calledAt: new Date().toISOString(),
        requestId: "req_shadow",
        workspaceId: workspace(),
        tool: { uid, publicName: "demo__search_release_notes", serviceId: "svc" },
      },
      revision: { ...shadowRevision, definitionHash: "hash" },
      definitionHash: "hash",
      before: { input: { arguments: { query: "sso" } }, active: null },
    });
    expect(shadowRows).toEqual([
      expect.objectContaining({
        stage: "pre_dispatch",
        channel: "shadow",
        outcome: "refused",
        code: "hook_unavailable",
        revisionId: "rev_shadow",
      }),
    ]);
    // A program needing a sandbox of its own (another workspace may hold the idle one) is refused before it starts.
    const tools = heldTools();
    const runs = [program(tools.host, workspace()), program(tools.host, workspace())];
    const refused = {
      ok: false,
      ran: false,
      logs: [],
      error: { code: "code_mode_busy", details: { retryAfterSeconds: 1, limit: "wasm_memory" } },
    };
    expect(await runs[1]).toMatchObject(refused);
    for (let turn = 0; turn < 100 && tools.waiting.length === 0; turn++) await scheduler.wait(1);
    for (const answer of tools.waiting.splice(0)) answer();
    await runs[0];
    // A compile needs the shared instance to evaluate the hook: refused as esbuild's own failures are.
    const compile = await api(`${g.hook(uid)}/test`, { body: BEFORE_TEST[0], headers: g.writer.headers });
    expect(compile.status).toBe(503);
    expect(compile.body.error.code).toBe("compiler_unavailable");
    expect(compile.headers.get("retry-after")).toBe("1");
    // And the compiler, stopped with no room left for it, cannot start again.
    await resetEsbuild();
    restoreBudget();
    restoreBudget = isolateWasmBudget.lowerTo(isolateWasmBudget.reservedBytes);
    await expect(compileHook({ source: syntheticHook(1024), config: {}, upstreamDefinition: SEARCH_TOOL })).rejects.toThrow(
      new CompilerUnavailableError("esbuild has no wasm memory free"),
    );
    expect(isolateWasmBudget.highWaterBytes).toBeLessThanOrEqual(isolateWasmBudget.limitBytes);

    restoreBudget();
    expect((await search()).isError).toBeFalsy();
    const again = heldTools();
    const served = program(again.host, workspace());
    await again.untilWaiting(1);
    again.waiting[0]!();
    expect(await served).toMatchObject({ ok: true });
    expect((await api(`${g.hook(uid)}/test`, { body: BEFORE_TEST[0], headers: g.writer.headers })).status).toBe(200);
  });
});
