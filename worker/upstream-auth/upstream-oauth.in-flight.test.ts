import { describe, it } from "vitest";
import { api, connectMcp, createKey, createWorkspace } from "../../test/helpers.ts";
import { authorizedService, authorizeInBrowser, grantsOf, newLab, serviceOf, startAuthorize } from "./upstream-oauth.fixtures.ts";

/** Which upstream account a call through the gateway acts as: the lab's whoami tool, called with `key`. */
async function whoami(key: string): Promise<string> {
  const client = await connectMcp(key);
  try {
    const result = await client.callTool({ name: "lab__whoami", arguments: {} });
    return (result as { content: { text: string }[] }).content[0]!.text;
  } finally {
    await client.close();
  }
}

describe("a callback still exchanging its code when its maker loses access", () => {
  // The callback used up its flow before it exchanged the code, and saved the grant after: a key revoked (or a
  // member removed) in between found no open flow to drop, and the grant of the link it made was saved all the same,
  // replacing the workspace's shared grant with the account of someone gone.
  it("saves no grant: the shared grant stays the one it was", async ({ expect }) => {
    const lab = await newLab({ codeDelayMs: 1500 });
    const workspace = await createWorkspace();
    const { serviceId } = await authorizedService(workspace, lab, {}, "alice");
    const clientKey = await createKey(workspace, ["tools:call"], workspace.defaultProfileId);
    expect(await whoami(clientKey)).toBe("upstream user: alice");
    // A second admin key, made with the workspace's: its link is made by it alone.
    const made = await api(`/v1/workspaces/${workspace.ws}/keys`, {
      key: workspace.adminKey,
      body: { name: "contractor", scopes: ["admin"], profileId: workspace.defaultProfileId },
    });
    const contractor = { id: made.body.key.id as string, secret: made.body.secret as string };
    const link = await startAuthorize(workspace, serviceId, { key: contractor.secret });
    expect(link.status).toBe(200);

    const codeExchanges = async () =>
      (await lab.state()).tokenRequests.filter((request) => request.grantType === "authorization_code").length;
    const before = await codeExchanges();
    const finishing = authorizeInBrowser(link.body.authorizationUrl, { user: "mallory" });
    for (let i = 0; i < 200 && (await codeExchanges()) === before; i++) await new Promise((resolve) => setTimeout(resolve, 10));
    expect(await codeExchanges()).toBe(before + 1);
    const revoked = await api(`/v1/workspaces/${workspace.ws}/keys/${contractor.id}`, { method: "DELETE", key: workspace.adminKey });
    expect(revoked.status).toBe(200);

    const flow = await finishing;
    expect(flow.callback!.status).toBe(400);
    expect(JSON.parse(flow.callbackBody!)).toMatchObject({ error: { code: "oauth_state_invalid", details: { reason: "cancelled" } } });
    expect(await whoami(clientKey)).toBe("upstream user: alice");
    const grants = await grantsOf(workspace);
    expect(grants).toHaveLength(1);
    expect(grants[0]!.authorizedBy).not.toBe(contractor.id);
    expect((await serviceOf(workspace, serviceId)).authorization.status).toBe("authorized");
  }, 30_000);
});
