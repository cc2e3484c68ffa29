import { describe, it } from "vitest";
import {
  api,
  connectMcp,
  createKey,
  createWorkspace,
  demoGateway,
  eventually,
  gatewayError,
  type TestWorkspace,
  upstreamReceived,
} from "../../test/helpers.ts";
import { hookGateway } from "../hooks/lifecycle/lifecycle.fixtures.ts";

/*
 * The demo upstream's annotations: search_release_notes and lookup_customer are
 * readOnly and closed-world; delete_record says destructiveHint: true and nothing
 * about openWorldHint; export_report says openWorldHint: true and nothing about
 * destructiveHint.
 */

type Gateway = Awaited<ReturnType<typeof demoGateway>>;

async function createProfile(gateway: Gateway, body: Record<string, unknown>) {
  const res = await api(`/v1/workspaces/${gateway.ws}/profiles`, { key: gateway.adminKey, body });
  if (res.status !== 201) throw new Error(`profile: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body as { id: string };
}

const patchProfile = (gateway: TestWorkspace, profileId: string, body: unknown, key = gateway.adminKey) =>
  api(`/v1/workspaces/${gateway.ws}/profiles/${profileId}`, { method: "PATCH", key, body });

/** A client key in a new profile with these risk rules. */
async function riskClient(gateway: Gateway, riskRules: Record<string, unknown>) {
  const profile = await createProfile(gateway, { name: `risk ${crypto.randomUUID().slice(0, 6)}`, defaultMode: "allow", riskRules });
  return { profileId: profile.id, client: await connectMcp(await createKey(gateway, ["tools:call"], profile.id)) };
}

const listedNames = async (client: Awaited<ReturnType<typeof connectMcp>>) => (await client.listTools()).tools.map((tool) => tool.name);

describe("risk rules on an access profile", () => {
  it("sends a destructive tool to a one-call approval with the rule's reason", async ({ expect }) => {
    const gateway = await demoGateway();
    const created = await api(`/v1/workspaces/${gateway.ws}/profiles`, {
      key: gateway.adminKey,
      body: { name: "careful", defaultMode: "allow", riskRules: { destructiveHint: { mode: "approval" } } },
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      name: "careful",
      defaultMode: "allow",
      riskRules: { destructiveHint: { mode: "approval", whenMissing: "match" } },
      updatedBy: null,
    });
    const client = await connectMcp(await createKey(gateway, ["tools:call"], created.body.id));

    // Under approval the tool stays listed: the client can call it once someone approves.
    expect(await listedNames(client)).toEqual([
      "demo__delete_record",
      "demo__export_report",
      "demo__lookup_customer",
      "demo__search_release_notes",
    ]);
    const first = await client.callTool({ name: "demo__delete_record", arguments: { id: "r1" } });
    expect(first.isError).toBe(true);
    expect(gatewayError(first)).toMatchObject({
      code: "approval_required",
      details: { reason: "risk_destructive_hint", tool: "demo__delete_record" },
    });
    // A tool that says nothing about destructiveHint is destructive by the spec default; a read-only one is not.
    const silent = await client.callTool({ name: "demo__export_report", arguments: { month: "2026-10" } });
    expect(gatewayError(silent)).toMatchObject({ code: "approval_required", details: { reason: "risk_destructive_hint" } });
    const readOnly = await client.callTool({ name: "demo__search_release_notes", arguments: { query: "sso" } });
    expect(readOnly.isError).toBeFalsy();
    expect((await upstreamReceived(gateway.tag)).calls.map((call) => call.tool)).toEqual(["search_release_notes"]);

    const approvalId = gatewayError(first).details.approvalId as string;
    const pending = await api(`/v1/workspaces/${gateway.ws}/approvals/${approvalId}`, { key: gateway.adminKey });
    expect(pending.body).toMatchObject({ reason: "risk_destructive_hint", source: "policy", status: "pending", arguments: { id: "r1" } });
    await api(`/v1/workspaces/${gateway.ws}/approvals/${approvalId}/approve`, { method: "POST", key: gateway.adminKey });
    expect(await client.callTool({ name: "demo__delete_record", arguments: { id: "r1" } })).toEqual({
      content: [{ type: "text", text: "Deleted record r1" }],
    });
    const again = await client.callTool({ name: "demo__delete_record", arguments: { id: "r1" } });
    expect(gatewayError(again).code).toBe("approval_required");
    expect((await upstreamReceived(gateway.tag)).calls.map((call) => call.tool)).toEqual(["search_release_notes", "delete_record"]);
  });

  it("is a floor: a per-tool allow cannot lower it, a per-tool block tightens it", async ({ expect }) => {
    const gateway = await demoGateway();
    const { profileId, client } = await riskClient(gateway, { destructiveHint: { mode: "approval" } });
    const setPolicy = (mode: string) =>
      api(`/v1/workspaces/${gateway.ws}/tools/${gateway.toolUid("delete_record")}/policy`, {
        method: "PUT",
        key: gateway.adminKey,
        body: { profileId, mode },
      });

    expect((await setPolicy("allow")).status).toBe(200);
    const allowed = await client.callTool({ name: "demo__delete_record", arguments: { id: "r1" } });
    expect(gatewayError(allowed)).toMatchObject({ code: "approval_required", details: { reason: "risk_destructive_hint" } });

    expect((await setPolicy("block")).status).toBe(200);
    expect(await listedNames(client)).not.toContain("demo__delete_record");
    await expect(client.callTool({ name: "demo__delete_record", arguments: { id: "r1" } })).rejects.toThrow(
      "MCP error -32602: Unknown tool: demo__delete_record",
    );
    expect((await upstreamReceived(gateway.tag)).calls).toEqual([]);
  });

  it("hides and refuses an open-world tool under a block rule, as a policy block does", async ({ expect }) => {
    const gateway = await demoGateway();
    const { profileId, client } = await riskClient(gateway, { openWorldHint: { mode: "block" } });

    // export_report says openWorldHint: true; delete_record says nothing, which the spec reads as open-world.
    expect(await listedNames(client)).toEqual(["demo__lookup_customer", "demo__search_release_notes"]);
    for (const name of ["demo__export_report", "demo__delete_record"]) {
      await expect(
        client.callTool({ name, arguments: name === "demo__export_report" ? { month: "2026-10" } : { id: "r1" } }),
      ).rejects.toThrow(`MCP error -32602: Unknown tool: ${name}`);
    }
    expect((await upstreamReceived(gateway.tag)).calls).toEqual([]);
    const logs = await eventually(
      () => api(`/v1/workspaces/${gateway.ws}/tools/${gateway.toolUid("export_report")}/hook/logs`, { key: gateway.adminKey }),
      (res) => res.body.logs.length === 1,
    );
    expect(logs.body.logs[0]).toMatchObject({ stage: "pre_dispatch", outcome: "refused", code: "tool_blocked" });

    // `ignore` matches only an explicit true: delete_record comes back, export_report stays blocked.
    const patched = await patchProfile(gateway, profileId, { riskRules: { openWorldHint: { mode: "block", whenMissing: "ignore" } } });
    expect(patched.status).toBe(200);
    expect(await listedNames(client)).toEqual(["demo__delete_record", "demo__lookup_customer", "demo__search_release_notes"]);
    expect(await client.callTool({ name: "demo__delete_record", arguments: { id: "r2" } })).toEqual({
      content: [{ type: "text", text: "Deleted record r2" }],
    });
    await expect(client.callTool({ name: "demo__export_report", arguments: { month: "2026-10" } })).rejects.toThrow("Unknown tool");

    // Another profile in the workspace is untouched.
    expect(await listedNames(await connectMcp(gateway.clientKey))).toHaveLength(4);
  });

  it("applies a PATCH on the next call, and attributes it", async ({ expect }) => {
    const gateway = await demoGateway();
    const client = await connectMcp(gateway.clientKey);
    const before = await client.callTool({ name: "demo__export_report", arguments: { month: "2026-10" } });
    // The upstream's own tool error: the call reached it.
    expect(before).toMatchObject({ isError: true, content: [{ type: "text", text: "Report service unavailable: try again later" }] });

    const patched = await patchProfile(gateway, gateway.defaultProfileId, {
      defaultMode: "allow",
      riskRules: { destructiveHint: { mode: "approval", whenMissing: "ignore" }, openWorldHint: { mode: "approval" } },
    });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({
      id: gateway.defaultProfileId,
      name: "default",
      riskRules: {
        destructiveHint: { mode: "approval", whenMissing: "ignore" },
        openWorldHint: { mode: "approval", whenMissing: "match" },
      },
      updatedBy: expect.stringMatching(/^key_/),
      updatedAt: expect.any(String),
    });
    const after = await client.callTool({ name: "demo__export_report", arguments: { month: "2026-10" } });
    expect(gatewayError(after)).toMatchObject({ code: "approval_required", details: { reason: "risk_open_world_hint" } });
    // Both rules match delete_record; one approval covers both and names the first rule.
    const both = await client.callTool({ name: "demo__delete_record", arguments: { id: "r1" } });
    expect(gatewayError(both)).toMatchObject({ code: "approval_required", details: { reason: "risk_destructive_hint" } });

    // `{}` removes every rule; defaultMode can change in the same place.
    const cleared = await patchProfile(gateway, gateway.defaultProfileId, { riskRules: {}, defaultMode: "approval" });
    expect(cleared.body).toMatchObject({ riskRules: {}, defaultMode: "approval" });
    const plain = await client.callTool({ name: "demo__export_report", arguments: { month: "2026-10" } });
    expect(gatewayError(plain)).toMatchObject({ code: "approval_required", details: { reason: "policy_approval" } });
    expect((await upstreamReceived(gateway.tag)).calls.map((call) => call.tool)).toEqual(["export_report"]);

    const listed = await api(`/v1/workspaces/${gateway.ws}/profiles`, { key: gateway.adminKey });
    expect(listed.body.profiles).toEqual([cleared.body]);
  });
});

describe("a hook and a risk rule", () => {
  const CONTINUE_HOOK = `export default defineToolAdapter({
  apiVersion: "rayrun.hooks/v1",
  before({ arguments: args }) {
    return { action: "continue", arguments: args };
  },
});
`;

  it("cannot lift a risk approval or a risk block by continuing", async ({ expect }) => {
    const gateway = await hookGateway("delete_record");
    const saved = await gateway.saveLatest({ source: CONTINUE_HOOK });
    expect(saved.status).toBe(200);
    expect((await gateway.test({ stage: "before", arguments: { id: "r1" } })).body.passed).toBe(true);
    const revision = await gateway.createRevision(saved.body.versionId);
    expect(revision.status).toBe(201);
    expect((await gateway.deploy("active", revision.body.revisionId)).status).toBe(200);
    const patched = await patchProfile(gateway, gateway.defaultProfileId, { riskRules: { destructiveHint: { mode: "approval" } } });
    expect(patched.status).toBe(200);

    const client = await connectMcp(gateway.clientKey);
    const result = await client.callTool({ name: "demo__delete_record", arguments: { id: "r1" } });
    expect(gatewayError(result)).toMatchObject({ code: "approval_required", details: { reason: "risk_destructive_hint" } });
    expect((await upstreamReceived(gateway.tag)).calls).toEqual([]);
    const approvalId = gatewayError(result).details.approvalId as string;
    const approval = await api(`/v1/workspaces/${gateway.ws}/approvals/${approvalId}`, { key: gateway.adminKey });
    // The hook ran and continued; the approval still binds its revision.
    expect(approval.body).toMatchObject({ source: "policy", revisionId: revision.body.revisionId });
    const logs = await eventually(
      () => api(`${gateway.base()}/logs`, { key: gateway.adminKey }),
      (res) => res.body.logs.length === 2,
    );
    expect(logs.body.logs.map((row: Record<string, unknown>) => [row.stage, row.outcome, row.code])).toEqual([
      ["pre_dispatch", "refused", "approval_required"],
      ["before", "continue", null],
    ]);

    // Under a block rule the hook never runs at all.
    await patchProfile(gateway, gateway.defaultProfileId, { riskRules: { destructiveHint: { mode: "block" } } });
    await expect(client.callTool({ name: "demo__delete_record", arguments: { id: "r1" } })).rejects.toThrow("Unknown tool");
    const afterBlock = await eventually(
      () => api(`${gateway.base()}/logs`, { key: gateway.adminKey }),
      (res) => res.body.logs.length === 3,
    );
    expect(afterBlock.body.logs[0]).toMatchObject({ stage: "pre_dispatch", code: "tool_blocked" });
    expect((await upstreamReceived(gateway.tag)).calls).toEqual([]);
  });
});

describe("profile API input", () => {
  it("answers bad risk rules with a precise 400, another workspace's profile with 404, a non-admin with 403", async ({ expect }) => {
    const gateway = await demoGateway();
    const path = `/v1/workspaces/${gateway.ws}/profiles/${gateway.defaultProfileId}`;
    const cases: [unknown, string, string][] = [
      [{}, "json", "give name, defaultMode, riskRules, discovery or a combination"],
      [{ discovery: "hybrid" }, "json.discovery", 'Invalid option: expected one of "direct"|"code"|"both"'],
      [{ label: "renamed", defaultMode: "block" }, "json", 'Unrecognized key: "label"'],
      [{ riskRules: { readOnlyHint: { mode: "block" } } }, "json.riskRules", 'Unrecognized key: "readOnlyHint"'],
      [
        { riskRules: { destructiveHint: { mode: "allow" } } },
        "json.riskRules.destructiveHint.mode",
        'Invalid option: expected one of "approval"|"block"',
      ],
      [{ riskRules: { destructiveHint: "approval" } }, "json.riskRules.destructiveHint", "Invalid input: expected object, received string"],
      [
        { riskRules: { openWorldHint: { mode: "block", whenMissing: "maybe" } } },
        "json.riskRules.openWorldHint.whenMissing",
        'Invalid option: expected one of "match"|"ignore"',
      ],
      [{ defaultMode: "deny" }, "json.defaultMode", 'Invalid option: expected one of "allow"|"block"|"approval"'],
    ];
    for (const [body, field, message] of cases) {
      const res = await api(path, { method: "PATCH", key: gateway.adminKey, body });
      expect({ body, status: res.status, error: res.body.error }).toEqual({
        body,
        status: 400,
        error: { code: "invalid_request", message: `Invalid ${field}: ${message}`, details: { issues: [{ field, message }] } },
      });
    }
    const badCreate = await api(`/v1/workspaces/${gateway.ws}/profiles`, {
      key: gateway.adminKey,
      body: { name: "x", riskRules: { destructiveHint: { mode: "allow" } } },
    });
    expect(badCreate.status).toBe(400);
    expect(badCreate.body.error).toMatchObject({
      code: "invalid_request",
      details: { issues: [{ field: "json.riskRules.destructiveHint.mode" }] },
    });

    const other = await createWorkspace("Other");
    const foreign = await api(`/v1/workspaces/${gateway.ws}/profiles/${other.defaultProfileId}`, {
      method: "PATCH",
      key: gateway.adminKey,
      body: { defaultMode: "block" },
    });
    expect(foreign.status).toBe(404);
    expect(foreign.body.error).toEqual({ code: "not_found", message: "Access profile not found" });
    const missing = await patchProfile(gateway, "prof_missing", { defaultMode: "block" });
    expect(missing.body.error.code).toBe("not_found");

    const editor = await createKey(gateway, ["hooks:read", "hooks:write"]);
    const forbidden = await patchProfile(gateway, gateway.defaultProfileId, { defaultMode: "block" }, editor);
    expect(forbidden.status).toBe(403);
    expect(forbidden.body.error.code).toBe("forbidden");

    // None of the refused writes changed anything, in either workspace.
    const own = await api(`/v1/workspaces/${gateway.ws}/profiles`, { key: gateway.adminKey });
    expect(own.body.profiles).toMatchObject([{ defaultMode: "allow", riskRules: {}, updatedBy: null }]);
    const theirs = await api(`/v1/workspaces/${other.ws}/profiles`, { key: other.adminKey });
    expect(theirs.body.profiles).toMatchObject([{ defaultMode: "allow", updatedBy: null }]);
  });
});
