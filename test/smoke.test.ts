import { env } from "cloudflare:test";
import { inject, it } from "vitest";
import wasmModule from "@jitl/quickjs-wasmfile-release-sync/wasm";
import esbuildWasm from "esbuild-wasm/esbuild.wasm";
import { newQuickJSWASMModuleFromVariant, newVariant } from "quickjs-emscripten-core";
import releaseVariant from "@jitl/quickjs-wasmfile-release-sync";
import * as esbuild from "esbuild-wasm";

it("toolchain", async ({ expect }) => {
  const row = await env.DB.prepare("SELECT count(*) AS n FROM workspaces").first<{ n: number }>();
  expect(row?.n).toBe(0);
  const stub = env.WORKSPACE.getByName("x");
  expect(await stub.ping()).toBe("pong");
  const qjs = await newQuickJSWASMModuleFromVariant(newVariant(releaseVariant, { wasmModule }));
  expect(qjs.evalCode("1+2")).toBe(3);
  const t0 = Date.now();
  await esbuild.initialize({ wasmModule: esbuildWasm, worker: false });
  const out = await esbuild.transform("const x: number = 1; export default x", { loader: "ts" });
  console.log("esbuild", Date.now() - t0, out.code);
  const res = await fetch(`${inject("upstreamOrigin")}/__calls`);
  expect(res.status).toBe(200);
});
