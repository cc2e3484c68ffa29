import { spawn } from "node:child_process";
import { createServer } from "node:http";
import { createServer as createNetServer, type AddressInfo } from "node:net";
import { createRequire } from "node:module";

/**
 * The reference server `@modelcontextprotocol/server-everything` (Streamable HTTP, sessions, experimental tasks,
 * conditional tools), run as it ships, as an independent upstream. It logs each session it opens and each one a
 * DELETE (or anything else) closes; a small stats server beside it counts them from those lines, so a test can
 * see how many sessions the gateway left open.
 */
export async function startEverything(): Promise<{ origin: string; statsOrigin: string; close(): Promise<void> }> {
  const port = await freePort();
  const entry = createRequire(import.meta.url).resolve("@modelcontextprotocol/server-everything/dist/index.js");
  const child = spawn(process.execPath, [entry, "streamableHttp"], { env: { ...process.env, PORT: String(port) }, stdio: "pipe" });
  const opened = new Set<string>();
  const closed = new Set<string>();
  let output = "";
  const listening = new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server-everything did not start: ${output}`)), 20_000);
    const read = (chunk: Buffer) => {
      output += chunk.toString("utf8");
      for (const match of output.matchAll(/Session initialized with ID: (\S+)/g)) opened.add(match[1]!);
      for (const match of output.matchAll(/Transport closed for session (\S+?),/g)) closed.add(match[1]!);
      // Only the unread tail is kept: a line may be split across chunks.
      output = output.slice(Math.max(0, output.lastIndexOf("\n") + 1));
      if (/listening on port/.test(chunk.toString("utf8"))) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout.on("data", read);
    child.stderr.on("data", read);
  });
  await listening;
  const stats = createServer((_req, res) => {
    const open = [...opened].filter((id) => !closed.has(id));
    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ opened: opened.size, open: open.length }));
  });
  await new Promise<void>((resolve) => stats.listen(0, "127.0.0.1", resolve));
  return {
    origin: `http://127.0.0.1:${port}`,
    statsOrigin: `http://127.0.0.1:${(stats.address() as AddressInfo).port}`,
    close: async () => {
      child.kill();
      stats.closeAllConnections();
      await new Promise((resolve) => stats.close(resolve));
    },
  };
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createNetServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => resolve(port));
    });
  });
}
