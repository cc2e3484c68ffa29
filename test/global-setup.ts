import type { TestProject } from "vitest/node";
import { startDemoUpstream } from "../demo/upstream/http.ts";
import { startOAuthLab } from "./oauth-lab/lab.ts";
import { readQuickJSLayout } from "./quickjs-layout.ts";

/**
 * Starts the real demo upstream MCP server (with test fixtures) and the
 * OAuth lab (OAuth-protected upstreams on demand) for the whole run, and reads the QuickJS wasm layout (workerd tests cannot read files).
 */
export default async function setup(project: TestProject) {
  const upstream = await startDemoUpstream({ fixtures: true });
  const oauthLab = await startOAuthLab();
  project.provide("upstreamOrigin", upstream.origin);
  project.provide("oauthLabOrigin", oauthLab.origin);
  project.provide("quickjsLayout", await readQuickJSLayout());
  return async () => {
    await upstream.close();
    await oauthLab.close();
  };
}
