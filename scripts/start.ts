// `npm start`: the whole product on this machine. Applies local D1 migrations,
// starts the demo upstream MCP server and the gateway (wrangler dev, local mode),
// seeds a demo workspace once, connects and indexes the demo upstream, and prints
// (and saves) the URLs and keys. A second run reuses the same data, and updates what it
// seeded itself (the demo service's URL, the saved URLs) when RAYRUN_PORT or
// DEMO_UPSTREAM_PORT changed. A start that fails stops every process it started.
// RAYRUN_STATE_DIR (default .rayrun/) keeps a second local instance's data apart.
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { startDemoUpstream } from "../demo/upstream/http.ts";

const root = join(import.meta.dirname, "..");
const stateDir = process.env.RAYRUN_STATE_DIR ?? join(root, ".rayrun");
const credentialsFile = join(stateDir, "dev-credentials.json");
const devVarsFile = join(stateDir, "dev.vars");
const gatewayPort = Number(process.env.RAYRUN_PORT ?? 8787);
const upstreamPort = Number(process.env.DEMO_UPSTREAM_PORT ?? 8788);
const apiUrl = `http://127.0.0.1:${gatewayPort}`;
/** The URL npm start gives the demo service: the local demo upstream on some port. */
const SEEDED_DEMO_URL = /^http:\/\/127\.0\.0\.1:\d+\/mcp$/;
// No metrics, no update check (it rides on the banner), no fetch of the `Request.cf` placeholder: localhost only.
const quietWrangler = {
  ...process.env,
  WRANGLER_SEND_METRICS: "false",
  WRANGLER_HIDE_BANNER: "true",
  CLOUDFLARE_CF_FETCH_ENABLED: "false",
};

interface DevCredentials {
  workspace: string;
  adminKey: string;
  clientKey: string;
  apiUrl: string;
  mcpUrl: string;
}

mkdirSync(stateDir, { recursive: true });
ensureDevSecrets();
run("npx", ["wrangler", "d1", "migrations", "apply", "DB", "--local", "--persist-to", join(stateDir, "state")]);
if (consoleBuildIsStale()) run("npm", ["run", "console:build"]);
else console.log("The console is already built from these sources: not building it again.");

const upstream = await startDemoUpstream({ port: upstreamPort });
// Its own process group (npx → wrangler → workerd), so stopping it stops all of them and frees the port.
const gateway = spawn(
  "npx",
  [
    "wrangler",
    "dev",
    "--local",
    "--ip",
    "127.0.0.1",
    "--port",
    String(gatewayPort),
    "--persist-to",
    join(stateDir, "state"),
    // Locally the built console is served from the gateway's origin; deployed,
    // it is a Pages site whose Function forwards /v1 to the gateway (console/functions).
    "--assets",
    "console/dist",
    "--env-file",
    devVarsFile,
    "--var",
    "DEV_LOGIN:on",
    "--var",
    "DEV_ALLOWED_HOSTS:127.0.0.1",
    // The OAuth issuer and MCP resource; /mcp also answers localhost (any port, e.g. a conformance proxy).
    "--var",
    `PUBLIC_URL:${apiUrl}`,
    "--var",
    "MCP_ALLOWED_HOSTS:localhost,127.0.0.1",
    "--show-interactive-dev-session=false",
  ],
  { cwd: root, env: quietWrangler, stdio: ["ignore", "inherit", "inherit"], detached: true },
);
const stop = stopWith(gateway, () => upstream.close());

let credentials: DevCredentials;
try {
  await waitForGateway();
  credentials = await seed();
  writeOwnerOnly(credentialsFile, `${JSON.stringify(credentials, null, 2)}\n`);
} catch (error) {
  // Nothing it started may outlive a failed start (a wrangler dev left running holds its port).
  console.error(`npm start failed: ${error instanceof Error ? error.message : String(error)}`);
  await stop(1);
  throw error;
}
console.log(`
Rayrun is running.
  Console          ${apiUrl}/
  REST API         ${credentials.apiUrl}/v1   (OpenAPI: ${credentials.apiUrl}/v1/openapi.json)
  MCP endpoint     ${credentials.mcpUrl}
  Demo upstream    ${upstream.origin}/mcp
  Workspace        ${credentials.workspace}
  Admin key        ${credentials.adminKey}
  Client key       ${credentials.clientKey}   (tools:call, default profile)
  Dev login        dev@rayrun.local (POST ${apiUrl}/dev/login)
Saved to ${credentialsFile}. Press Ctrl-C to stop.
`);

/** Secrets the local gateway needs, generated once and kept so stored service headers stay readable. */
function ensureDevSecrets(): void {
  if (existsSync(devVarsFile)) return;
  const lines = [`BOOTSTRAP_SECRET=${randomBytes(24).toString("base64url")}`, `SECRETS_KEY=${randomBytes(32).toString("base64")}`];
  writeOwnerOnly(devVarsFile, `${lines.join("\n")}\n`);
}

/**
 * Keys and secrets are readable by this user only (0600). `mode` applies only
 * when the file is created, so the chmod also fixes a file an earlier run left
 * world-readable.
 */
function writeOwnerOnly(file: string, text: string): void {
  writeFileSync(file, text, { mode: 0o600 });
  chmodSync(file, 0o600);
}

function devSecret(name: string): string {
  const line = readFileSync(devVarsFile, "utf8")
    .split("\n")
    .find((l) => l.startsWith(`${name}=`));
  if (!line) throw new Error(`${devVarsFile} lacks ${name}; delete it to regenerate`);
  return line.slice(name.length + 1);
}

/**
 * Whether the console must be built: no build yet, or a file it is built from (its sources, the schema types it
 * imports, the lockfile) changed after the last one. Building takes 10-20 s, so a restart with an unchanged console
 * skips it. Folders count by their own time too, so a deleted source also rebuilds.
 */
function consoleBuildIsStale(): boolean {
  const output = join(root, "console/dist");
  const built = join(output, "index.html");
  if (!existsSync(built)) return true;
  const builtAt = statSync(built).mtimeMs;
  const newerThanBuild = (path: string): boolean => {
    if (path === output) return false;
    const stat = statSync(path);
    if (stat.mtimeMs > builtAt) return true;
    return stat.isDirectory() && readdirSync(path).some((name) => newerThanBuild(join(path, name)));
  };
  return ["console", "schema", "package-lock.json"].some((path) => newerThanBuild(join(root, path)));
}

function run(command: string, args: string[]): void {
  const result = spawnSync(command, args, { cwd: root, env: quietWrangler, stdio: "inherit" });
  if (result.status !== 0) throw new Error(`${command} ${args.join(" ")} failed with exit code ${result.status}`);
}

/** Stops the gateway's whole process group and the upstream, then exits: on Ctrl-C, on SIGTERM, on a failed start, or when wrangler dies. */
function stopWith(child: ChildProcess, cleanup: () => Promise<void>): (code: number) => Promise<never> {
  let stopping: Promise<never> | undefined;
  const stop = (code: number) =>
    (stopping ??= (async () => {
      try {
        if (child.exitCode === null && child.signalCode === null) process.kill(-child.pid!, "SIGTERM");
      } catch {
        // already gone
      }
      await Promise.race([new Promise((resolve) => child.once("close", resolve)), new Promise((resolve) => setTimeout(resolve, 5000))]);
      await cleanup().catch(() => undefined);
      process.exit(code);
    })());
  process.on("SIGINT", () => void stop(0));
  process.on("SIGTERM", () => void stop(0));
  child.on("exit", (code) => {
    if (stopping) return;
    console.error(`wrangler dev exited (${code ?? "signal"})`);
    void stop(code ?? 1);
  });
  return stop;
}

async function waitForGateway(): Promise<void> {
  for (let attempt = 0; attempt < 240; attempt++) {
    try {
      const res = await fetch(`${apiUrl}/v1/openapi.json`);
      if (res.ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  throw new Error(`The gateway did not start on ${apiUrl} within 2 minutes`);
}

async function call(path: string, init: { method?: string; key?: string; body?: unknown; auth?: string } = {}) {
  const res = await fetch(`${apiUrl}${path}`, {
    method: init.method ?? (init.body === undefined ? "GET" : "POST"),
    headers: {
      ...(init.body === undefined ? {} : { "content-type": "application/json" }),
      authorization: `Bearer ${init.auth ?? init.key}`,
    },
    body: init.body === undefined ? undefined : JSON.stringify(init.body),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null };
}

/** Reuses saved credentials while they still work; otherwise creates the demo workspace. */
async function seed(): Promise<DevCredentials> {
  const saved = existsSync(credentialsFile) ? (JSON.parse(readFileSync(credentialsFile, "utf8")) as DevCredentials) : null;
  const stillValid = saved && (await call(`/v1/workspaces/${saved.workspace}`, { key: saved.adminKey })).status === 200;
  const credentials = stillValid ? { ...saved, apiUrl, mcpUrl: `${apiUrl}/mcp` } : await createDemoWorkspace();
  await connectDemoUpstream(credentials);
  return credentials;
}

async function createDemoWorkspace(): Promise<DevCredentials> {
  const created = await call("/v1/workspaces", {
    auth: devSecret("BOOTSTRAP_SECRET"),
    body: { name: "Demo workspace", adminEmail: "dev@rayrun.local" },
  });
  if (created.status !== 201) throw new Error(`Could not create the demo workspace: ${JSON.stringify(created.body)}`);
  const workspace = created.body.workspace.id as string;
  const adminKey = created.body.adminKey.secret as string;
  const client = await call(`/v1/workspaces/${workspace}/keys`, {
    key: adminKey,
    body: { name: "demo agent", scopes: ["tools:call"], profileId: created.body.defaultProfileId },
  });
  if (client.status !== 201) throw new Error(`Could not create the client key: ${JSON.stringify(client.body)}`);
  return { workspace, adminKey, clientKey: client.body.secret, apiUrl, mcpUrl: `${apiUrl}/mcp` };
}

/**
 * Registers the demo upstream as service `demo`, or re-indexes it when it already exists. A demo
 * service npm start made on another DEMO_UPSTREAM_PORT is pointed at this one first; one whose URL
 * someone changed to anything else is theirs, and left as it is.
 */
async function connectDemoUpstream({ workspace, adminKey }: DevCredentials): Promise<void> {
  const listed = await call(`/v1/workspaces/${workspace}/services`, { key: adminKey });
  if (listed.status !== 200) throw new Error(`Could not list the services: ${JSON.stringify(listed.body)}`);
  const existing = (listed.body.services as { id: string; slug: string; url: string }[]).find((service) => service.slug === "demo");
  const url = `http://127.0.0.1:${upstreamPort}/mcp`;
  if (existing && existing.url !== url && SEEDED_DEMO_URL.test(existing.url)) {
    const moved = await call(`/v1/workspaces/${workspace}/services/${existing.id}`, { key: adminKey, method: "PATCH", body: { url } });
    if (moved.status !== 200) throw new Error(`Could not point the demo service at ${url}: ${JSON.stringify(moved.body)}`);
  }
  const result = existing
    ? await call(`/v1/workspaces/${workspace}/services/${existing.id}/refresh`, { key: adminKey, method: "POST" })
    : await call(`/v1/workspaces/${workspace}/services`, { key: adminKey, body: { slug: "demo", url } });
  if (result.status >= 300) throw new Error(`Could not index the demo upstream: ${JSON.stringify(result.body)}`);
}
