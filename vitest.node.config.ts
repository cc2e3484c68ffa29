import { defineConfig } from "vitest/config";

/**
 * Node-side tests (`cli/`, and `test/node/`: `npm start` itself): the bundled `rayrun` CLI run as a subprocess on
 * Node 20 and 22 against a real gateway under `wrangler dev`. The workerd suite
 * (vitest.config.ts) excludes them.
 */
export default defineConfig({
  test: {
    include: ["cli/**/*.test.ts", "test/docs/**/*.test.ts", "test/node/**/*.test.ts"],
    environment: "node",
    testTimeout: 120_000,
    hookTimeout: 180_000,
    // One gateway per file; two files at once would only contend for the same two cores.
    fileParallelism: false,
  },
});
