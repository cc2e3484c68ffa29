import { describe, it } from "vitest";
import { api, connectMcp, CONSOLE_HEADERS, demoGateway, devLogin, gatewayError, upstreamReceived } from "../../test/helpers.ts";
import { exchange } from "../oauth/oauth.fixtures.ts";

type Gateway = Awaited<ReturnType<typeof demoGateway>>;

async function approvalGateway(): Promise<Gateway> {
  const gateway = await demoGateway();
  const policy = await api(`/v1/workspaces/${gateway.ws}/tools/${gateway.toolUid("delete_record")}/policy`, {
    method: "PUT",
    key: gateway.adminKey,
    body: { profileId: gateway.defaultProfileId, mode: "approval" },
  });
  if (policy.status !== 200) throw new Error(JSON.stringify(policy.body));
  return gateway;
}

/** Asks for `demo__delete_record` with this record id; answers the approval it is waiting for. */
async function askApproval(credential: string, id: string): Promise<string> {
  const client = await connectMcp(credential);
  try {
    const refused = gatewayError(await client.callTool({ name: "demo__delete_record", arguments: { id } }));
    if (refused?.code !== "approval_required") throw new Error(`expected approval_required: ${JSON.stringify(refused)}`);
    return refused.details.approvalId as string;
  } finally {
    await client.close();
  }
}

const approval = async (gateway: Gateway, id: string) =>
  (await api(`/v1/workspaces/${gateway.ws}/approvals/${id}`, { key: gateway.adminKey })).body;
const decide = (gateway: Gateway, id: string, decision: "approve" | "deny") =>
  api(`/v1/workspaces/${gateway.ws}/approvals/${id}/${decision}`, { method: "POST", key: gateway.adminKey });

async function adminKeyId(gateway: Gateway): Promise<string> {
  return (await api("/v1/whoami", { key: gateway.adminKey })).body.id as string;
}

describe("approvals of callers that lose their standing", () => {
  it("a removed member's keys and apps: pending requests are denied, approved ones expire, and none can be approved after", async ({
    expect,
  }) => {
    const gateway = await approvalGateway();
    await api(`/v1/workspaces/${gateway.ws}/members`, {
      method: "PUT",
      key: gateway.adminKey,
      body: { email: `owner-${crypto.randomUUID().slice(0, 8)}@rayrun.test`, role: "admin" },
    });
    const email = `grace-${crypto.randomUUID().slice(0, 8)}@rayrun.test`;
    const grace = await api(`/v1/workspaces/${gateway.ws}/members`, {
      method: "PUT",
      key: gateway.adminKey,
      body: { email, role: "admin" },
    });
    const cookie = await devLogin(email);
    const made = await api(`/v1/workspaces/${gateway.ws}/keys`, {
      headers: { cookie, ...CONSOLE_HEADERS },
      body: { name: "grace's agent", scopes: ["tools:call"], profileId: gateway.defaultProfileId },
    });
    expect(made.status).toBe(201);
    const app = await exchange(cookie, `${gateway.ws} ${gateway.defaultProfileId}`);

    const byKey = await askApproval(made.body.secret, "r1");
    const approvedByKey = await askApproval(made.body.secret, "r2");
    expect((await decide(gateway, approvedByKey, "approve")).status).toBe(200);
    const byApp = await askApproval(app.token, "r3");
    const someoneElse = await askApproval(gateway.clientKey, "r4");
    const alreadyDenied = await askApproval(made.body.secret, "r5");
    expect((await decide(gateway, alreadyDenied, "deny")).status).toBe(200);

    const removed = await api(`/v1/workspaces/${gateway.ws}/members/${grace.body.id}`, { method: "DELETE", key: gateway.adminKey });
    expect(removed.status).toBe(200);

    // None of them can be decided any more: an approver sees why.
    for (const id of [byKey, byApp]) {
      const late = await decide(gateway, id, "approve");
      expect(late.status).toBe(409);
      expect(late.body.error).toEqual({
        code: "approval_not_pending",
        message: "This approval is denied; only pending approvals can be decided",
        details: { status: "denied" },
      });
      expect(await approval(gateway, id)).toMatchObject({
        status: "denied",
        decidedBy: await adminKeyId(gateway),
        decisionNote: `Denied when ${email} was removed from the workspace`,
      });
    }
    expect(await approval(gateway, approvedByKey)).toMatchObject({ status: "expired", decidedBy: await adminKeyId(gateway) });
    // What was decided before stays as decided; another caller's request is untouched and still works.
    expect(await approval(gateway, alreadyDenied)).toMatchObject({ status: "denied", decisionNote: null });
    expect(await approval(gateway, someoneElse)).toMatchObject({ status: "pending" });
    expect((await decide(gateway, someoneElse, "approve")).status).toBe(200);
    const client = await connectMcp(gateway.clientKey);
    try {
      expect(await client.callTool({ name: "demo__delete_record", arguments: { id: "r4" } })).toEqual({
        content: [{ type: "text", text: "Deleted record r4" }],
      });
    } finally {
      await client.close();
    }
    expect((await upstreamReceived(gateway.tag)).calls.map((call) => call.arguments)).toEqual([{ id: "r4" }]);
    expect(removed.body.cancelledApprovals).toEqual([byKey, approvedByKey, byApp].sort());
  });

  it("a revoked key and the keys made with it: their pending requests are denied", async ({ expect }) => {
    const gateway = await approvalGateway();
    const parent = await api(`/v1/workspaces/${gateway.ws}/keys`, { key: gateway.adminKey, body: { name: "ops", scopes: ["admin"] } });
    const child = await api(`/v1/workspaces/${gateway.ws}/keys`, {
      key: parent.body.secret,
      body: { name: "agent", scopes: ["tools:call"], profileId: gateway.defaultProfileId },
    });
    const waiting = await askApproval(child.body.secret, "r1");
    const other = await askApproval(gateway.clientKey, "r2");

    const revoked = await api(`/v1/workspaces/${gateway.ws}/keys/${parent.body.key.id}`, { method: "DELETE", key: gateway.adminKey });
    expect(revoked.status).toBe(200);
    expect(await approval(gateway, waiting)).toMatchObject({
      status: "denied",
      decisionNote: `Denied when the key ${parent.body.key.id} was revoked`,
    });
    expect((await decide(gateway, waiting, "approve")).status).toBe(409);
    expect(await approval(gateway, other)).toMatchObject({ status: "pending" });
    expect(revoked.body).toMatchObject({ revokedKeys: [child.body.key.id], cancelledApprovals: [waiting] });
  });
});
