import { it } from "vitest";
import { ARGS, CONTEXT, TRIVIAL_BUNDLE, beforeBundle, bundleOf, runAfter, runBefore } from "./isolate.fixtures.ts";

it("runs a trivial before stage", async ({ expect }) => {
  const run = await runBefore(TRIVIAL_BUNDLE);
  expect(run).toMatchObject({ outcome: "continue", value: { action: "continue", arguments: ARGS }, logs: [] });
  expect(run.usage.polls).toBeGreaterThanOrEqual(0);
  expect(run.usage.wasmBytes).toBeGreaterThan(0);
  expect(run.usage.outputBytes).toBe(JSON.stringify({ action: "continue", arguments: ARGS }).length);
});
