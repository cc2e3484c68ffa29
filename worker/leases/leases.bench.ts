import { env } from "cloudflare:test";
import { benchWorkspace, request } from "../hooks/lifecycle/lifecycle.bench.ts";
import { LeaseHolder } from "./holder.ts";
import { LEASE_MS, SKEW_MARGIN_MS } from "./lease.types.ts";

export interface LeaseTimings {
  /** From a deploy request to its answer while another isolate holds a lease it keeps renewing, as traffic does. */
  deployWithOtherHolder: { p50Ms: number; maxMs: number };
  /** The same with no other holder: the deploying isolate gives its own lease up. */
  deployAlone: { p50Ms: number; maxMs: number };
  deploys: number;
  /** One lease grant from the workspace's Durable Object (one round trip). */
  grantRoundTripP50Ms: number;
  /** What the answer may take at most: a whole lease, the margin and one round trip. */
  targetMs: number;
}

const BEFORE_ONLY = (n: number) => `// revision ${n}
export default defineToolAdapter({
  apiVersion: "rayrun.hooks/v1",
  before({ arguments: args }) {
    return { action: "continue", arguments: args };
  },
});
`;

function summary(values: number[]) {
  const sorted = [...values].sort((a, b) => a - b);
  return { p50Ms: sorted[Math.floor((sorted.length - 1) / 2)]!, maxMs: sorted.at(-1)! };
}

/** Real clock, real Durable Object: a second lease holder stands for another isolate serving calls. */
export async function benchLeases(deploys = 8): Promise<LeaseTimings> {
  const bench = await benchWorkspace();
  const hook = `/v1/workspaces/${bench.ws}/tools/${bench.toolUid}/hook`;
  const json = { "content-type": "application/json" };
  const revisions: string[] = [];
  let etag = '"empty"';
  for (let n = 0; n < 2; n++) {
    const saved = await request(`${hook}/draft`, {
      method: "PUT",
      key: bench.key,
      headers: { ...json, "if-match": etag },
      body: JSON.stringify({ source: BEFORE_ONLY(n), config: {} }),
    });
    const { etag: next, versionId } = (await saved.json()) as { etag: string; versionId: string };
    etag = next;
    await request(`${hook}/test`, {
      method: "POST",
      key: bench.key,
      headers: json,
      body: JSON.stringify({ stage: "before", arguments: { query: "x" } }),
    });
    const created = await request(`${hook}/revisions`, {
      method: "POST",
      key: bench.key,
      headers: json,
      body: JSON.stringify({ versionId }),
    });
    if (created.status !== 201) throw new Error(`revision: ${created.status} ${await created.text()}`);
    revisions.push(((await created.json()) as { revisionId: string }).revisionId);
  }
  const deploy = async (n: number) => {
    const started = performance.now();
    const response = await request(`${hook}/deployments/active`, {
      method: "PUT",
      key: bench.key,
      headers: json,
      body: JSON.stringify({ revisionId: revisions[n % 2] }),
    });
    if (response.status !== 200) throw new Error(`deploy: ${response.status} ${await response.text()}`);
    await response.arrayBuffer();
    return performance.now() - started;
  };

  const alone: number[] = [];
  for (let n = 0; n < deploys; n++) alone.push(await deploy(n));

  const other = new LeaseHolder();
  const renewals: Promise<unknown>[] = [];
  let serving = true;
  // Another isolate's steady traffic: it uses its lease every 50 ms and renews it after half its life.
  const traffic = (async () => {
    while (serving) {
      await other.lease(env, bench.ws, (promise) => renewals.push(promise));
      await scheduler.wait(50);
    }
  })();
  const withOther: number[] = [];
  for (let n = 0; n < deploys; n++) withOther.push(await deploy(n));
  serving = false;
  await traffic;
  await Promise.allSettled(renewals);

  const grants: number[] = [];
  const probe = new LeaseHolder();
  for (let n = 0; n < 50; n++) {
    const started = performance.now();
    await probe.renew(env, bench.ws);
    grants.push(performance.now() - started);
  }
  const grantRoundTripP50Ms = summary(grants).p50Ms;
  return {
    deployWithOtherHolder: summary(withOther),
    deployAlone: summary(alone),
    deploys,
    grantRoundTripP50Ms,
    targetMs: LEASE_MS + SKEW_MARGIN_MS + grantRoundTripP50Ms,
  };
}
