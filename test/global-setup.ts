import type { TestProject } from "vitest/node";
import { startDemoUpstream } from "../demo/upstream/http.ts";

/** Starts the real demo upstream MCP server (with test fixtures) for the whole run. */
export default async function setup(project: TestProject) {
  const upstream = await startDemoUpstream({ fixtures: true });
  project.provide("upstreamOrigin", upstream.origin);
  return () => upstream.close();
}
