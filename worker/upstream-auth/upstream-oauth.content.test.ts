// resources/read, prompts/get and the content lists on an OAuth-protected upstream (the lab: a real authorization
// server and MCP server over HTTP), through the gateway's /mcp: hidden while the service waits (the upstream is never asked),
// then carrying the caller's token, refreshed on expiry, and refused again once the grant ends; per user, each
// caller's own token.
import { describe, it } from "vitest";
import { McpError } from "@modelcontextprotocol/sdk/types.js";
import { api, connectMcp, createWorkspace, eventually, type TestWorkspace } from "../../test/helpers.ts";
import { browserCaller } from "../hooks/lifecycle/lifecycle.fixtures.ts";
import {
  authorizedService,
  authorizeInBrowser,
  connectOAuthService,
  newLab,
  serviceOf,
  startAuthorize,
  type Lab,
} from "./upstream-oauth.fixtures.ts";

const RESOURCE = "rayrun://lab/lab://profile";

/** One client session's reads: the resource's text, the prompt's text, or the JSON-RPC error the gateway answered. */
async function readContent(key: string) {
  const client = await connectMcp(key);
  const failure = (error: unknown) => {
    if (!(error instanceof McpError)) throw error;
    return { code: error.code, data: error.data as Record<string, unknown> };
  };
  try {
    const resource = await client.readResource({ uri: RESOURCE }).then((result) => {
      const [content] = result.contents;
      return { uri: content!.uri, text: "text" in content! ? content.text : null };
    }, failure);
    const prompt = await client
      .getPrompt({ name: "lab__greet" })
      .then((result) => (result.messages[0]!.content as { text: string }).text, failure);
    const resources = await client.listResources();
    const prompts = await client.listPrompts();
    return {
      resource,
      prompt,
      listed: [...resources.resources.map((item) => item.uri), ...prompts.prompts.map((item) => item.name)],
      skipped: [resources._meta?.["dev.rayrun/skipped"], prompts._meta?.["dev.rayrun/skipped"]],
    };
  } finally {
    await client.close();
  }
}

const contentRows = async (workspace: TestWorkspace, count: number) =>
  (
    await eventually(
      () => api(`/v1/workspaces/${workspace.ws}/logs?kind=resources/read`, { key: workspace.adminKey }),
      (res) => res.body.calls?.length === count,
    )
  ).body.calls.map((row: { outcome: string; code: string | null }) => [row.outcome, row.code]);

const clientKeyOf = async (workspace: TestWorkspace) => {
  const res = await api(`/v1/workspaces/${workspace.ws}/keys`, {
    key: workspace.adminKey,
    body: { name: "agent", scopes: ["tools:call"], profileId: workspace.defaultProfileId },
  });
  return res.body.secret as string;
};

const bearers = async (lab: Lab) => (await lab.state()).mcpAuthorizations;

describe("resources and prompts of an OAuth-protected upstream", () => {
  it("are hidden while the service waits, then read with the workspace's token, refreshed on expiry, and refused once the grant ends", async ({
    expect,
  }) => {
    const lab = await newLab();
    const workspace = await createWorkspace();
    const created = await connectOAuthService(workspace, lab);
    const serviceId = created.body.service.id as string;
    const clientKey = await clientKeyOf(workspace);

    // While the service waits for an admin, its content is not the profile's to see (as its tools are refused at step 1):
    // a read is "not found", a prompt unknown, the lists leave it out, and nothing reaches the upstream.
    const seenBefore = (await bearers(lab)).length;
    const hidden = { resource: { code: -32002, data: { uri: RESOURCE } }, prompt: { code: -32602, data: { code: "unknown_prompt" } } };
    expect(await readContent(clientKey)).toEqual({ ...hidden, listed: [], skipped: [undefined, undefined] });
    expect((await bearers(lab)).length).toBe(seenBefore);

    const link = await startAuthorize(workspace, serviceId, { key: workspace.adminKey });
    expect((await authorizeInBrowser(link.body.authorizationUrl, { user: "alice" })).callback!.status).toBe(200);
    const authorized = await readContent(clientKey);
    expect(authorized).toEqual({
      resource: { uri: RESOURCE, text: "profile of alice" },
      prompt: "Say hello to alice",
      listed: [RESOURCE, "lab__greet"],
      skipped: [undefined, undefined],
    });
    const state = await lab.state();
    expect(state.contentReadsBy).toEqual(["alice", "alice"]);
    // Every request after the connect-time probes carried the upstream's token, never the gateway's own key.
    const sent = state.mcpAuthorizations.slice(seenBefore);
    expect(sent.length).toBeGreaterThan(0);
    expect(sent.every((header) => /^Bearer at_/.test(header))).toBe(true);

    // An expired token: the upstream's 401 makes the gateway refresh it (for the same resource) and send the read again.
    await lab.control("expire-access-tokens");
    expect((await readContent(clientKey)).resource).toEqual({ uri: RESOURCE, text: "profile of alice" });
    expect((await lab.state()).tokenRequests.map((request) => [request.grantType, request.resource])).toEqual([
      ["authorization_code", lab.mcpUrl],
      ["refresh_token", lab.mcpUrl],
    ]);

    // A revoked refresh token ends the grant: the read that found out is refused, the service waits again, and its
    // content is hidden again without the upstream being asked.
    await lab.control("revoke-refresh-tokens");
    await lab.control("expire-access-tokens");
    const ended = await readContent(clientKey);
    expect(ended.resource).toEqual({
      code: -32603,
      data: expect.objectContaining({ code: "upstream_authorization_required", service: "lab", mode: "shared" }),
    });
    expect((await serviceOf(workspace, serviceId)).authorization).toMatchObject({
      status: "pending",
      pendingReason: { code: "invalid_grant" },
    });
    const reads = (await lab.state()).contentReadsBy.length;
    expect(await readContent(clientKey)).toEqual({ ...hidden, listed: [], skipped: [undefined, undefined] });
    expect((await lab.state()).contentReadsBy.length).toBe(reads);

    // Every read has its row, newest first: hidden while the service waits, refused when the grant ended, ok with a token.
    expect(await contentRows(workspace, 5)).toEqual([
      ["hidden", null],
      ["refused", "upstream_authorization_required"],
      ["ok", null],
      ["ok", null],
      ["hidden", null],
    ]);
  });

  it("per user, reads each caller's content with their own token, and tells a caller without one where to authorize", async ({
    expect,
  }) => {
    const lab = await newLab();
    const workspace = await createWorkspace();
    const { serviceId } = await authorizedService(workspace, lab, { oauth: { mode: "per_user" } }, "admin-upstream");
    expect((await serviceOf(workspace, serviceId)).authorization).toMatchObject({ mode: "per_user", status: "authorized" });

    const keyOf = async (cookie: string) =>
      (
        await api(`/v1/workspaces/${workspace.ws}/keys`, {
          headers: { cookie, "sec-fetch-site": "same-origin", origin: "https://rayrun.test" },
          body: { name: "agent", scopes: ["tools:call"], profileId: workspace.defaultProfileId },
        })
      ).body.secret as string;
    const alice = await browserCaller(workspace.ws, workspace.adminKey, "admin");
    const bob = await browserCaller(workspace.ws, workspace.adminKey, "admin");
    const aliceKey = await keyOf(alice.headers.cookie!);
    const bobKey = await keyOf(bob.headers.cookie!);

    const refused = await readContent(aliceKey);
    expect(refused.resource).toEqual({
      code: -32603,
      data: expect.objectContaining({
        code: "upstream_authorization_required",
        mode: "per_user",
        authorizationUrl: expect.stringMatching(/^https:\/\/rayrun\.test\/oauth\/upstream\/start\?flow=/),
      }),
    });
    const linkOf = (answer: unknown) => (answer as { data: { authorizationUrl: string } }).data.authorizationUrl;
    const aliceLink = linkOf(refused.resource);
    expect((await authorizeInBrowser(aliceLink, { cookie: alice.headers.cookie, user: "alice" })).callback!.status).toBe(200);
    const bobLink = linkOf((await readContent(bobKey)).prompt);
    expect((await authorizeInBrowser(bobLink, { cookie: bob.headers.cookie, user: "bob" })).callback!.status).toBe(200);

    expect(await readContent(aliceKey)).toMatchObject({ resource: { text: "profile of alice" }, prompt: "Say hello to alice" });
    expect(await readContent(bobKey)).toMatchObject({ resource: { text: "profile of bob" }, prompt: "Say hello to bob" });
    expect((await lab.state()).contentReadsBy).toEqual(["alice", "alice", "bob", "bob"]);
    // A caller without a grant of their own is refused before the upstream, not failed by it.
    expect(await contentRows(workspace, 4)).toEqual([
      ["ok", null],
      ["ok", null],
      ["refused", "upstream_authorization_required"],
      ["refused", "upstream_authorization_required"],
    ]);
  });
});
