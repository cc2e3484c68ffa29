// `npm start` as a user runs it (scripts/start.ts on the npm scripts' Node 22, the
// real wrangler dev and demo upstream), in a state folder of its own: a second start on other ports updates
// the demo service it seeded, and a start that fails stops everything it started.
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, readFileSync } from "node:fs";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "vitest";
import { freePort } from "./gateway.ts";

const root = join(import.meta.dirname, "../..");

interface Started {
  child: ChildProcess;
  exited: Promise<number | null>;
  output: () => string;
}

/** `npm start`'s script with these ports, in a process group of its own; resolves once it says it is running, or once it exited. */
async function start(stateDir: string, gatewayPort: number, upstreamPort: number): Promise<Started> {
  const child = spawn(process.execPath, ["scripts/start.ts"], {
    cwd: root,
    env: { ...process.env, RAYRUN_STATE_DIR: stateDir, RAYRUN_PORT: String(gatewayPort), DEMO_UPSTREAM_PORT: String(upstreamPort) },
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  let text = "";
  child.stdout!.on("data", (chunk: Buffer) => (text += chunk.toString("utf8")));
  child.stderr!.on("data", (chunk: Buffer) => (text += chunk.toString("utf8")));
  const exited = new Promise<number | null>((resolve) => child.on("close", resolve));
  await Promise.race([
    exited,
    new Promise<void>((resolve) => {
      const poll = setInterval(() => {
        if (text.includes("Rayrun is running.")) {
          clearInterval(poll);
          resolve();
        }
      }, 200);
      void exited.then(() => clearInterval(poll));
    }),
  ]);
  return { child, exited, output: () => text };
}

/** Whether anything accepts connections on the port. */
function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, "127.0.0.1");
    socket.once("connect", () => (socket.destroy(), resolve(true)));
    socket.once("error", () => resolve(false));
  });
}

async function api(port: number, key: string, method: string, path: string, body?: unknown) {
  const res = await fetch(`http://127.0.0.1:${port}${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

describe("npm start", () => {
  it("updates the demo service it seeded when the ports change, and a failed start stops every process it started", async ({ expect }) => {
    const stateDir = mkdtempSync(join(tmpdir(), "rayrun-start-"));
    const [gatewayA, upstreamA, gatewayB, upstreamB] = [await freePort(), await freePort(), await freePort(), await freePort()];
    const credentialsOf = () =>
      JSON.parse(readFileSync(join(stateDir, "dev-credentials.json"), "utf8")) as { workspace: string; adminKey: string; mcpUrl: string };
    const demoService = async (port: number) => {
      const { workspace, adminKey } = credentialsOf();
      const listed = await api(port, adminKey, "GET", `/v1/workspaces/${workspace}/services`);
      return (listed.body.services as { id: string; slug: string; url: string }[]).find((service) => service.slug === "demo")!;
    };
    // Ctrl-C in a terminal: SIGINT to the foreground process group.
    const stopped = async (started: Started) => {
      process.kill(-started.child.pid!, "SIGINT");
      return started.exited;
    };

    const first = await start(stateDir, gatewayA, upstreamA);
    expect(first.output()).toContain("Rayrun is running.");
    expect((await demoService(gatewayA)).url).toBe(`http://127.0.0.1:${upstreamA}/mcp`);
    expect(await stopped(first)).toBe(0);
    expect([await listening(gatewayA), await listening(upstreamA)]).toEqual([false, false]);

    // Other ports, same state: the saved service and URLs follow instead of failing with upstream_unreachable.
    const second = await start(stateDir, gatewayB, upstreamB);
    expect(second.output()).toContain("Rayrun is running.");
    expect(second.output()).not.toContain("upstream_unreachable");
    // Nothing the console is built from changed: the second start does not build it again.
    expect(second.output()).toContain("The console is already built from these sources: not building it again.");
    const moved = await demoService(gatewayB);
    expect(moved.url).toBe(`http://127.0.0.1:${upstreamB}/mcp`);
    expect(credentialsOf().mcpUrl).toBe(`http://127.0.0.1:${gatewayB}/mcp`);
    // A URL that someone set by hand is theirs: the next start leaves it, and fails to index it.
    const { workspace, adminKey } = credentialsOf();
    expect(
      (
        await api(gatewayB, adminKey, "PATCH", `/v1/workspaces/${workspace}/services/${moved.id}`, {
          url: `http://127.0.0.1:${upstreamB}/elsewhere`,
        })
      ).status,
    ).toBe(200);
    expect(await stopped(second)).toBe(0);

    const failed = await start(stateDir, gatewayA, upstreamA);
    expect(await failed.exited).toBe(1);
    expect(failed.output()).toContain("npm start failed: Could not index the demo upstream");
    // wrangler dev (and its workerd) went with it: the gateway's port is free again, and so is the upstream's.
    expect([await listening(gatewayA), await listening(upstreamA)]).toEqual([false, false]);
  }, 600_000);
});
