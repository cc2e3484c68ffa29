import type { TestProject } from "vitest/node";
import { startDemoUpstream } from "../demo/upstream/http.ts";
import { startEverything } from "./everything.ts";
import { startOAuthLab } from "./oauth-lab/lab.ts";
import { readQuickJSLayout } from "./quickjs-layout.ts";

/**
 * Starts the real demo upstream MCP server (with test fixtures) and the
 * OAuth lab (OAuth-protected upstreams on demand), the reference server-everything, for the whole run, and reads the QuickJS wasm layout (workerd tests cannot read files).
 */
export default async function setup(project: TestProject) {
  const upstream = await startDemoUpstream({ fixtures: true });
  const oauthLab = await startOAuthLab();
  const everything = await startEverything();
  project.provide("upstreamOrigin", upstream.origin);
  project.provide("oauthLabOrigin", oauthLab.origin);
  project.provide("everythingOrigin", everything.origin);
  project.provide("everythingStatsOrigin", everything.statsOrigin);
  project.provide("quickjsLayout", await readQuickJSLayout());
  return async () => {
    await upstream.close();
    await oauthLab.close();
    await everything.close();
  };
}
