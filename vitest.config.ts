import path from "node:path";
import { cloudflareTest, readD1Migrations } from "@cloudflare/vitest-plugin";
import { defineConfig } from "vitest/config";

// Tests never leave this machine: no Request.cf fetch, no metrics.
process.env.CLOUDFLARE_CF_FETCH_ENABLED = "false";
process.env.WRANGLER_SEND_METRICS = "false";

/**
 * One workerd test setup for both suites: `npm test` (everything but bench/) and
 * `npm run bench` (bench/*.workerd.ts, the figures measured inside workerd).
 */
export default defineConfig(async () => {
  const benchmarking = process.env.RAYRUN_BENCH === "1";
  const migrations = await readD1Migrations(path.join(import.meta.dirname, "schema/migrations"));
  return {
    plugins: [
      cloudflareTest({
        wrangler: { configPath: "./wrangler.toml" },
        miniflare: {
          bindings: {
            TEST_MIGRATIONS: migrations,
            BOOTSTRAP_SECRET: "test-bootstrap-secret",
            // 32 zero-free test bytes, base64: never a production key.
            SECRETS_KEY: "dGVzdC1zZWNyZXRzLWtleS0wMTIzNDU2Nzg5YWJjZGU=",
            DEV_ALLOWED_HOSTS: "127.0.0.1",
            DEV_LOGIN: "on",
            // The tests' gateway origin (test/helpers.ts ORIGIN), and one browser app allowed to call /mcp.
            PUBLIC_URL: "https://rayrun.test",
            MCP_ALLOWED_ORIGINS: "https://app.example.com",
            MCP_ALLOWED_HOSTS: "localhost,127.0.0.1",
          },
          // The real local queue, delivering a batch 50 ms after its first message rather than after 1 s.
          queueConsumers: { "rayrun-call-logs": { maxBatchTimeout: 0.05 }, "rayrun-call-logs-overflow": { maxBatchTimeout: 0.05 } },
        },
      }),
    ],
    test: {
      include: benchmarking ? ["bench/**/*.workerd.ts"] : ["**/*.test.ts"],
      exclude: [
        "node_modules/**",
        "bench/**",
        ".rayrun/**",
        "cli/**",
        "test/browser/**",
        "test/docs/**",
        "test/layout/**",
        "test/node/**",
        "console/**",
      ].filter((glob) => !(benchmarking && glob === "bench/**")),
      globalSetup: ["./test/global-setup.ts"],
      setupFiles: ["./test/apply-migrations.ts"],
      testTimeout: benchmarking ? 600_000 : 30_000,
      hookTimeout: 60_000,
      // Vitest's default on a 2-core machine is one worker; two at a time cut the suite by about 40%.
      maxWorkers: 2,
      // Each isolated test file started its own workerd and evaluated the whole Worker again (about 20 s of CPU per
      // file, most of the suite's time); without isolation a worker's runner is reused, and a further file costs
      // about 1 s. Files share D1 and Durable Object storage, so every test seeds its own workspace.
      isolate: false,
    },
  };
});
