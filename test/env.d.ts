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
    /** Control server of the OAuth lab (test/oauth-lab/lab.ts): `POST /labs` starts an OAuth-protected upstream. */
    oauthLabOrigin: string;
    /** The QuickJS wasm file's memory layout, read by test/global-setup.ts. */
    quickjsLayout: import("./quickjs-layout.ts").QuickJSLayout;
  }
}
export {};
