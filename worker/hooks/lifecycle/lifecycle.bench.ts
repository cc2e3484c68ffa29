import { env, SELF } from "cloudflare:test";
import { newId, nowIso } from "../../lib/ids.ts";
import { SEARCH_HOOK } from "./lifecycle.fixtures.ts";

const ORIGIN = "https://rayrun.bench";

export interface LifecycleTimings {
  /** p50 of one draft save through the API (format, DO etag check and quotas, D1 version insert). */
  draftSaveP50Ms: number;
  saves: number;
  /** p50 of one page of the version list, and the whole walk, over `versions` versions. */
  versionPageP50Ms: number;
  versionListTotalMs: number;
  versions: number;
  pageSize: number;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

export async function request(path: string, init: RequestInit & { key: string }): Promise<Response> {
  const headers = new Headers(init.headers);
  headers.set("authorization", `Bearer ${init.key}`);
  return SELF.fetch(`${ORIGIN}${path}`, { ...init, headers });
}

/** A workspace with one tool, written straight to D1: the bench needs no upstream. */
export async function benchWorkspace(): Promise<{ ws: string; key: string; toolUid: string }> {
  const created = await SELF.fetch(`${ORIGIN}/v1/workspaces`, {
    method: "POST",
    headers: { authorization: `Bearer ${env.BOOTSTRAP_SECRET}`, "content-type": "application/json" },
    body: JSON.stringify({ name: "lifecycle bench" }),
  });
  if (created.status !== 201) throw new Error(`workspace: ${created.status}`);
  const { workspace, adminKey } = (await created.json()) as { workspace: { id: string }; adminKey: { secret: string } };
  const serviceId = newId("svc");
  const toolUid = newId("tool");
  const now = nowIso();
  const definition = { name: "search", inputSchema: { type: "object", properties: { query: { type: "string" } } } };
  await env.DB.batch([
    env.DB.prepare(
      "INSERT INTO services (id, workspace_id, slug, url, created_at) VALUES (?, ?, 'bench', 'https://bench.invalid/mcp', ?)",
    ).bind(serviceId, workspace.id, now),
    env.DB.prepare(
      `INSERT INTO tools (uid, workspace_id, service_id, name, definition, definition_hash, approved_hash, status, first_seen_at, updated_at)
       VALUES (?, ?, ?, 'search', ?, 'h', 'h', 'active', ?, ?)`,
    ).bind(toolUid, workspace.id, serviceId, JSON.stringify(definition), now, now),
  ]);
  return { ws: workspace.id, key: adminKey.secret, toolUid };
}

/** Versions inserted directly, in batches: the draft save quota (120/hour) would take days to fill 10,000 through the API. */
async function seedVersions(ws: string, toolUid: string, count: number): Promise<void> {
  const createdAt = nowIso();
  for (let start = 0; start < count; start += 500) {
    const statements = Array.from({ length: Math.min(500, count - start) }, (_, offset) =>
      env.DB.prepare(
        `INSERT INTO hook_versions (id, workspace_id, tool_uid, source, config, content_hash, bytes, note, restored_from, actor_id, actor_kind, channel, created_at, number)
         VALUES (?, ?, ?, ?, '{}', ?, ?, NULL, NULL, 'key_bench', 'key', 'api', ?, ?)`,
      ).bind(
        newId("hv"),
        ws,
        toolUid,
        `// ${start + offset}\n${SEARCH_HOOK}`,
        `hash${start + offset}`,
        SEARCH_HOOK.length,
        createdAt,
        start + offset + 1,
      ),
    );
    await env.DB.batch(statements);
  }
}

/**
 * Draft save latency through the whole API path, and listing a tool's 10,000
 * versions page by page. Saves stay under the hourly save quota.
 */
export async function benchLifecycle(options: { saves?: number; versions?: number; pageSize?: number } = {}): Promise<LifecycleTimings> {
  const saves = Math.min(options.saves ?? 100, 120);
  const versions = options.versions ?? 10_000;
  const pageSize = options.pageSize ?? 200;

  const bench = await benchWorkspace();
  const hook = `/v1/workspaces/${bench.ws}/tools/${bench.toolUid}/hook`;
  const saveTimes: number[] = [];
  let etag = '"empty"';
  for (let n = 0; n < saves; n++) {
    const started = performance.now();
    const response = await request(`${hook}/draft`, {
      method: "PUT",
      key: bench.key,
      headers: { "content-type": "application/json", "if-match": etag },
      body: JSON.stringify({ source: `// save ${n}\n${SEARCH_HOOK}`, config: { n } }),
    });
    saveTimes.push(performance.now() - started);
    if (response.status !== 200) throw new Error(`save ${n}: ${response.status} ${await response.text()}`);
    etag = ((await response.json()) as { etag: string }).etag;
  }

  const listed = await benchWorkspace();
  await seedVersions(listed.ws, listed.toolUid, versions);
  const pageTimes: number[] = [];
  let cursor: string | null = null;
  let seen = 0;
  const walkStarted = performance.now();
  do {
    const started = performance.now();
    const query = `?limit=${pageSize}${cursor ? `&cursor=${cursor}` : ""}`;
    const response = await request(`/v1/workspaces/${listed.ws}/tools/${listed.toolUid}/hook/versions${query}`, { key: listed.key });
    const page = (await response.json()) as { versions: unknown[]; nextCursor: string | null };
    pageTimes.push(performance.now() - started);
    seen += page.versions.length;
    cursor = page.nextCursor;
  } while (cursor);
  const versionListTotalMs = performance.now() - walkStarted;
  if (seen !== versions) throw new Error(`listed ${seen} of ${versions} versions`);

  return {
    draftSaveP50Ms: median(saveTimes),
    saves,
    versionPageP50Ms: median(pageTimes),
    versionListTotalMs,
    versions,
    pageSize,
  };
}
