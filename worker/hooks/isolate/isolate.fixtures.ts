import type { ExpectStatic } from "vitest";
import type { IsolateErrorCode, StageContextInput } from "./isolate.types.ts";
import { runStage, type StageInput, type StageRun } from "./isolate.run.ts";

/** Test fixtures: hand-written "rayrun bundle v1" scripts and a call context. */

export const CONTEXT: StageContextInput = {
  calledAt: "2026-03-04T05:06:07.089Z",
  requestId: "req_1",
  workspaceUid: "ws_1",
  connectionId: "conn_1",
  toolUid: "tool_1",
  toolName: "search",
  config: { prefix: "rr:", nested: { list: [1, 2] } },
};

/** Wraps adapter fields (JS source of an object literal body) in the bundle shape esbuild produces. */
export function bundleOf(adapterFields: string, topLevel = ""): string {
  return `var __rayrun = (() => { ${topLevel}; return { default: defineToolAdapter({ apiVersion: "rayrun.hooks/v1", ${adapterFields} }) }; })();`;
}

/** A bundle whose `before` runs `body` (statements) and then returns `returns` (an expression). */
export function beforeBundle(body: string, returns = `{ action: "continue", arguments: args }`): string {
  return bundleOf(`before({ arguments: args, context }) { ${body}; return ${returns}; }`);
}

export const ARGS = { query: "hello" };

export function runBefore(bundle: string, input: StageInput = { arguments: ARGS }, limits?: Record<string, number>): Promise<StageRun> {
  return runStage({ bundle, stage: "before", input, context: CONTEXT, limits });
}

export function runAfter(bundle: string, result: unknown, limits?: Record<string, number>): Promise<StageRun> {
  return runStage({ bundle, stage: "after", input: { arguments: ARGS, result: result as never }, context: CONTEXT, limits });
}

export const TRIVIAL_BUNDLE = beforeBundle("");

/**
 * Each hostile hook must fail closed with its exact code, and the very next
 * normal run must still succeed (the Worker keeps serving).
 */
export async function expectFailsClosed(run: Promise<StageRun>, code: IsolateErrorCode, expect: ExpectStatic): Promise<StageRun> {
  const result = await run;
  expect(result.outcome, JSON.stringify(result.error)).toBe("error");
  expect(result.error?.code, result.error?.message).toBe(code);
  expect(result.value).toBeUndefined();
  const next = await runBefore(TRIVIAL_BUNDLE);
  expect(next.outcome, JSON.stringify(next.error)).toBe("continue");
  return result;
}
