/**
 * esbuild itself failing under a run: the one Code Mode failure no program can cause, so the compiler is made
 * to fail here, as a dead or hung esbuild service makes it fail.
 */
import { env } from "cloudflare:test";
import { afterAll, describe, it, vi } from "vitest";
import type { Catalog } from "../calls/catalog.ts";

/** Code Mode's tools over a compiler whose esbuild service is down. */
async function withCompilerDown() {
  vi.resetModules();
  vi.doMock("../hooks/compiler/index.ts", async (original) => {
    // The fresh module graph's own error class, which is what Code Mode checks for.
    const compiler = await original<typeof import("../hooks/compiler/index.ts")>();
    return {
      ...compiler,
      compileProgram: async () => {
        throw new compiler.CompilerUnavailableError("esbuild did not answer within 10000 ms");
      },
    };
  });
  return import("./codemode.tools.ts");
}

describe("run_code when the compiler is down", () => {
  // Test files share one module registry (`isolate: false`): the failing compiler stays in this file.
  afterAll(() => {
    vi.doUnmock("../hooks/compiler/index.ts");
    vi.resetModules();
  });

  it("answers compiler_unavailable as an isError result, not a JSON-RPC error, and calls nothing", async ({ expect }) => {
    const { callCodeModeTool, RUN_CODE } = await withCompilerDown();
    const emptyCatalog = { tools: new Map(), targets: new Map() } as unknown as Catalog;
    const { result, inner } = await callCodeModeTool(
      {
        env,
        catalog: emptyCatalog,
        loadCatalog: async () => emptyCatalog,
        workspaceId: "ws_compiler_down",
        keyId: "key_compiler_down",
        profileId: null,
        grantSubject: "key:key_compiler_down",
        stillAuthorized: async () => true,
        requestId: "req_compiler_down",
        approvalLinks: { pages: "https://gateway.test/#/w/ws/approvals", api: "https://gateway.test/approvals" },
      },
      RUN_CODE,
      { code: "return 1;" },
    );
    expect(result.isError).toBe(true);
    expect(result._meta?.["dev.rayrun/error"]).toEqual({
      code: "compiler_unavailable",
      message: "The compiler failed and is being restarted, not because of the program; run it again",
      details: { retryAfterSeconds: 1 },
    });
    expect(inner).toEqual([]);
  });
});
