import { env, createScheduledController, createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { describe, it } from "vitest";
import worker from "../index.ts";
import { MAX_APPROVAL_ARGUMENTS_BYTES, MAX_PENDING_APPROVALS, MAX_PENDING_APPROVALS_PER_KEY } from "../approvals/approvals.do.ts";
import { api, connectMcp, createKey, demoGateway, eventually, upstreamReceived } from "../../test/helpers.ts";

const META = "dev.rayrun/error";

async function setPolicy(gateway: Awaited<ReturnType<typeof demoGateway>>, tool: string, mode: string) {
  const res = await api(`/v1/workspaces/${gateway.ws}/tools/${gateway.toolUid(tool)}/policy`, {
    method: "PUT",
    key: gateway.adminKey,
    body: { profileId: gateway.defaultProfileId, mode },
  });
  if (res.status !== 200) throw new Error(JSON.stringify(res.body));
}

describe("policy approvals", () => {
  it("runs an approved call exactly once, and refuses a second use or a different call", async ({ expect }) => {
    const gateway = await demoGateway();
    await setPolicy(gateway, "delete_record", "approval");
    const client = await connectMcp(gateway.clientKey);

    const first = await client.callTool({ name: "demo__delete_record", arguments: { id: "r1" } });
    expect(first.isError).toBe(true);
    const pending = (first._meta as Record<string, any>)[META];
    expect(pending).toMatchObject({ code: "approval_required", details: { reason: "policy_approval", tool: "demo__delete_record" } });
    const approvalId = pending.details.approvalId as string;
    // approveAt opens the approval's page in the console (served from the gateway's origin when CONSOLE_URL is empty);
    // approveApi is the REST route an admin key POSTs to, which approveAt was before.
    expect(pending.details.approveAt).toBe(`https://rayrun.test/#/w/${gateway.ws}/approvals/${approvalId}`);
    expect(pending.details.approveApi).toBe(`https://rayrun.test/v1/workspaces/${gateway.ws}/approvals/${approvalId}/approve`);
    // Asking again before a decision returns the same pending approval, not a new one.
    const again = await client.callTool({ name: "demo__delete_record", arguments: { id: "r1" } });
    expect((again._meta as Record<string, any>)[META].details.approvalId).toBe(approvalId);

    const listed = await api(`/v1/workspaces/${gateway.ws}/approvals?status=pending`, { key: gateway.adminKey });
    expect(listed.body.approvals).toHaveLength(1);
    expect(listed.body.approvals[0]).toMatchObject({
      id: approvalId,
      arguments: { id: "r1" },
      source: "policy",
      message: null,
      status: "pending",
    });

    const reader = await createKey(gateway, ["hooks:read", "hooks:write"]);
    expect((await api(`/v1/workspaces/${gateway.ws}/approvals/${approvalId}/approve`, { method: "POST", key: reader })).status).toBe(403);
    const approved = await api(`/v1/workspaces/${gateway.ws}/approvals/${approvalId}/approve`, { method: "POST", key: gateway.adminKey });
    expect(approved.status).toBe(200);
    expect(approved.body).toMatchObject({ status: "approved", decisionNote: null });

    const other = await client.callTool({ name: "demo__delete_record", arguments: { id: "r2" } });
    expect((other._meta as Record<string, any>)[META].code).toBe("approval_required");
    expect((await upstreamReceived(gateway.tag)).calls).toEqual([]);

    const run = await client.callTool({ name: "demo__delete_record", arguments: { id: "r1" } });
    expect(run).toEqual({ content: [{ type: "text", text: "Deleted record r1" }] });
    const second = await client.callTool({ name: "demo__delete_record", arguments: { id: "r1" } });
    expect((second._meta as Record<string, any>)[META].code).toBe("approval_required");
    expect((await upstreamReceived(gateway.tag)).calls.map((call) => call.arguments)).toEqual([{ id: "r1" }]);

    const used = await api(`/v1/workspaces/${gateway.ws}/approvals/${approvalId}`, { key: gateway.adminKey });
    expect(used.body).toMatchObject({ status: "used", decidedBy: expect.stringMatching(/^key_/) });
    const decideAgain = await api(`/v1/workspaces/${gateway.ws}/approvals/${approvalId}/deny`, { method: "POST", key: gateway.adminKey });
    expect(decideAgain.status).toBe(409);
    expect(decideAgain.body.error.code).toBe("approval_not_pending");
  });

  it("refuses a denied call and an approval used by another key", async ({ expect }) => {
    const gateway = await demoGateway();
    await setPolicy(gateway, "delete_record", "approval");
    const client = await connectMcp(gateway.clientKey);
    const first = await client.callTool({ name: "demo__delete_record", arguments: { id: "r9" } });
    const approvalId = (first._meta as Record<string, any>)[META].details.approvalId;
    await api(`/v1/workspaces/${gateway.ws}/approvals/${approvalId}/approve`, { method: "POST", key: gateway.adminKey });

    const otherKey = await createKey(gateway, ["tools:call"], gateway.defaultProfileId);
    const otherClient = await connectMcp(otherKey);
    const stolen = await otherClient.callTool({ name: "demo__delete_record", arguments: { id: "r9" } });
    expect((stolen._meta as Record<string, any>)[META].code).toBe("approval_required");

    const denyTarget = (stolen._meta as Record<string, any>)[META].details.approvalId;
    const denied = await api(`/v1/workspaces/${gateway.ws}/approvals/${denyTarget}/deny`, {
      key: gateway.adminKey,
      body: { note: "  Not this key's record.  " },
    });
    expect(denied.body).toMatchObject({ status: "denied", decisionNote: "Not this key's record." });
    const listed = await api(`/v1/workspaces/${gateway.ws}/approvals?status=denied`, { key: gateway.adminKey });
    expect(listed.body.approvals).toMatchObject([
      { id: denyTarget, decisionNote: "Not this key's record.", decidedBy: expect.any(String) },
    ]);
    const afterDeny = await otherClient.callTool({ name: "demo__delete_record", arguments: { id: "r9" } });
    expect((afterDeny._meta as Record<string, any>)[META].code).toBe("approval_required");
    expect((await upstreamReceived(gateway.tag)).calls).toEqual([]);
  });
});

describe("deciding with a note", () => {
  it("refuses a note that is empty, too long or not a string, and an unknown field, deciding nothing", async ({ expect }) => {
    const gateway = await demoGateway();
    await setPolicy(gateway, "delete_record", "approval");
    const client = await connectMcp(gateway.clientKey);
    const held = await client.callTool({ name: "demo__delete_record", arguments: { id: "n1" } });
    const approvalId = (held._meta as Record<string, any>)[META].details.approvalId as string;
    const approve = (body: unknown) => api(`/v1/workspaces/${gateway.ws}/approvals/${approvalId}/approve`, { key: gateway.adminKey, body });
    for (const [body, field] of [
      [{ note: "   " }, "json.note"],
      [{ note: "x".repeat(1001) }, "json.note"],
      [{ note: 7 }, "json.note"],
      [{ note: "fine", decidedBy: "someone else" }, "json"],
    ] as const) {
      const refused = await approve(body);
      expect(refused.status, JSON.stringify(body)).toBe(400);
      expect(refused.body.error).toMatchObject({ code: "invalid_request", details: { issues: [{ field }] } });
    }
    const bad = await api(`/v1/workspaces/${gateway.ws}/approvals/${approvalId}/approve`, { key: gateway.adminKey, rawBody: "{" });
    expect(bad.body.error.code).toBe("invalid_json");
    expect((await api(`/v1/workspaces/${gateway.ws}/approvals/${approvalId}`, { key: gateway.adminKey })).body.status).toBe("pending");

    const approved = await approve({ note: "x".repeat(1000) });
    expect(approved.body).toMatchObject({ status: "approved", decisionNote: "x".repeat(1000) });
  });
});

describe("approval allowances", () => {
  it("refuses with approval_limit once the workspace holds 100 pending approvals, and frees a slot on a decision", async ({ expect }) => {
    const gateway = await demoGateway();
    await setPolicy(gateway, "delete_record", "approval");
    // Each key holds at most MAX_PENDING_APPROVALS_PER_KEY: enough keys to fill the workspace's queue.
    const keys = [gateway.clientKey];
    while (keys.length * MAX_PENDING_APPROVALS_PER_KEY < MAX_PENDING_APPROVALS) {
      keys.push(await createKey(gateway, ["tools:call"], gateway.defaultProfileId));
    }
    const clients = await Promise.all(keys.map((key) => connectMcp(key)));
    const callAs = (client: (typeof clients)[number], id: string) => client.callTool({ name: "demo__delete_record", arguments: { id } });
    const pendingIds: string[] = [];
    for (let n = 0; n < MAX_PENDING_APPROVALS; n++) {
      const result = await callAs(clients[Math.floor(n / MAX_PENDING_APPROVALS_PER_KEY)]!, `r${n}`);
      expect((result._meta as Record<string, any>)[META].code).toBe("approval_required");
      pendingIds.push((result._meta as Record<string, any>)[META].details.approvalId);
    }
    // A key that holds none: the workspace's cap is what refuses it.
    const fresh = await connectMcp(await createKey(gateway, ["tools:call"], gateway.defaultProfileId));
    const call = (id: string) => callAs(fresh, id);
    const full = await call("one-too-many");
    expect(full.isError).toBe(true);
    expect((full._meta as Record<string, any>)[META]).toEqual({
      code: "approval_limit",
      message: expect.stringContaining(`${MAX_PENDING_APPROVALS} approvals waiting`),
      details: { tool: "demo__delete_record", reason: "policy_approval", limit: "pending_approvals", max: MAX_PENDING_APPROVALS },
    });
    // Asking again for a call that already waits is not a new request.
    expect((await callAs(clients[0]!, "r0"))._meta).toMatchObject({
      [META]: { code: "approval_required", details: { approvalId: pendingIds[0] } },
    });

    await api(`/v1/workspaces/${gateway.ws}/approvals/${pendingIds[0]}/deny`, { method: "POST", key: gateway.adminKey });
    expect((await call("one-too-many"))._meta).toMatchObject({ [META]: { code: "approval_required" } });
    expect((await call("and-another"))._meta).toMatchObject({ [META]: { code: "approval_limit" } });
    expect((await upstreamReceived(gateway.tag)).calls).toEqual([]);
  });

  it("finding 7: one key cannot fill its workspace's approval queue; past 20 pending it is refused approval_key_limit", async ({
    expect,
  }) => {
    const gateway = await demoGateway();
    await setPolicy(gateway, "delete_record", "approval");
    const flooder = await connectMcp(gateway.clientKey);
    const calls = await Promise.all(
      Array.from({ length: MAX_PENDING_APPROVALS_PER_KEY + 10 }, (_, n) =>
        flooder.callTool({ name: "demo__delete_record", arguments: { id: `flood-${n}` } }),
      ),
    );
    const codes = calls.map((result) => (result._meta as Record<string, any>)[META].code as string);
    expect(codes.filter((code) => code === "approval_required")).toHaveLength(MAX_PENDING_APPROVALS_PER_KEY);
    expect(codes.filter((code) => code === "approval_key_limit")).toHaveLength(10);
    const refused = calls.find((result) => (result._meta as Record<string, any>)[META].code === "approval_key_limit")!;
    expect(refused.isError).toBe(true);
    expect((refused._meta as Record<string, any>)[META]).toEqual({
      code: "approval_key_limit",
      message: `This call needs a human approval (policy_approval), but this key already has ${MAX_PENDING_APPROVALS_PER_KEY} approvals waiting; ask an approver to decide them, or retry after they expire`,
      details: {
        tool: "demo__delete_record",
        reason: "policy_approval",
        limit: "pending_approvals_per_key",
        max: MAX_PENDING_APPROVALS_PER_KEY,
      },
    });
    // Another agent of the workspace still gets its approval request.
    const other = await connectMcp(await createKey(gateway, ["tools:call"], gateway.defaultProfileId));
    const asked = await other.callTool({ name: "demo__delete_record", arguments: { id: "someone-else" } });
    expect((asked._meta as Record<string, any>)[META]).toMatchObject({ code: "approval_required" });
    // A decision frees one of the flooder's slots.
    const pendingId = (
      calls.find((result) => (result._meta as Record<string, any>)[META].code === "approval_required")!._meta as Record<string, any>
    )[META].details.approvalId;
    await api(`/v1/workspaces/${gateway.ws}/approvals/${pendingId}/deny`, { method: "POST", key: gateway.adminKey });
    expect((await flooder.callTool({ name: "demo__delete_record", arguments: { id: "after-deny" } }))._meta).toMatchObject({
      [META]: { code: "approval_required" },
    });
    expect((await upstreamReceived(gateway.tag)).calls).toEqual([]);
  });

  it("refuses with approval_limit a call whose arguments are over 64 KiB, storing nothing", async ({ expect }) => {
    const gateway = await demoGateway();
    await setPolicy(gateway, "delete_record", "approval");
    const client = await connectMcp(gateway.clientKey);
    const id = "x".repeat(MAX_APPROVAL_ARGUMENTS_BYTES);
    const result = await client.callTool({ name: "demo__delete_record", arguments: { id } });
    expect(result.isError).toBe(true);
    expect((result._meta as Record<string, any>)[META]).toEqual({
      code: "approval_limit",
      message: expect.stringContaining("too large to hold for an approver"),
      details: {
        tool: "demo__delete_record",
        reason: "policy_approval",
        limit: "approval_arguments_bytes",
        bytes: JSON.stringify({ id }).length,
        max: MAX_APPROVAL_ARGUMENTS_BYTES,
      },
    });
    const listed = await api(`/v1/workspaces/${gateway.ws}/approvals`, { key: gateway.adminKey });
    expect(listed.body.approvals).toEqual([]);
    // Just under the cap is held as usual.
    const fits = await client.callTool({ name: "demo__delete_record", arguments: { id: id.slice(0, -100) } });
    expect((fits._meta as Record<string, any>)[META].code).toBe("approval_required");
  });
});

describe("argument validation and projection", () => {
  it("refuses arguments that fail the tool's input schema before any upstream call", async ({ expect }) => {
    const gateway = await demoGateway();
    const client = await connectMcp(gateway.clientKey);
    const result = await client.callTool({ name: "demo__search_release_notes", arguments: { query: 42 } });
    expect(result.isError).toBe(true);
    expect((result._meta as Record<string, any>)[META]).toMatchObject({
      code: "invalid_arguments",
      details: { violations: [{ pointer: "/query", message: expect.stringContaining("string") }] },
    });
    expect((await upstreamReceived(gateway.tag)).calls).toEqual([]);
  });

  it("returns only the projected fields, in the result and in discovery", async ({ expect }) => {
    const gateway = await demoGateway();
    const uid = gateway.toolUid("lookup_customer");
    const bad = await api(`/v1/workspaces/${gateway.ws}/tools/${uid}/projection`, {
      method: "PUT",
      key: gateway.adminKey,
      body: { fields: ["name", "ssn"] },
    });
    expect(bad.status).toBe(400);
    expect(bad.body.error.message).toBe("Not properties of the output schema: ssn");
    const noSchema = await api(`/v1/workspaces/${gateway.ws}/tools/${gateway.toolUid("delete_record")}/projection`, {
      method: "PUT",
      key: gateway.adminKey,
      body: { fields: ["id"] },
    });
    expect(noSchema.body.error.code).toBe("projection_requires_output_schema");

    const set = await api(`/v1/workspaces/${gateway.ws}/tools/${uid}/projection`, {
      method: "PUT",
      key: gateway.adminKey,
      body: { fields: ["name", "plan"] },
    });
    expect(set.status).toBe(200);
    const client = await connectMcp(gateway.clientKey);
    const listed = (await client.listTools()).tools.find((tool) => tool.name === "demo__lookup_customer")!;
    expect(Object.keys(listed.outputSchema!.properties!)).toEqual(["name", "plan"]);
    const result = await client.callTool({ name: "demo__lookup_customer", arguments: { email: "ada@example.com" } });
    expect(result.structuredContent).toEqual({ name: "Ada Lovelace", plan: "enterprise" });
    expect(JSON.stringify(result.content)).not.toContain("+44");
  });
});

describe("call logs", () => {
  it("logs pre-dispatch refusals, keeps details only with payload capture, and shows them only to hooks:write", async ({ expect }) => {
    const gateway = await demoGateway();
    await setPolicy(gateway, "delete_record", "approval");
    const client = await connectMcp(gateway.clientKey);
    await client.callTool({ name: "demo__delete_record", arguments: { id: "x" } });
    const uid = gateway.toolUid("delete_record");
    const logsPath = `/v1/workspaces/${gateway.ws}/tools/${uid}/hook/logs`;
    const withoutCapture = await eventually(
      () => api(logsPath, { key: gateway.adminKey }),
      (res) => res.body.logs.length === 1,
    );
    expect(withoutCapture.body.logs[0]).toMatchObject({
      stage: "pre_dispatch",
      outcome: "refused",
      code: "approval_required",
      details: null,
    });

    await api(`/v1/workspaces/${gateway.ws}`, { method: "PATCH", key: gateway.adminKey, body: { detailPolicy: "payloads" } });
    await api(`/v1/workspaces/${gateway.ws}/services/${gateway.service.id}`, {
      method: "PATCH",
      key: gateway.adminKey,
      body: { payloadCapture: true },
    });
    await client.callTool({ name: "demo__delete_record", arguments: { id: "x" } });
    const captured = await eventually(
      () => api(logsPath, { key: gateway.adminKey }),
      (res) => res.body.logs.length === 2,
    );
    expect(captured.body.logs[0].details).toEqual({ message: expect.stringContaining("human approval") });

    const reader = await createKey(gateway, ["hooks:read"]);
    const hidden = await api(logsPath, { key: reader });
    expect(hidden.body.logs).toHaveLength(2);
    expect(hidden.body.logs.every((log: Record<string, unknown>) => !("details" in log))).toBe(true);

    const lines = await api(`${logsPath}?format=jsonl&limit=1`, { key: gateway.adminKey });
    expect(lines.headers.get("content-type")).toBe("application/x-ndjson");
    expect((lines.body as string).trim().split("\n")).toHaveLength(1);
    expect(lines.headers.get("x-next-cursor")).toMatch(/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);
    const page2 = await api(`${logsPath}?cursor=${lines.headers.get("x-next-cursor")}`, { key: gateway.adminKey });
    expect(page2.body.logs).toHaveLength(1);
    expect(page2.body.logs[0].details).toBeNull();
    const filtered = await api(`${logsPath}?stage=before`, { key: gateway.adminKey });
    expect(filtered.body.logs).toEqual([]);
  });

  it("clears captured details with the scheduled retention job", async ({ expect }) => {
    const old = new Date(Date.now() - 8 * 24 * 3600 * 1000).toISOString();
    const ancient = new Date(Date.now() - 31 * 24 * 3600 * 1000).toISOString();
    const insert = (createdAt: string) =>
      env.DB.prepare(
        `INSERT INTO call_logs (workspace_id, tool_uid, request_id, stage, channel, outcome, duration_ms, details, created_at)
         VALUES ('ws_retention', 'tool_r', ?, 'before', 'active', 'reject', 1, '{"message":"secretish"}', ?)`,
      )
        .bind(`req_${createdAt}`, createdAt)
        .run();
    await insert(new Date().toISOString());
    await insert(old);
    await insert(ancient);
    const ctx = createExecutionContext();
    await worker.scheduled(createScheduledController({ cron: "17 * * * *" }), env, ctx);
    await waitOnExecutionContext(ctx);
    const { results } = await env.DB.prepare(
      "SELECT created_at, details FROM call_logs WHERE workspace_id = 'ws_retention' ORDER BY created_at",
    ).all();
    expect(results).toEqual([
      { created_at: old, details: null },
      { created_at: expect.any(String), details: '{"message":"secretish"}' },
    ]);
  });
});
