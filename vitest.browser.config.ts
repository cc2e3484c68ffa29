import { defineConfig } from "vitest/config";

/**
 * Browser tests (`npm run test:browser`): Debian's Chromium driven by
 * playwright-core against one real gateway serving the built console
 * (test/browser/global-setup.ts). `.ci/run` runs them right after `npm test`.
 */
export default defineConfig({
  test: {
    include: ["test/browser/**/*.test.ts"],
    environment: "node",
    globalSetup: ["./test/browser/global-setup.ts"],
    testTimeout: 60_000,
    hookTimeout: 180_000,
    // The files share one gateway and two cores: one browser at a time.
    fileParallelism: false,
  },
});
