// Every call on the record, end to end under `wrangler dev` with its real local queue: 1,000 calls of every outcome
// through /mcp and Code Mode (upstreams that answer, fail, go silent past the idle timeout, send too much, or are
// gone; clients that cancel), found exactly once in the API, in `rayrun logs` and in the rollups, and exported as
// OpenTelemetry traces to a local OTLP/HTTP receiver that decodes them (and refuses the first export, which the
// consumer must retry without doubling a row).
import { spawn, spawnSync } from "node:child_process";
import { createServer, type IncomingMessage, type Server } from "node:http";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterAll, beforeAll, describe, it } from "vitest";
import { startDemoUpstream } from "../../demo/upstream/http.ts";
import { request, seedWorkspace, startGateway, type RunningGateway, type SeededWorkspace } from "../../test/node/gateway.ts";

const root = join(import.meta.dirname, "../..");
const bundle = join(root, "cli/dist/rayrun.js");
const OTEL_TOKEN = "otel-test-token";

/** One span as OTLP/HTTP JSON carries it. */
interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  startTimeUnixNano: string;
  endTimeUnixNano: string;
  attributes: { key: string; value: { stringValue?: string; intValue?: string | number; doubleValue?: number; boolValue?: boolean } }[];
  status?: { code?: number };
}

/** A local OTLP/HTTP collector: decodes each export's JSON body, refuses the first one (503) and any without the token. */
class OtlpReceiver {
  readonly spans: (OtlpSpan & { service: string | undefined })[] = [];
  exports = 0;
  refused = 0;
  private server: Server | undefined;
  origin = "";

  async start(): Promise<void> {
    this.server = createServer(async (req, res) => {
      const body = await read(req);
      if (req.method !== "POST" || req.url !== "/v1/traces" || req.headers["content-type"] !== "application/json") {
        res.writeHead(404).end();
        return;
      }
      if (req.headers.authorization !== `Bearer ${OTEL_TOKEN}` || req.headers["x-tenant"] !== "rayrun tests") {
        res.writeHead(401).end();
        return;
      }
      this.exports++;
      if (this.exports === 1) {
        this.refused++;
        res.writeHead(503).end();
        return;
      }
      const decoded = JSON.parse(body) as {
        resourceSpans: { resource: { attributes: OtlpSpan["attributes"] }; scopeSpans: { spans: OtlpSpan[] }[] }[];
      };
      for (const resource of decoded.resourceSpans) {
        const service = resource.resource.attributes.find((attribute) => attribute.key === "service.name")?.value.stringValue;
        for (const scope of resource.scopeSpans) for (const span of scope.spans) this.spans.push({ ...span, service });
      }
      res.writeHead(200, { "content-type": "application/json" }).end("{}");
    });
    await new Promise<void>((resolve) => this.server!.listen(0, "127.0.0.1", resolve));
    const address = this.server.address() as { port: number };
    this.origin = `http://127.0.0.1:${address.port}`;
  }

  close(): Promise<void> {
    return new Promise((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }
}

const read = (req: IncomingMessage) =>
  new Promise<string>((resolve, reject) => {
    let text = "";
    req.setEncoding("utf8");
    req.on("data", (chunk: string) => (text += chunk));
    req.on("end", () => resolve(text));
    req.on("error", reject);
  });

const attribute = (span: OtlpSpan, key: string) => {
  const value = span.attributes.find((entry) => entry.key === key)?.value;
  // OTLP JSON writes 64-bit integers as strings.
  return value?.stringValue ?? (value?.intValue !== undefined ? Number(value.intValue) : (value?.doubleValue ?? value?.boolValue));
};

let gateway: RunningGateway;
let seeded: SeededWorkspace;
const receiver = new OtlpReceiver();

beforeAll(async () => {
  const built = spawnSync(process.execPath, [join(root, "cli/build.ts")], { encoding: "utf8" });
  if (built.status !== 0) throw new Error(built.stderr);
  await receiver.start();
  gateway = await startGateway({
    // The upstream's fixtures: a tool that goes silent, one that reports progress until cancelled, a hostile server.
    fixtures: true,
    vars: {
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.origin,
      OTEL_EXPORTER_OTLP_HEADERS: `authorization=Bearer%20${OTEL_TOKEN},x-tenant=rayrun%20tests`,
    },
  });
  seeded = await seedWorkspace(gateway, "every call");
  const connect = (slug: string, url: string) =>
    request(gateway.origin, "POST", `/v1/workspaces/${seeded.ws}/services`, seeded.adminKey, { slug, url });
  await connect("live", `${gateway.upstream.origin}/fixtures/interactive/logs/mcp`);
  await connect("evil", `${gateway.upstream.origin}/fixtures/hostile/logs/mcp`);
  // An upstream that answered when it was connected and is gone by the time it is called.
  const gone = await startDemoUpstream({ host: "127.0.0.1", port: 0 });
  await connect("gone", `${gone.origin}/mcp`);
  await gone.close();
}, 300_000);
afterAll(async () => {
  await gateway?.stop();
  await receiver.close();
});

function rayrun(args: string[]) {
  const result = spawnSync(process.execPath, [bundle, ...args], {
    cwd: mkdtempSync(join(tmpdir(), "rayrun-logs-")),
    encoding: "utf8",
    maxBuffer: 64 * 1024 * 1024,
    env: { ...process.env, RAYRUN_WORKSPACE: seeded.ws, RAYRUN_API_URL: gateway.origin, RAYRUN_API_KEY: seeded.adminKey },
  });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

async function agent(key: string): Promise<Client> {
  const client = new Client({ name: "logs-test-agent", version: "1.0.0" });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${gateway.origin}/mcp`), { requestInit: { headers: { authorization: `Bearer ${key}` } } }),
  );
  return client;
}

const key = async (name: string, profileId: string) =>
  (await request(gateway.origin, "POST", `/v1/workspaces/${seeded.ws}/keys`, seeded.adminKey, { name, scopes: ["tools:call"], profileId }))
    .secret as string;

/** A call its client cancels (notifications/cancelled) once `afterMs` have passed; it rejects with the reason. */
function cancelled(client: Client, name: string, args: Record<string, unknown>, afterMs: number): Promise<unknown> {
  const controller = new AbortController();
  setTimeout(() => controller.abort("the user pressed stop"), afterMs);
  return client.callTool({ name, arguments: args }, undefined, { signal: controller.signal }).then(
    () => {
      throw new Error(`${name} was not cancelled`);
    },
    (error: Error) => error.message,
  );
}

/** Runs `count` calls, `concurrency` at a time, each on one of that many clients. */
async function many(clients: Client[], count: number, call: (client: Client, index: number) => Promise<unknown>): Promise<void> {
  let next = 0;
  await Promise.all(
    clients.map(async (client) => {
      while (next < count) {
        const index = next++;
        await call(client, index).catch(() => undefined);
      }
    }),
  );
}

const metrics = async () =>
  (await request(gateway.origin, "GET", `/v1/workspaces/${seeded.ws}/metrics?step=60`, seeded.adminKey)) as {
    totals: { calls: number; outcomes: Record<string, number>; lost: number };
  };

const countBy = (rows: { outcome: string }[]) =>
  rows.reduce<Record<string, number>>((counts, row) => ({ ...counts, [row.outcome]: (counts[row.outcome] ?? 0) + 1 }), {});

describe("1,000 calls on the record", () => {
  it("finds exactly 1,000 call rows with the right outcome counts in the API, the CLI and the rollups", async ({ expect }) => {
    const tools = (await request(gateway.origin, "GET", `/v1/workspaces/${seeded.ws}/tools`, seeded.adminKey)).tools as {
      uid: string;
      name: string;
    }[];
    const deleteUid = tools.find((tool) => tool.name === "delete_record")!.uid;
    await request(gateway.origin, "PUT", `/v1/workspaces/${seeded.ws}/tools/${deleteUid}/policy`, seeded.adminKey, {
      profileId: seeded.defaultProfileId,
      mode: "approval",
    });
    const codeProfile = (await request(gateway.origin, "POST", `/v1/workspaces/${seeded.ws}/profiles`, seeded.adminKey, {
      name: "code mode",
      // A new profile blocks every tool unless it says otherwise.
      defaultMode: "allow",
      discovery: "code",
    })) as { id: string };
    const direct = await Promise.all(Array.from({ length: 6 }, async () => agent(await key("direct agent", seeded.defaultProfileId))));
    const coder = await agent(await key("code agent", codeProfile.id));

    // Code Mode: 20 runs of 4 inner calls (one goes through, one the upstream answers with an error, one whose answer
    // is too large, one that names no tool), 2 that do not compile.
    const program = [
      'await tools.demo__search_release_notes({ query: "sso" });',
      'try { await tools.demo__lookup_customer({ email: "nobody@example.com" }); } catch {}',
      "try { await tools.evil__declare_huge({}); } catch {}",
      "try { await tools.demo__no_such_tool({}); } catch {}",
      "return 1;",
    ].join("\n");
    for (let run = 0; run < 20; run++)
      expect((await coder.callTool({ name: "run_code", arguments: { code: program } })).isError).toBeFalsy();
    for (let run = 0; run < 2; run++) await coder.callTool({ name: "run_code", arguments: { code: "return (" } });
    // While the direct calls run: a run whose inner call the upstream leaves silent past the idle timeout (30 s), then
    // a run its client cancels during an inner call (one at a time: a workspace has one run waiting on tools).
    const slowRuns = (async () => {
      const quiet = "try { await tools.live__go_quiet({ seconds: 45 }); } catch {}\nreturn 1;";
      expect((await coder.callTool({ name: "run_code", arguments: { code: quiet } }, undefined, { timeout: 90_000 })).isError).toBeFalsy();
      const counting = "await tools.live__slow_count({ seconds: 20, every: 1 });\nreturn 1;";
      expect(await cancelled(coder, "run_code", { code: counting }, 2000)).toContain("the user pressed stop");
    })();
    // Direct calls the upstream leaves silent past the idle timeout, or the client cancels while they run. The
    // cancelled ones end first, on the same upstream session: under wrangler dev this caught a timed-out call that
    // awaited another request's cancellation send and failed with -32603 instead of answering upstream_timeout.
    const slowCalls = Promise.all([
      ...Array.from({ length: 3 }, (_, index) =>
        direct[index]!.callTool({ name: "live__go_quiet", arguments: { seconds: 45 } }, undefined, { timeout: 90_000 }),
      ),
      ...Array.from({ length: 5 }, (_, index) => cancelled(direct[index]!, "live__slow_count", { seconds: 20, every: 1 }, 1500)),
    ]);

    // One call held for approval, approved, then repeated: approval_required, then approved.
    const held = await direct[0]!.callTool({ name: "demo__delete_record", arguments: { id: "approved-one" } });
    const approvalId = (held._meta as { "dev.rayrun/error": { details: { approvalId: string } } })["dev.rayrun/error"].details.approvalId;
    await request(gateway.origin, "POST", `/v1/workspaces/${seeded.ws}/approvals/${approvalId}/approve`, seeded.adminKey, {});
    expect((await direct[0]!.callTool({ name: "demo__delete_record", arguments: { id: "approved-one" } })).isError).toBeFalsy();

    const expected = {
      hidden: 50 + 20,
      refused: 100,
      upstream_error: 100 + 20,
      // Answers too large (direct and inner), and an upstream that is gone.
      upstream_failed: 5 + 20 + 5,
      // Direct, and the quiet run's inner call.
      timed_out: 3 + 1,
      // Direct, the cancelled run's inner call, and the run.
      cancelled: 5 + 1 + 1,
      approval_required: 10 + 1,
      approved: 1,
      error: 2,
    };
    const content = 40;
    const okCount = 1000 - Object.values(expected).reduce((sum, n) => sum + n, 0);
    // ok: the direct calls, the content requests, the 20 runs and their 20 inner calls that went through, the quiet run.
    const directOk = okCount - content - 20 - 20 - 1;
    await many(direct, directOk, (client) => client.callTool({ name: "demo__search_release_notes", arguments: { query: "sso" } }));
    await many(direct, 100, (client) => client.callTool({ name: "demo__lookup_customer", arguments: { email: "nobody@example.com" } }));
    await many(direct, 100, (client) => client.callTool({ name: "demo__search_release_notes", arguments: { query: 5 } }));
    await many(direct, 50, (client) => client.callTool({ name: "demo__no_such_tool", arguments: {} }));
    await many(direct, 10, (client, index) => client.callTool({ name: "demo__delete_record", arguments: { id: `held-${index}` } }));
    await many(direct, 20, (client) => client.readResource({ uri: "rayrun://demo/notes://release/2.3.1" }));
    await many(direct, 20, (client) => client.getPrompt({ name: "demo__summarize_release", arguments: { version: "2.4.0" } }));
    await many(direct, 5, (client) => client.callTool({ name: "evil__declare_huge", arguments: {} }));
    await many(direct, 5, (client) => client.callTool({ name: "gone__search_release_notes", arguments: { query: "sso" } }));
    const timedOut = (await slowCalls).slice(0, 3) as { _meta?: { "dev.rayrun/error"?: { code: string } } }[];
    expect(timedOut.map((result) => result._meta?.["dev.rayrun/error"]?.code)).toEqual([
      "upstream_timeout",
      "upstream_timeout",
      "upstream_timeout",
    ]);
    await slowRuns;
    // A client's cancellation is a POST of its own, sent as the call rejects: closing the client at once would abort
    // it. The cancelled run's row is there once the gateway has it.
    for (const deadline = Date.now() + 60_000; Date.now() < deadline; await new Promise((resolve) => setTimeout(resolve, 250))) {
      const runs = await request(
        gateway.origin,
        "GET",
        `/v1/workspaces/${seeded.ws}/logs?kind=run_code&outcome=cancelled`,
        seeded.adminKey,
      );
      if (runs.calls.length) break;
    }
    await Promise.all([...direct, coder].map((client) => client.close()));
    const outcomes = { ok: okCount, ...expected };

    // The rollups: poll until every row has landed.
    const deadline = Date.now() + 120_000;
    let rolled = await metrics();
    while (rolled.totals.calls < 1000 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 500));
      rolled = await metrics();
    }
    expect(rolled.totals.calls).toBe(1000);
    expect(rolled.totals.outcomes).toEqual(outcomes);
    expect(rolled.totals.lost).toBe(0);

    // The API, paged with cursors.
    const rows: { id: number; outcome: string; kind: string }[] = [];
    let cursor: string | null = null;
    do {
      const page: { calls: typeof rows; nextCursor: string | null } = await request(
        gateway.origin,
        "GET",
        `/v1/workspaces/${seeded.ws}/logs?limit=300${cursor ? `&cursor=${cursor}` : ""}`,
        seeded.adminKey,
      );
      rows.push(...page.calls);
      cursor = page.nextCursor;
    } while (cursor);
    expect(rows).toHaveLength(1000);
    expect(new Set(rows.map((row) => row.id)).size).toBe(1000);
    expect(countBy(rows)).toEqual(outcomes);
    expect(countBy(rows.map((row) => ({ outcome: row.kind })))).toEqual({
      "tools/call": 1000 - content - 24,
      "resources/read": 20,
      "prompts/get": 20,
      run_code: 24,
    });

    // The CLI, every row as JSON lines.
    const listed = rayrun(["logs", "--all", "--json"]);
    expect(listed.status, listed.stderr).toBe(0);
    const lines = listed.stdout
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as { outcome: string });
    expect(lines).toHaveLength(1000);
    expect(countBy(lines)).toEqual(outcomes);
    const held10 = rayrun(["logs", "--outcome", "approval_required", "--limit", "5", "--json"]);
    expect(held10.stdout.trim().split("\n")).toHaveLength(5);
    const table = rayrun(["logs", "--kind", "run_code", "--outcome", "error"]);
    expect(table.stdout.trim().split("\n")).toHaveLength(2);
    expect(table.stdout).toContain("error (compile_failed)");
  }, 600_000);

  it("exports each call as a trace with its hook and upstream spans, retrying a refused export without doubling a row", async ({
    expect,
  }) => {
    const secret = await key("traced agent", seeded.defaultProfileId);
    const actor = `key:${(await request(gateway.origin, "GET", "/v1/whoami", secret)).id as string}`;
    const client = await agent(secret);
    await client.callTool({ name: "demo__search_release_notes", arguments: { query: "traced" } });
    await client.close();
    const deadline = Date.now() + 60_000;
    let mine: { requestId: string } | undefined;
    while (!mine && Date.now() < deadline) {
      mine = (await request(gateway.origin, "GET", `/v1/workspaces/${seeded.ws}/logs?actor=${actor}`, seeded.adminKey)).calls[0];
      if (!mine) await new Promise((resolve) => setTimeout(resolve, 250));
    }
    const spansOf = () => receiver.spans.filter((span) => attribute(span, "rayrun.request_id") === mine?.requestId);
    while (!spansOf().some((span) => span.kind === 2) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 250));
    const spans = spansOf();
    const call = spans.find((span) => span.kind === 2)!;
    expect(call).toMatchObject({ name: "tools/call demo__search_release_notes", service: "rayrun", status: { code: 1 } });
    expect(call.traceId).toMatch(/^[0-9a-f]{32}$/);
    expect(attribute(call, "mcp.method.name")).toBe("tools/call");
    expect(attribute(call, "gen_ai.tool.name")).toBe("demo__search_release_notes");
    expect(attribute(call, "rayrun.outcome")).toBe("ok");
    const upstream = spans.find((span) => span.kind === 3)!;
    expect(upstream).toMatchObject({ name: "upstream tools/call", traceId: call.traceId, parentSpanId: call.spanId });
    expect(BigInt(upstream.startTimeUnixNano)).toBeGreaterThanOrEqual(BigInt(call.startTimeUnixNano));
    expect(BigInt(upstream.endTimeUnixNano)).toBeLessThanOrEqual(BigInt(call.endTimeUnixNano) + 1_000_000n);

    // A Code Mode inner call's span is a child of its run's span, whichever batch brought each.
    const children = (run: OtlpSpan) =>
      receiver.spans.filter((span) => span.parentSpanId === run.spanId && attribute(span, "rayrun.call_index") !== undefined);
    const run = receiver.spans.find((span) => span.name === "run_code run_code" && children(span).length === 4)!;
    expect(run.traceId).toMatch(/^[0-9a-f]{32}$/);
    expect(new Set(children(run).map((span) => span.traceId))).toEqual(new Set([run.traceId]));
    expect(
      children(run)
        .map((span) => attribute(span, "rayrun.call_index"))
        .sort(),
    ).toEqual([0, 1, 2, 3]);

    // The first export was refused and retried: every row is still there exactly once.
    expect(receiver.refused).toBe(1);
    expect((await metrics()).totals.calls).toBe(1001);
  }, 120_000);
});

describe("rayrun logs", () => {
  it("follows new calls as they land, and refuses a bad --outcome or --limit with a usage error", async ({ expect }) => {
    const follower = spawn(process.execPath, [bundle, "logs", "--follow", "--json", "--kind", "prompts/get", "--limit", "1"], {
      env: { ...process.env, RAYRUN_WORKSPACE: seeded.ws, RAYRUN_API_URL: gateway.origin, RAYRUN_API_KEY: seeded.adminKey },
    });
    let out = "";
    follower.stdout.on("data", (chunk: Buffer) => (out += chunk.toString()));
    await new Promise((resolve) => setTimeout(resolve, 3000));
    const first = out.trim().split("\n").filter(Boolean).length;
    const client = await agent(await key("followed agent", seeded.defaultProfileId));
    await client.getPrompt({ name: "demo__summarize_release", arguments: { version: "2.3.1" } });
    await client.close();
    const deadline = Date.now() + 30_000;
    while (out.trim().split("\n").filter(Boolean).length === first && Date.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 200));
    follower.kill("SIGINT");
    const exit = await new Promise<number | null>((resolve) => follower.once("exit", resolve));
    expect(exit).toBe(0);
    const lines = out
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as { kind: string; actor: string });
    expect(lines.length).toBe(first + 1);
    expect(lines.at(-1)).toMatchObject({ kind: "prompts/get" });

    const bad = rayrun(["logs", "--outcome", "maybe"]);
    expect(bad.status).toBe(2);
    expect(bad.stderr).toContain("--outcome must be one of ok, approved");
    expect(rayrun(["logs", "--limit", "0"]).status).toBe(2);
    const refused = rayrun(["logs", "--since", "yesterday"]);
    expect(refused.status).not.toBe(0);
    expect(refused.stderr).toContain("query.since");
  }, 120_000);
});
