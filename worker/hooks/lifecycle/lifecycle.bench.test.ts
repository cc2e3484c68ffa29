import { it } from "vitest";
import { benchLifecycle } from "./lifecycle.bench.ts";

it("benchLifecycle reports draft save and version listing p50", async ({ expect }) => {
  const result = await benchLifecycle({ saves: 10, versions: 1_000, pageSize: 200 });
  console.log("lifecycle bench", JSON.stringify(result));
  expect(result.draftSaveP50Ms).toBeGreaterThan(0);
  expect(result.versionPageP50Ms).toBeGreaterThan(0);
}, 120_000);
