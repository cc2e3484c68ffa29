// A real gateway for Node-side tests and scripts: the Worker under `wrangler dev`
// (local D1, R2 and Durable Objects in a fresh directory), the demo upstream
// MCP server, and a workspace seeded through the public API.
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { createHash } from "node:crypto";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startDemoUpstream, type DemoUpstream } from "../../demo/upstream/http.ts";

const root = join(import.meta.dirname, "../..");
export const BOOTSTRAP = "node-test-bootstrap-secret";
const quiet = { ...process.env, WRANGLER_SEND_METRICS: "false", WRANGLER_HIDE_BANNER: "true", CLOUDFLARE_CF_FETCH_ENABLED: "false" };

export interface RunningGateway {
  origin: string;
  upstream: DemoUpstream;
  stop(): Promise<void>;
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

export interface GatewayOptions extends WorkerOptions {
  /** Serve the demo upstream's test fixtures too (`/fixtures/…`), as the workerd tests' upstream does. */
  fixtures?: boolean;
}

/** The gateway Worker under `wrangler dev`, without any upstream of its own. */
export interface RunningWorker {
  origin: string;
  /** The `wrangler dev` process, whose tree holds workerd (the benchmarks read its memory). */
  pid: number | undefined;
  stop(): Promise<void>;
}

export interface WorkerOptions {
  /** The port to answer on (the benchmarks pin theirs); a free one when omitted. */
  port?: number;
  inspectorPort?: number;
  /** `BOOTSTRAP_SECRET`, for `POST /v1/workspaces`. */
  bootstrap?: string;
  /** The byte `SECRETS_KEY` is filled with (32 of them, base64): any fixed test key. */
  secretsKeyByte?: number;
  /** A folder served from the gateway's origin, as `npm start` serves the built console. */
  assets?: string;
  /** Turns on /dev/login (the browser sign-in that stands in for Cloudflare Access locally). */
  devLogin?: boolean;
  /** Sets PUBLIC_URL to the gateway's own origin (OAuth: the issuer, and the upstream OAuth callback's origin). */
  publicUrl?: boolean;
  /** Extra environment for `wrangler dev`, e.g. WRANGLER_REGISTRY_PATH so a Pages dev server can bind to it. */
  env?: Record<string, string>;
  /** Extra Worker variables (`--var NAME:value`), e.g. an OpenTelemetry endpoint. */
  vars?: Record<string, string>;
}

/**
 * Local state with every D1 migration applied, made once per set of migrations and copied for each gateway:
 * `wrangler d1 migrations apply` takes about 18 s for the 23 migrations (each one a workerd run), a copy
 * milliseconds, and CI starts six gateways. The folder is named by a hash of what its content depends on (the
 * migrations, wrangler.toml's D1 binding, the wrangler version) and lives under node_modules/.cache, so a fresh
 * clone builds it again.
 */
export function migratedState(): string {
  const migrations = join(root, "schema/migrations");
  const hash = createHash("sha256");
  hash.update(readFileSync(join(root, "wrangler.toml")));
  hash.update(readFileSync(join(root, "node_modules/wrangler/package.json")));
  for (const name of readdirSync(migrations).sort()) hash.update(name).update(readFileSync(join(migrations, name)));
  const template = join(root, "node_modules/.cache/rayrun-d1-state", hash.digest("hex").slice(0, 16));
  if (existsSync(template)) return template;
  // Built beside its final name and renamed, so a concurrent start (the two conformance runs) never copies half of it.
  const building = `${template}.${process.pid}`;
  rmSync(building, { recursive: true, force: true });
  mkdirSync(building, { recursive: true });
  const migrate = spawnSync("npx", ["wrangler", "d1", "migrations", "apply", "DB", "--local", "--persist-to", building], {
    cwd: root,
    env: quiet,
    encoding: "utf8",
  });
  if (migrate.status !== 0) throw new Error(`migrations failed: ${migrate.stderr}`);
  try {
    renameSync(building, template);
  } catch (error) {
    if (!existsSync(template)) throw error;
    rmSync(building, { recursive: true, force: true });
  }
  return template;
}

/**
 * The one way Node-side tests, the conformance run and the benchmarks start the gateway: D1 migrations applied to
 * a fresh state folder (a copy of migratedState()), then `wrangler dev` on loopback with the dev-only variables (private upstream hosts,
 * loopback Hosts for /mcp, the bootstrap secret and a fixed secrets key), waited for until it answers.
 */
export async function startGatewayWorker(options: WorkerOptions = {}): Promise<RunningWorker> {
  const persist = mkdtempSync(join(tmpdir(), "rayrun-gateway-"));
  cpSync(migratedState(), persist, { recursive: true });
  const port = options.port ?? (await freePort());
  const inspector = options.inspectorPort ?? (await freePort());
  let log = "";
  const child: ChildProcess = spawn(
    "npx",
    [
      "wrangler",
      "dev",
      "--local",
      "--ip",
      "127.0.0.1",
      "--port",
      String(port),
      "--inspector-port",
      String(inspector),
      "--persist-to",
      persist,
      "--var",
      "DEV_ALLOWED_HOSTS:127.0.0.1",
      // /mcp answers only the Hosts it is configured for (DNS-rebinding protection).
      "--var",
      "MCP_ALLOWED_HOSTS:localhost,127.0.0.1",
      "--var",
      `BOOTSTRAP_SECRET:${options.bootstrap ?? BOOTSTRAP}`,
      "--var",
      `SECRETS_KEY:${Buffer.alloc(32, options.secretsKeyByte ?? 3).toString("base64")}`,
      ...(options.assets ? ["--assets", options.assets] : []),
      ...(options.devLogin ? ["--var", "DEV_LOGIN:on"] : []),
      ...Object.entries(options.vars ?? {}).flatMap(([name, value]) => ["--var", `${name}:${value}`]),
      ...(options.publicUrl ? ["--var", `PUBLIC_URL:http://127.0.0.1:${port}`] : []),
      "--show-interactive-dev-session=false",
    ],
    { cwd: root, env: { ...quiet, ...options.env }, stdio: ["ignore", "pipe", "pipe"], detached: true },
  );
  child.stdout?.on("data", (chunk) => (log += chunk));
  child.stderr?.on("data", (chunk) => (log += chunk));
  const origin = `http://127.0.0.1:${port}`;
  const stop = async () => {
    try {
      if (child.pid) process.kill(-child.pid, "SIGTERM");
    } catch {
      // already gone
    }
    rmSync(persist, { recursive: true, force: true });
  };
  const deadline = Date.now() + 90_000;
  for (;;) {
    try {
      const res = await fetch(`${origin}/v1/openapi.json`);
      await res.arrayBuffer();
      if (res.ok) break;
    } catch {
      // not up yet
    }
    if (Date.now() > deadline || child.exitCode !== null) {
      await stop();
      throw new Error(`the gateway did not start:\n${log.slice(-3000)}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  return { origin, pid: child.pid, stop };
}

/** The gateway and the demo upstream beside it, on free ports. */
export async function startGateway(options: GatewayOptions = {}): Promise<RunningGateway> {
  const upstream = await startDemoUpstream({ host: "127.0.0.1", port: 0, fixtures: options.fixtures });
  try {
    const worker = await startGatewayWorker(options);
    return {
      origin: worker.origin,
      upstream,
      stop: async () => {
        await worker.stop();
        await upstream.close();
      },
    };
  } catch (error) {
    await upstream.close();
    throw error;
  }
}

export interface SeededWorkspace {
  ws: string;
  adminKey: string;
  defaultProfileId: string;
}

/** A workspace with the demo upstream connected as service `demo`. */
export async function seedWorkspace(gateway: RunningGateway, name = "cli test"): Promise<SeededWorkspace> {
  const created = await request(gateway.origin, "POST", "/v1/workspaces", BOOTSTRAP, { name });
  const seeded = { ws: created.workspace.id, adminKey: created.adminKey.secret, defaultProfileId: created.defaultProfileId };
  await request(gateway.origin, "POST", `/v1/workspaces/${seeded.ws}/services`, seeded.adminKey, {
    slug: "demo",
    url: `${gateway.upstream.origin}/mcp`,
  });
  return seeded;
}

export async function request(origin: string, method: string, path: string, key: string, body?: unknown) {
  const send = () =>
    fetch(`${origin}${path}`, {
      method,
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  // A kept-alive connection the dev server closed while idle fails as "other side closed" before the request was
  // read (seen on a loaded machine): that one failure is sent again once, on a new connection.
  const res = await send().catch((error: unknown) => {
    if ((error as { cause?: { code?: string } }).cause?.code !== "UND_ERR_SOCKET") throw error;
    return send();
  });
  const json = (await res.json()) as any;
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(json)}`);
  return json;
}
