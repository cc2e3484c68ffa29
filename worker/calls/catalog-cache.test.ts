/**
 * The isolate's catalogs, one per workspace, bounded by count and by the characters they were read from
 * (tenants choose how many tools they index and how large the schemas are). Real D1 and Durable Objects;
 * each workspace has the demo upstream indexed.
 */
import { env } from "cloudflare:test";
import { describe, it } from "vitest";
import { addService, createWorkspace, demoUpstreamUrl, newTag } from "../../test/helpers.ts";
import { LeaseHolder } from "../leases/holder.ts";
import { CatalogCache, isolateCatalogs } from "./catalog.ts";

async function indexedWorkspace(): Promise<string> {
  const workspace = await createWorkspace();
  await addService(workspace, { slug: "demo", url: demoUpstreamUrl(newTag()) });
  return workspace.ws;
}

describe("the isolate's catalog cache", () => {
  it("keeps at most maxWorkspaces catalogs, the least recently used going first", async ({ expect }) => {
    const cache = new CatalogCache(new LeaseHolder(), 2);
    const [a, b, c] = await Promise.all([indexedWorkspace(), indexedWorkspace(), indexedWorkspace()]);
    const first = await cache.load(env, a);
    expect(first.chars).toBeGreaterThan(0);
    await cache.load(env, b);
    expect(await cache.load(env, a)).toBe(first);
    await cache.load(env, c);
    expect(cache.size).toBe(2);
    // a was used after b, so b went; a is still the same object, b is read again.
    expect(await cache.load(env, a)).toBe(first);
    expect(cache.chars).toBe(first.chars * 2);
  });

  it("keeps at most maxChars of catalogs, and a catalog larger than that alone is served but not kept", async ({ expect }) => {
    const [a, b] = await Promise.all([indexedWorkspace(), indexedWorkspace()]);
    const probe = await new CatalogCache(new LeaseHolder()).load(env, a);
    // Room for one of these catalogs, not two.
    const roomForOne = new CatalogCache(new LeaseHolder(), 1_000, probe.chars + probe.chars / 2);
    const heldA = await roomForOne.load(env, a);
    await roomForOne.load(env, b);
    expect([roomForOne.size, roomForOne.chars]).toEqual([1, probe.chars]);
    expect(await roomForOne.load(env, a)).not.toBe(heldA);

    const tooSmall = new CatalogCache(new LeaseHolder(), 1_000, probe.chars - 1);
    const once = await tooSmall.load(env, a);
    const again = await tooSmall.load(env, a);
    expect(again).not.toBe(once);
    expect(again.tools.size).toBe(once.tools.size);
    expect([tooSmall.size, tooSmall.chars]).toEqual([0, 0]);
  });

  it("the gateway's cache is bounded as docs/limits.md says: 1,000 workspaces, 16 Mi characters", ({ expect }) => {
    expect([isolateCatalogs.maxWorkspaces, isolateCatalogs.maxChars]).toEqual([1_000, 16 * 1024 * 1024]);
  });

  it("weighs a service's upstream OAuth server, which the upstream's metadata sizes", async ({ expect }) => {
    const ws = await indexedWorkspace();
    const before = (await new CatalogCache(new LeaseHolder()).load(env, ws)).chars;
    // As an upstream's resource metadata can make it: 200 KiB of scopes_supported.
    const server = JSON.stringify({ resource: "https://mcp.example.com/mcp", scopes: ["s".repeat(200 * 1024)] });
    await env.DB.prepare("UPDATE services SET authorization_kind = 'oauth', oauth_mode = 'shared', oauth_server = ? WHERE workspace_id = ?")
      .bind(server, ws)
      .run();
    const after = (await new CatalogCache(new LeaseHolder()).load(env, ws)).chars;
    expect(after - before).toBeGreaterThanOrEqual(server.length);
  });
});
