import { it } from "vitest";
import { benchIsolate } from "./isolate.bench.ts";

it("produces bench figures", async ({ expect }) => {
  const figures = await benchIsolate(100);
  console.log("isolate bench", JSON.stringify(figures));
  expect(figures.budgetOvershootRatio).toBeGreaterThanOrEqual(1);
  expect(figures.budgetOvershootRatio).toBeLessThan(1.1);
  expect(figures.peakWasmBytes).toBeGreaterThan(0);
}, 120_000);
