declare global {
  namespace Cloudflare {
    interface Env {
      TEST_MIGRATIONS: import("cloudflare:test").D1Migration[];
    }
  }
}

declare module "vitest" {
  interface ProvidedContext {
    /** Origin of the demo upstream MCP server started by test/global-setup.ts. */
    upstreamOrigin: string;
  }
}
export {};
