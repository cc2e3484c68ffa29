import { describe, it } from "vitest";
import { api, connectMcp, CONSOLE_HEADERS, createKey, createWorkspace, devLogin, gatewayError } from "../../test/helpers.ts";
import { authorizeInBrowser, connectOAuthService, grantsOf, newLab, serviceOf, startAuthorize } from "./upstream-oauth.fixtures.ts";

async function whoami(key: string, tool: string) {
  const client = await connectMcp(key);
  try {
    return await client.callTool({ name: `${tool}__whoami`, arguments: {} });
  } finally {
    await client.close();
  }
}

/**
 * A workspace with an admin owner and Ivan, an admin member, and three shared services: `mine` authorized by Ivan
 * signed in, `viakey` through a link made by a key Ivan made, `team` by the workspace's admin key.
 */
async function sharedServicesAuthorizedByIvan() {
  const workspace = await createWorkspace("Test workspace", `owner-${crypto.randomUUID().slice(0, 8)}@rayrun.test`);
  const email = `ivan-${crypto.randomUUID().slice(0, 8)}@rayrun.test`;
  const ivan = await api(`/v1/workspaces/${workspace.ws}/members`, {
    method: "PUT",
    key: workspace.adminKey,
    body: { email, role: "admin" },
  });
  const cookie = await devLogin(email);
  const ivansKey = await api(`/v1/workspaces/${workspace.ws}/keys`, {
    headers: { cookie, ...CONSOLE_HEADERS },
    body: { name: "ivan's ops key", scopes: ["admin"] },
  });
  const services: Record<string, string> = {};
  for (const [slug, as, signedIn] of [
    ["mine", { cookie }, cookie],
    ["viakey", { key: ivansKey.body.secret as string }, undefined],
    ["team", { key: workspace.adminKey }, undefined],
  ] as const) {
    const lab = await newLab();
    const serviceId = (await connectOAuthService(workspace, lab, { slug })).body.service.id as string;
    const link = await startAuthorize(workspace, serviceId, as);
    const flow = await authorizeInBrowser(link.body.authorizationUrl, { cookie: signedIn, user: `${slug}-upstream` });
    if (flow.callback?.status !== 200) throw new Error(`callback: ${flow.callback?.status} ${flow.callbackBody}`);
    services[slug] = serviceId;
  }
  const clientKey = await createKey(workspace, ["tools:call"], workspace.defaultProfileId);
  const grantIds = Object.fromEntries((await grantsOf(workspace)).map((grant) => [grant.serviceId as string, grant.id as string]));
  return { workspace, ivan: { id: ivan.body.id as string, keyId: ivansKey.body.key.id as string }, services, clientKey, grantIds };
}

describe("removing a member who authorized a shared upstream grant", () => {
  it("reports the shared grants they authorized, and keeps them by default", async ({ expect }) => {
    const { workspace, ivan, services, clientKey, grantIds } = await sharedServicesAuthorizedByIvan();

    const removed = await api(`/v1/workspaces/${workspace.ws}/members/${ivan.id}`, { method: "DELETE", key: workspace.adminKey });
    expect(removed.status).toBe(200);
    expect(removed.body.revokedKeys).toEqual([ivan.keyId]);
    expect(removed.body.upstreamGrants).toBe(0);
    const expected = [
      { grantId: grantIds[services.mine!], serviceId: services.mine, service: "mine", authorizedBy: ivan.id, revoked: false },
      { grantId: grantIds[services.viakey!], serviceId: services.viakey, service: "viakey", authorizedBy: ivan.keyId, revoked: false },
    ].sort((a, b) => a.serviceId!.localeCompare(b.serviceId!));
    expect(removed.body.sharedGrantsAuthorized).toEqual(expected);

    // Kept: the team's calls still go out as the accounts Ivan (and his key's link) signed in with.
    expect(await grantsOf(workspace)).toHaveLength(3);
    expect((await whoami(clientKey, "mine")).content).toEqual([{ type: "text", text: "upstream user: mine-upstream" }]);
    expect((await whoami(clientKey, "viakey")).content).toEqual([{ type: "text", text: "upstream user: viakey-upstream" }]);
  });

  it("revokes them too with revokeSharedGrants=true: their services wait for an admin to authorize them again", async ({ expect }) => {
    const { workspace, ivan, services, clientKey, grantIds } = await sharedServicesAuthorizedByIvan();

    const badFlag = await api(`/v1/workspaces/${workspace.ws}/members/${ivan.id}?revokeSharedGrants=yes`, {
      method: "DELETE",
      key: workspace.adminKey,
    });
    expect(badFlag.status).toBe(400);
    expect(badFlag.body.error.code).toBe("invalid_request");
    expect(JSON.stringify(badFlag.body.error.details)).toContain("revokeSharedGrants");

    const removed = await api(`/v1/workspaces/${workspace.ws}/members/${ivan.id}?revokeSharedGrants=true`, {
      method: "DELETE",
      key: workspace.adminKey,
    });
    expect(removed.status).toBe(200);
    expect(
      removed.body.sharedGrantsAuthorized.map((grant: { service: string; revoked: boolean }) => [grant.service, grant.revoked]).sort(),
    ).toEqual([
      ["mine", true],
      ["viakey", true],
    ]);

    const left = await grantsOf(workspace);
    expect(left.map((grant) => grant.id)).toEqual([grantIds[services.team!]]);
    for (const slug of ["mine", "viakey"]) {
      expect((await serviceOf(workspace, services[slug]!)).authorization).toMatchObject({
        status: "pending",
        pendingReason: { code: "disconnected", message: expect.stringContaining("who authorized it, left the workspace") },
      });
      expect(gatewayError(await whoami(clientKey, slug)).code).toBe("upstream_authorization_required");
    }
    expect((await whoami(clientKey, "team")).content).toEqual([{ type: "text", text: "upstream user: team-upstream" }]);
  });
});
