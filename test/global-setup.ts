import type { TestProject } from "vitest/node";
import { startDemoUpstream } from "../demo/upstream/http.ts";
import { readQuickJSLayout } from "./quickjs-layout.ts";

/**
 * Starts the real demo upstream MCP server (with test fixtures) for the whole
 * run, and reads the QuickJS wasm layout (workerd tests cannot read files).
 */
export default async function setup(project: TestProject) {
  const upstream = await startDemoUpstream({ fixtures: true });
  project.provide("upstreamOrigin", upstream.origin);
  project.provide("quickjsLayout", await readQuickJSLayout());
  return () => upstream.close();
}
