// The admin console: a static site built into console/dist. `npm start` serves
// it from the gateway's origin; deployed, Cloudflare Pages serves it and its
// Pages Function forwards /v1/* to the gateway (see functions/).
import preact from "@preact/preset-vite";
import { join } from "node:path";
import { defineConfig } from "vite";

export default defineConfig({
  root: import.meta.dirname,
  plugins: [preact()],
  resolve: {
    // The typed API client lives with the CLI and is shared, not copied.
    alias: { "@api": join(import.meta.dirname, "../cli/src/api") },
  },
  build: { outDir: "dist", emptyOutDir: true, target: "es2022" },
});
