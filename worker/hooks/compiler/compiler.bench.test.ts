import { it } from "vitest";
import { syntheticHook } from "./compiler.bench.ts";

it("benchmark hooks have the sizes they claim", ({ expect }) => {
  expect(syntheticHook(5 * 1024).length).toBeGreaterThan(4 * 1024);
  expect(syntheticHook(5 * 1024).length).toBeLessThanOrEqual(5 * 1024);
  expect(syntheticHook(100 * 1024 - 512).length).toBeGreaterThan(95 * 1024);
});
