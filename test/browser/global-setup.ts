// One real gateway for every browser test file: the Worker under `wrangler dev`
// serving the freshly built console as assets (the `npm start` path), with the
// dev login on, plus the console as Cloudflare Pages runs it (`wrangler pages
// dev`: static files and the Function that forwards /v1/* over a service
// binding to that same gateway). Both register in a private dev registry, so
// other gateways running on this machine are never picked up.
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { TestProject } from "vitest/node";
import { BOOTSTRAP, freePort, request, startGateway, type RunningGateway } from "../node/gateway.ts";
import { startOAuthLab } from "../oauth-lab/lab.ts";

const root = join(import.meta.dirname, "../..");
export const ADMIN_EMAIL = "admin@rayrun.test";

export interface BrowserFixture {
  /** The gateway's origin, which also serves the built console. */
  origin: string;
  /** The console as Pages serves it, forwarding /v1 to the gateway. */
  pagesOrigin: string;
  upstreamOrigin: string;
  /** The OAuth lab's control server (test/oauth-lab/lab.ts): `POST /labs` starts an OAuth-protected upstream. */
  oauthLabOrigin: string;
  ws: string;
  adminKey: string;
  defaultProfileId: string;
}

declare module "vitest" {
  export interface ProvidedContext {
    fixture: BrowserFixture;
  }
}

let gateway: RunningGateway | undefined;
let pages: ChildProcess | undefined;
let registry: string | undefined;
let oauthLab: Awaited<ReturnType<typeof startOAuthLab>> | undefined;

export async function setup(project: TestProject): Promise<void> {
  const built = spawnSync("npx", ["vite", "build", "console", "--logLevel", "warn"], { cwd: root, encoding: "utf8" });
  if (built.status !== 0) throw new Error(`console build failed:\n${built.stdout}${built.stderr}`);
  registry = mkdtempSync(join(tmpdir(), "rayrun-registry-"));
  // Wrangler reads the first, Miniflare the second; both processes must agree.
  const env = { WRANGLER_REGISTRY_PATH: registry, CLOUDFLARE_DEV_REGISTRY_PATH: registry };
  gateway = await startGateway({ assets: "console/dist", devLogin: true, env, fixtures: true, publicUrl: true });
  oauthLab = await startOAuthLab();
  const pagesOrigin = await startPages(env);
  const created = await request(gateway.origin, "POST", "/v1/workspaces", BOOTSTRAP, { name: "Browser tests", adminEmail: ADMIN_EMAIL });
  const ws = created.workspace.id as string;
  const adminKey = created.adminKey.secret as string;
  await request(gateway.origin, "POST", `/v1/workspaces/${ws}/services`, adminKey, {
    slug: "demo",
    url: `${gateway.upstream.origin}/mcp`,
  });
  project.provide("fixture", {
    origin: gateway.origin,
    pagesOrigin,
    upstreamOrigin: gateway.upstream.origin,
    oauthLabOrigin: oauthLab.origin,
    ws,
    adminKey,
    defaultProfileId: created.defaultProfileId,
  });
}

export async function teardown(): Promise<void> {
  try {
    if (pages?.pid) process.kill(-pages.pid, "SIGTERM");
  } catch {
    // already gone
  }
  await gateway?.stop();
  await oauthLab?.close();
  if (registry) rmSync(registry, { recursive: true, force: true });
}

async function startPages(env: Record<string, string>): Promise<string> {
  const [port, inspector] = [await freePort(), await freePort()];
  let log = "";
  // console/ has its own package.json so that Wrangler takes it, not the repository root, as the project.
  pages = spawn(
    process.execPath,
    [
      join(root, "node_modules/wrangler/bin/wrangler.js"),
      "pages",
      "dev",
      "--ip",
      "127.0.0.1",
      "--port",
      String(port),
      "--inspector-port",
      String(inspector),
      "--show-interactive-dev-session=false",
    ],
    {
      cwd: join(root, "console"),
      env: { ...process.env, WRANGLER_SEND_METRICS: "false", WRANGLER_HIDE_BANNER: "true", CLOUDFLARE_CF_FETCH_ENABLED: "false", ...env },
      stdio: ["ignore", "pipe", "pipe"],
      detached: true,
    },
  );
  pages.stdout?.on("data", (chunk) => (log += chunk));
  pages.stderr?.on("data", (chunk) => (log += chunk));
  const origin = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 60_000;
  for (;;) {
    try {
      // Ready once the Function reaches the gateway: an unauthenticated /v1 call is the gateway's 401.
      const res = await fetch(`${origin}/v1/whoami`, { signal: AbortSignal.timeout(5000) });
      await res.arrayBuffer();
      if (res.status === 401) return origin;
    } catch {
      // not up yet
    }
    if (Date.now() > deadline || pages.exitCode !== null) throw new Error(`wrangler pages dev did not start:\n${log.slice(-3000)}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}
