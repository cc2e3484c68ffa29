// `npm run test:conformance`: the official MCP conformance suite (@modelcontextprotocol/conformance)
// against the gateway, as CI runs it. Starts the suite's upstream fixture and the gateway
// (wrangler dev, local), seeds a workspace with the fixture as services `ref` and `schemas`, puts the
// key proxy in front, runs every server scenario, and compares each outcome with
// expectations.json. Fails when a scenario expected to pass does not, and when one expected to fail
// now passes, so the file stays true.
import { spawn } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { quietEnv } from "../../bench/lib.ts";
import { startGatewayWorker } from "../node/gateway.ts";
import { startFixtureServer } from "./fixture-server.ts";
import { startKeyProxy, type NameMap } from "./key-proxy.ts";

const root = join(import.meta.dirname, "../..");
/**
 * Which suite: with no argument the pinned 0.1.16 (the 2025-era revisions, every scenario); with `2026-07-28`
 * the 0.2.0 prerelease, exactly the scenarios that revision requires, each judged by its own expectations file.
 */
const revision = process.argv[2];
if (revision !== undefined && revision !== "2026-07-28") throw new Error(`unknown revision ${revision}; only 2026-07-28`);
const suitePackage = revision ? "@modelcontextprotocol/conformance-2026" : "@modelcontextprotocol/conformance";
const expectationsFile = join(import.meta.dirname, revision ? `expectations-${revision}.json` : "expectations.json");
const BOOTSTRAP = "conformance-bootstrap-secret";

/**
 * What a scenario's checks add up to: no failure and a SUCCESS passes; only warnings or notes does not
 * apply; failures that are all the gateway answering `-32601 Method not found` do not apply either (the
 * suite calls some methods, such as resources/subscribe, whether or not initialize advertised them, and
 * -32601 is what the spec asks of a server that does not offer one); any other FAILURE fails it.
 */
type Outcome = "pass" | "fail" | "not applicable";

const METHOD_NOT_OFFERED = /\bMCP error -32601: Method not found$/;

/** Per scenario: "pass", "not yet: <why, with the issue item>", or "not applicable: <why>". */
type Expectations = Record<string, string>;

interface Check {
  id: string;
  status: "SUCCESS" | "FAILURE" | "WARNING" | "INFO" | "SKIPPED";
  errorMessage?: string;
}

const expectedOutcome = (expectation: string): Outcome =>
  expectation === "pass" ? "pass" : expectation.startsWith("not applicable:") ? "not applicable" : "fail";

function outcomeOf(checks: Check[]): Outcome {
  const failures = checks.filter((check) => check.status === "FAILURE");
  if (failures.length) return failures.every((check) => METHOD_NOT_OFFERED.test(check.errorMessage ?? "")) ? "not applicable" : "fail";
  return checks.some((check) => check.status === "SUCCESS") ? "pass" : "not applicable";
}

async function call<T>(origin: string, path: string, auth: string, body?: unknown): Promise<T> {
  const res = await fetch(`${origin}${path}`, {
    method: body === undefined ? "GET" : "POST",
    headers: { authorization: `Bearer ${auth}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  if (res.status >= 300) throw new Error(`${path}: ${res.status} ${text}`);
  return JSON.parse(text) as T;
}

/** A workspace with the fixture's two endpoints as services, a client key, and the suite's names for its tools. */
async function seed(gatewayOrigin: string, fixtureOrigin: string): Promise<{ clientKey: string; names: NameMap }> {
  const created = await call<{ workspace: { id: string }; adminKey: { secret: string }; defaultProfileId: string }>(
    gatewayOrigin,
    "/v1/workspaces",
    BOOTSTRAP,
    { name: "Conformance" },
  );
  const ws = created.workspace.id;
  const admin = created.adminKey.secret;
  await call(gatewayOrigin, `/v1/workspaces/${ws}/services`, admin, { slug: "ref", url: `${fixtureOrigin}/mcp` });
  await call(gatewayOrigin, `/v1/workspaces/${ws}/services`, admin, { slug: "schemas", url: `${fixtureOrigin}/schemas/mcp` });
  const key = await call<{ secret: string }>(gatewayOrigin, `/v1/workspaces/${ws}/keys`, admin, {
    name: "conformance suite",
    scopes: ["tools:call"],
    profileId: created.defaultProfileId,
  });
  const { tools } = await call<{ tools: { name: string; publicName: string }[] }>(gatewayOrigin, `/v1/workspaces/${ws}/tools`, admin);
  return {
    clientKey: key.secret,
    names: {
      toGateway: new Map(tools.map((tool) => [tool.name, tool.publicName])),
      toSuite: new Map(tools.map((tool) => [tool.publicName, tool.name])),
      contentService: "ref",
    },
  };
}

/** Runs the whole suite against `url`; returns each scenario's checks. */
async function runSuite(url: string, outputDir: string): Promise<Map<string, Check[]>> {
  const bin = join(root, "node_modules", suitePackage, "dist/index.js");
  const select = revision ? ["--requirements", revision] : ["--suite", "all"];
  const suite = spawn(process.execPath, [bin, "server", "--url", url, ...select, "-o", outputDir], {
    cwd: root,
    env: quietEnv,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let log = "";
  suite.stdout.on("data", (chunk) => (log += chunk));
  suite.stderr.on("data", (chunk) => (log += chunk));
  await new Promise((resolve) => suite.on("exit", resolve));
  const results = new Map<string, Check[]>();
  for (const dir of readdirSync(outputDir)) {
    // server-<scenario>-<ISO timestamp with dashes>
    const scenario = /^server-(.+)-\d{4}-\d{2}-\d{2}T[\d-]+Z$/.exec(dir)?.[1];
    if (scenario) results.set(scenario, JSON.parse(readFileSync(join(outputDir, dir, "checks.json"), "utf8")) as Check[]);
  }
  if (!results.size) throw new Error(`The conformance suite produced no results:\n${log.slice(-3000)}`);
  return results;
}

function compare(expectations: Expectations, results: Map<string, Check[]>): string[] {
  const problems: string[] = [];
  for (const [scenario, checks] of results) {
    const expectation = expectations[scenario];
    const actual = outcomeOf(checks);
    const failures = checks
      .filter((check) => check.status === "FAILURE")
      .map((check) => `${check.id}: ${check.errorMessage ?? ""}`)
      .join("; ");
    const matches = expectation !== undefined && expectedOutcome(expectation) === actual;
    console.log(
      `${matches ? "as expected" : "DIFFERENT  "}  ${actual.padEnd(14)} ${scenario}${failures ? `  (${failures.slice(0, 300)})` : ""}`,
    );
    if (expectation === undefined)
      problems.push(
        `${scenario}: not in expectations.json (it ${actual === "pass" ? "passes" : actual === "fail" ? "fails" : "does not apply"})`,
      );
    else if (expectedOutcome(expectation) !== actual) {
      problems.push(
        `${scenario}: expected "${expectation}", but it ${actual === "pass" ? "passes: update expectations.json" : `is ${actual}: ${failures}`}`,
      );
    }
  }
  for (const scenario of Object.keys(expectations)) {
    if (!results.has(scenario)) problems.push(`${scenario}: in expectations.json, but the suite no longer runs it`);
  }
  return problems;
}

async function main(): Promise<void> {
  const started = Date.now();
  const expectations = JSON.parse(readFileSync(expectationsFile, "utf8")) as Expectations;
  const work = mkdtempSync(join(tmpdir(), "rayrun-conformance-"));
  const fixture = await startFixtureServer();
  const gateway = await startGatewayWorker({ bootstrap: BOOTSTRAP, secretsKeyByte: 9 });
  let proxy: Awaited<ReturnType<typeof startKeyProxy>> | undefined;
  try {
    const gatewayOrigin = gateway.origin;
    const { clientKey, names } = await seed(gatewayOrigin, fixture.origin);
    proxy = await startKeyProxy(gatewayOrigin, clientKey, names);
    const results = await runSuite(proxy.url, join(work, "results"));
    const problems = compare(expectations, results);
    console.log(`\nConformance (${revision ?? "2025-era"}): ${results.size} scenarios in ${((Date.now() - started) / 1000).toFixed(0)} s`);
    if (problems.length) {
      console.error(`\n${problems.length} scenario(s) differ from ${expectationsFile}:\n  ${problems.join("\n  ")}`);
      process.exitCode = 1;
    }
  } finally {
    await proxy?.close();
    await gateway.stop();
    await fixture.close();
    rmSync(work, { recursive: true, force: true });
  }
}

await main();
