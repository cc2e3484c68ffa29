import { it } from "vitest";
import { benchCompile, syntheticHook } from "./compiler.bench.ts";

it("benchmark hooks have the sizes they claim", ({ expect }) => {
  expect(syntheticHook(5 * 1024).length).toBeGreaterThan(4 * 1024);
  expect(syntheticHook(5 * 1024).length).toBeLessThanOrEqual(5 * 1024);
  expect(syntheticHook(100 * 1024 - 512).length).toBeGreaterThan(95 * 1024);
});

it("benchCompile reports cold and warm p50 for 5 KiB and 100 KiB hooks", async ({ expect }) => {
  const result = await benchCompile({ coldRuns: 2, warmRuns: 5 });
  console.log("compile bench", JSON.stringify(result));
  for (const timings of [result.hook5KiB, result.hook100KiB]) {
    expect(timings.coldMs).toBeGreaterThan(0);
    expect(timings.warmMs).toBeGreaterThan(0);
  }
}, 120_000);
