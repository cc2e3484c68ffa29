import { SELF } from "cloudflare:test";
import { describe, it } from "vitest";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { McpError } from "@modelcontextprotocol/sdk/types.js";
import { CfWorkerJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/cfworker-provider.js";
import { api, connectMcp, createWorkspace, gatewayError, ORIGIN } from "../../test/helpers.ts";
import { browserCaller } from "../hooks/lifecycle/lifecycle.fixtures.ts";
import { authorizeInBrowser, connectOAuthService, grantsOf, newLab, serviceOf, startAuthorize } from "./upstream-oauth.fixtures.ts";

/** A tools:call key created by a signed-in member: the member owns it, so it uses the member's own grant. */
async function keyOwnedBy(ws: string, cookie: string, profileId: string): Promise<string> {
  const res = await api(`/v1/workspaces/${ws}/keys`, {
    headers: { cookie, "sec-fetch-site": "same-origin", origin: "https://rayrun.test" },
    body: { name: "agent", scopes: ["tools:call"], profileId },
  });
  if (res.status !== 201) throw new Error(`key: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.secret;
}

async function call(key: string) {
  const client = await connectMcp(key);
  try {
    return await client.callTool({ name: "lab__whoami", arguments: {} });
  } finally {
    await client.close();
  }
}

const textOf = (result: unknown) => ((result as { content?: { text?: string }[] }).content ?? [])[0]?.text;

describe("a per-user OAuth service", () => {
  it("gives each key owner their own grant: two users authorize separately and each call carries their own token", async ({ expect }) => {
    const lab = await newLab();
    const workspace = await createWorkspace();
    const admin = await browserCaller(workspace.ws, workspace.adminKey, "admin");
    const created = await connectOAuthService(workspace, lab, { oauth: { mode: "per_user" } });
    expect(created.body.service.authorization).toMatchObject({ mode: "per_user", status: "pending" });
    const serviceId = created.body.service.id;

    // The admin authorizes the service (their own grant indexes it), signed in to the console.
    const link = await startAuthorize(workspace, serviceId, { cookie: admin.headers.cookie! });
    expect(link.status).toBe(200);
    const adminFlow = await authorizeInBrowser(link.body.authorizationUrl, { cookie: admin.headers.cookie, user: "admin-upstream" });
    expect(adminFlow.callback!.status).toBe(200);
    expect((await serviceOf(workspace, serviceId)).authorization).toMatchObject({ status: "authorized", authorizedBy: admin.id });

    const alice = await browserCaller(workspace.ws, workspace.adminKey, "admin");
    const bob = await browserCaller(workspace.ws, workspace.adminKey, "admin");
    const aliceKey = await keyOwnedBy(workspace.ws, alice.headers.cookie!, workspace.defaultProfileId);
    const bobKey = await keyOwnedBy(workspace.ws, bob.headers.cookie!, workspace.defaultProfileId);

    // Without a grant of her own, Alice is told where to authorize; the upstream is not called.
    const refused = await call(aliceKey);
    expect(refused.isError).toBe(true);
    const error = gatewayError(refused);
    expect(error).toMatchObject({
      code: "upstream_authorization_required",
      details: {
        service: "lab",
        mode: "per_user",
        authorizationUrl: expect.stringMatching(/^https:\/\/rayrun\.test\/oauth\/upstream\/start\?flow=/),
      },
    });
    // Asking again hands out the same link, not a new flow per call.
    expect(gatewayError(await call(aliceKey)).details.authorizationUrl).toBe(error.details.authorizationUrl);

    // A client that declared URL-mode elicitation gets the link as the MCP spec's URLElicitationRequiredError.
    const eliciting = new Client(
      { name: "url-elicitation-client", version: "1.0.0" },
      { capabilities: { elicitation: { url: {} } }, jsonSchemaValidator: new CfWorkerJsonSchemaValidator() },
    );
    await eliciting.connect(
      new StreamableHTTPClientTransport(new URL(`${ORIGIN}/mcp`), {
        fetch: (input, init) => SELF.fetch(input as string, init),
        requestInit: { headers: { authorization: `Bearer ${aliceKey}` } },
      }),
    );
    const elicited = await eliciting.callTool({ name: "lab__whoami", arguments: {} }).catch((thrown: unknown) => thrown);
    await eliciting.close();
    expect(elicited).toBeInstanceOf(McpError);
    expect((elicited as McpError).code).toBe(-32042);
    expect((elicited as McpError).data).toMatchObject({
      elicitations: [{ mode: "url", url: error.details.authorizationUrl, elicitationId: expect.stringMatching(/^eli_/) }],
    });

    // Bob cannot use Alice's link: it is bound to her.
    const stolen = await authorizeInBrowser(error.details.authorizationUrl, { cookie: bob.headers.cookie, user: "bob" });
    expect(stolen.start.status).toBe(400);
    expect(JSON.parse(stolen.startBody!)).toMatchObject({ error: { code: "oauth_state_invalid", details: { reason: "wrong_user" } } });

    const aliceFlow = await authorizeInBrowser(error.details.authorizationUrl, { cookie: alice.headers.cookie, user: "alice" });
    expect(aliceFlow.callback!.status).toBe(200);
    expect(textOf(await call(aliceKey))).toBe("upstream user: alice");

    const bobLink = gatewayError(await call(bobKey)).details.authorizationUrl;
    const bobFlow = await authorizeInBrowser(bobLink, { cookie: bob.headers.cookie, user: "bob" });
    expect(bobFlow.callback!.status).toBe(200);
    expect(textOf(await call(bobKey))).toBe("upstream user: bob");
    expect(textOf(await call(aliceKey))).toBe("upstream user: alice");

    const grants = await grantsOf(workspace);
    expect(grants.map((grant) => [grant.mode, grant.subject]).sort()).toEqual(
      [
        ["per_user", `user:${admin.id}`],
        ["per_user", `user:${alice.id}`],
        ["per_user", `user:${bob.id}`],
      ].sort(),
    );

    // Revoking Bob's grant stops only Bob.
    const bobGrant = grants.find((grant) => grant.subject === `user:${bob.id}`)!;
    const revoked = await api(`/v1/workspaces/${workspace.ws}/upstream-grants/${bobGrant.id}`, {
      method: "DELETE",
      key: workspace.adminKey,
    });
    expect(revoked).toMatchObject({ status: 200, body: { grants: 1, revoked: 1 } });
    expect(gatewayError(await call(bobKey)).code).toBe("upstream_authorization_required");
    expect(textOf(await call(aliceKey))).toBe("upstream user: alice");
    expect((await serviceOf(workspace, serviceId)).authorization.status).toBe("authorized");
  });

  it("revokes a key's own grant at the authorization server, and deletes it, when the key is revoked", async ({ expect }) => {
    const lab = await newLab();
    const workspace = await createWorkspace();
    const created = await connectOAuthService(workspace, lab, { oauth: { mode: "per_user" } });
    const serviceId = created.body.service.id;
    // The admin key authorizes the service: its own grant indexes it.
    const link = await startAuthorize(workspace, serviceId, { key: workspace.adminKey });
    expect((await authorizeInBrowser(link.body.authorizationUrl, { user: "admin-upstream" })).callback!.status).toBe(200);
    // An agent's key made by the admin key, not by a member: its grant is the key's own (`key:<id>`).
    const made = await api(`/v1/workspaces/${workspace.ws}/keys`, {
      key: workspace.adminKey,
      body: { name: "agent", scopes: ["tools:call"], profileId: workspace.defaultProfileId },
    });
    const agent = { id: made.body.key.id as string, secret: made.body.secret as string };
    const agentLink = gatewayError(await call(agent.secret)).details.authorizationUrl;
    expect((await authorizeInBrowser(agentLink, { user: "carol" })).callback!.status).toBe(200);
    expect(textOf(await call(agent.secret))).toBe("upstream user: carol");
    expect((await grantsOf(workspace)).map((grant) => grant.subject)).toContain(`key:${agent.id}`);
    const revocationsBefore = (await lab.state()).revocations.length;

    const revoked = await api(`/v1/workspaces/${workspace.ws}/keys/${agent.id}`, { method: "DELETE", key: workspace.adminKey });
    expect(revoked.status).toBe(200);
    // Gone from the gateway, and its tokens revoked where they were issued.
    expect((await grantsOf(workspace)).map((grant) => grant.subject)).not.toContain(`key:${agent.id}`);
    expect((await lab.state()).revocations.slice(revocationsBefore)).toEqual(
      expect.arrayContaining([{ hint: "access_token", known: true }]),
    );
    // The admin's grant, which indexes the service, stays: the service is still authorized.
    expect((await grantsOf(workspace)).map((grant) => grant.subject)).toHaveLength(1);
    expect((await serviceOf(workspace, serviceId)).authorization.status).toBe("authorized");
  });
});
