// Runs the demo upstream MCP server on its own port: `node demo/upstream/main.ts [port] [--fixtures]`
// (`--fixtures` also serves the test fixtures under /fixtures/, as the benchmark's elicitation round trip needs).
import { startDemoUpstream } from "./http.ts";

const args = process.argv.slice(2);
const port = Number(args.find((arg) => !arg.startsWith("--")) ?? process.env.DEMO_UPSTREAM_PORT ?? 8788);
const upstream = await startDemoUpstream({ port, fixtures: args.includes("--fixtures") });
console.log(`demo upstream MCP server on ${upstream.origin}/mcp`);
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.on(signal, () => void upstream.close().then(() => process.exit(0)));
}
