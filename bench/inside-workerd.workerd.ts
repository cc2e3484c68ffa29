// Figures measured inside workerd (run by `npm run bench` through vitest with
// RAYRUN_BENCH=1). Each prints one JSON line tagged BENCH that bench/run.ts reads.
import { it } from "vitest";
import { benchCompile } from "../worker/hooks/compiler/compiler.bench.ts";
import { benchIsolate } from "../worker/hooks/isolate/isolate.bench.ts";
import { benchLifecycle } from "../worker/hooks/lifecycle/lifecycle.bench.ts";
import { benchLeases } from "../worker/leases/leases.bench.ts";
import { benchCallLogIngestion } from "./calllog.ingest.ts";

const report = (name: string, figures: unknown) => console.log(`BENCH ${JSON.stringify({ name, figures })}`);

it("isolate", async () => {
  report("isolate", await benchIsolate(500));
});

it("compiler", async () => {
  report("compiler", await benchCompile());
});

it("lifecycle", async () => {
  report("lifecycle", await benchLifecycle());
});

it("leases", async () => {
  report("leases", await benchLeases());
});

it("call log ingestion", async () => {
  report("callLog", await benchCallLogIngestion());
});
