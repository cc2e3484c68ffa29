/**
 * A member's removal revokes their credentials step by step and ends the membership last (member-removal.ts). From
 * its first step the member acts with no role: the console, `whoami` and the OAuth consent page treat them as no
 * member, so nothing they do meanwhile (or after a removal that failed part-way) outlives the removal.
 */
import { env, SELF } from "cloudflare:test";
import { describe, it } from "vitest";
import { api, CONSOLE_HEADERS, createWorkspace, newTag, type TestWorkspace } from "../../test/helpers.ts";
import { authorizationServer } from "../oauth/oauth.config.ts";
import { withdrawConsent } from "../oauth/grants.routes.ts";
import { authorizationRequest, exchange, registerClient, signInAdmin } from "../oauth/oauth.fixtures.ts";

/** What the removal's first step writes: the member is being removed (the rest has not run, or failed). */
async function startRemoval(workspace: TestWorkspace, email: string): Promise<void> {
  const marked = await env.DB.prepare(
    `UPDATE memberships SET removal_started_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now')
     WHERE workspace_id = ? AND user_id = (SELECT id FROM users WHERE email = ?)`,
  )
    .bind(workspace.ws, email)
    .run();
  if (marked.meta.changes !== 1) throw new Error(`no membership of ${email}`);
}

const grantsOf = async (workspace: TestWorkspace) =>
  (await api(`/v1/workspaces/${workspace.ws}/oauth/grants`, { key: workspace.adminKey })).body.grants as { id: string }[];

const mcpList = (token: string) =>
  api("/mcp", {
    key: token,
    body: { jsonrpc: "2.0", id: 1, method: "tools/list" },
    headers: { accept: "application/json, text/event-stream" },
  });

describe("a member whose removal has started", () => {
  it("has no role in the workspace: the API answers as to a stranger, whoami leaves it out, adding them again restores it", async ({
    expect,
  }) => {
    const workspace = await createWorkspace();
    const email = `leaving-${newTag()}@rayrun.test`;
    const cookie = await signInAdmin(workspace, email);
    const session = { cookie, ...CONSOLE_HEADERS };
    expect((await api(`/v1/workspaces/${workspace.ws}/tools`, { headers: session })).status).toBe(200);

    await startRemoval(workspace, email);
    const refused = await api(`/v1/workspaces/${workspace.ws}/tools`, { headers: session });
    expect(refused.status).toBe(404);
    expect(refused.body.error).toEqual({ code: "not_found", message: "Workspace not found" });
    const key = await api(`/v1/workspaces/${workspace.ws}/keys`, { headers: session, body: { name: "late", scopes: ["admin"] } });
    expect(key.status).toBe(404);
    const whoami = await api("/v1/whoami", { headers: session });
    expect(whoami.status).toBe(200);
    expect(whoami.body.workspaces).toEqual([]);
    // The admins still see them listed, to retry the removal.
    const members = await api(`/v1/workspaces/${workspace.ws}/members`, { key: workspace.adminKey });
    expect(members.body.members.map((member: { email: string }) => member.email)).toContain(email);

    const readded = await api(`/v1/workspaces/${workspace.ws}/members`, {
      method: "PUT",
      key: workspace.adminKey,
      body: { email, role: "viewer" },
    });
    expect(readded.status).toBe(200);
    expect((await api(`/v1/workspaces/${workspace.ws}/tools`, { headers: session })).status).toBe(200);
  });

  it("cannot connect an app: the consent page offers the workspace no more, and a consent posted from an open page is refused with no grant", async ({
    expect,
  }) => {
    const workspace = await createWorkspace();
    const email = `leaving-${newTag()}@rayrun.test`;
    const cookie = await signInAdmin(workspace, email);
    const { url } = await authorizationRequest(await registerClient());
    const page = await SELF.fetch(url, { headers: { cookie } });
    const html = await page.text();
    expect(page.status).toBe(200);
    const handle = /name="handle" value="([^"]+)"/.exec(html)![1]!;
    const consentCookies = page.headers.getSetCookie().map((set) => set.split(";")[0]);

    await startRemoval(workspace, email);
    const again = await SELF.fetch(url, { headers: { cookie } });
    expect(again.status).toBe(403);
    expect(await again.text()).toContain("Only a workspace admin can connect an app.");
    const posted = await SELF.fetch(url, {
      method: "POST",
      redirect: "manual",
      headers: { ...CONSOLE_HEADERS, cookie: [cookie, ...consentCookies].join("; "), "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ handle, target: `${workspace.ws} ${workspace.defaultProfileId}`, decision: "approve" }),
    });
    expect(posted.status).toBe(403);
    expect(posted.headers.get("location")).toBeNull();
    expect(await grantsOf(workspace)).toEqual([]);
  });

  it("loses a grant that was written after the removal listed theirs: the consent withdraws it, and its token is refused", async ({
    expect,
  }) => {
    const workspace = await createWorkspace();
    const email = `leaving-${newTag()}@rayrun.test`;
    const cookie = await signInAdmin(workspace, email);
    const { token } = await exchange(cookie, `${workspace.ws} ${workspace.defaultProfileId}`);
    expect((await mcpList(token)).status).toBe(200);
    const [grant] = (await authorizationServer(env)!.getOAuthApi(env).listUserGrants(workspace.ws)).items;
    const consentId = (grant!.metadata as { consentId: string }).consentId;
    expect(consentId).toMatch(/^[0-9a-f-]{36}$/);

    // What the consent does when it finds, once its grant is written, that its admin's removal has started.
    await startRemoval(workspace, email);
    expect(await withdrawConsent(env, workspace.ws, crypto.randomUUID())).toBe(false);
    expect(await withdrawConsent(env, workspace.ws, consentId)).toBe(true);
    expect(await grantsOf(workspace)).toEqual([]);
    expect((await mcpList(token)).status).toBe(401);
  });
});
