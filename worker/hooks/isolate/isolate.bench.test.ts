import { it } from "vitest";
import { benchIsolate } from "./isolate.bench.ts";

it("stops while(true) within 10% past the work budget, as the bench reports", async ({ expect }) => {
  const figures = await benchIsolate(100);
  console.log("isolate bench", JSON.stringify(figures));
  expect(figures.budgetOvershootRatio).toBeGreaterThanOrEqual(1);
  expect(figures.budgetOvershootRatio).toBeLessThan(1.1);
  expect(figures.peakWasmBytes).toBeGreaterThan(0);
}, 120_000);
