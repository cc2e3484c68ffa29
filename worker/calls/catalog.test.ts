import { describe, it } from "vitest";
import { api, connectMcp, createKey, demoGateway } from "../../test/helpers.ts";

/**
 * Each isolate keeps a catalog per workspace under a read lease (docs/leases.md). A write
 * must reach the next MCP request once it has answered, whichever route made it.
 */
describe("catalog snapshot after API writes", () => {
  it("lets a key of a profile created a moment ago list and call tools", async ({ expect }) => {
    const gateway = await demoGateway();
    const client = await connectMcp(gateway.clientKey);
    // Caches the workspace's catalog, taken before the new profile exists.
    expect((await client.listTools()).tools.length).toBeGreaterThan(0);

    const profile = await api(`/v1/workspaces/${gateway.ws}/profiles`, {
      key: gateway.adminKey,
      body: { name: "fresh", defaultMode: "allow" },
    });
    expect(profile.status).toBe(201);
    const freshKey = await createKey(gateway, ["tools:call"], profile.body.id);
    const fresh = await connectMcp(freshKey);
    const names = (await fresh.listTools()).tools.map((tool) => tool.name);
    expect(names).toContain("demo__search_release_notes");
    const result = await fresh.callTool({ name: "demo__search_release_notes", arguments: { query: "sso" } });
    expect(result.isError).toBeFalsy();
  });

  it("applies a block and a service deletion to the very next call", async ({ expect }) => {
    const gateway = await demoGateway();
    const client = await connectMcp(gateway.clientKey);
    expect((await client.listTools()).tools.map((tool) => tool.name)).toContain("demo__search_release_notes");

    const blocked = await api(`/v1/workspaces/${gateway.ws}/tools/${gateway.toolUid("search_release_notes")}/policy`, {
      method: "PUT",
      key: gateway.adminKey,
      body: { profileId: gateway.defaultProfileId, mode: "block" },
    });
    expect(blocked.status).toBe(200);
    expect((await client.listTools()).tools.map((tool) => tool.name)).not.toContain("demo__search_release_notes");

    const deleted = await api(`/v1/workspaces/${gateway.ws}/services/${gateway.service.id}`, { method: "DELETE", key: gateway.adminKey });
    expect(deleted.status).toBe(204);
    expect((await client.listTools()).tools).toEqual([]);
  });
});
