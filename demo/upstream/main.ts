// Runs the demo upstream MCP server on its own port: `node demo/upstream/main.ts [port]`.
import { startDemoUpstream } from "./http.ts";

const port = Number(process.argv[2] ?? process.env.DEMO_UPSTREAM_PORT ?? 8788);
const upstream = await startDemoUpstream({ port });
console.log(`demo upstream MCP server on ${upstream.origin}/mcp`);
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.on(signal, () => void upstream.close().then(() => process.exit(0)));
}
