import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { api, createWorkspace } from "../../test/helpers.ts";
import { workspaceClient } from "../workspaces/workspace.client.ts";
import type { ApprovalRequest } from "./approvals.do.ts";

const MESSAGE = "Refunds over 500 EUR need a second person: this one is 1,200 EUR for order 8812.";

const hookRequest: ApprovalRequest = {
  toolUid: "tool_refunds",
  publicName: "billing__refund",
  keyId: "key_agent",
  revisionId: "rev_refunds",
  callHash: "hash-refund-8812",
  argumentsJson: JSON.stringify({ order: "8812", amount: 1200 }),
  reason: "large_refund",
  message: MESSAGE,
  source: "hook",
};

describe("approval messages", () => {
  it("shows the hook's message beside its reason code in the list, the approval and the decision", async () => {
    const workspace = await createWorkspace();
    // The call path's own way in: the workspace's typed client.
    const claim = await workspaceClient(env, workspace.ws).claimOrRequestApproval(hookRequest);
    if (!("approval" in claim)) throw new Error("the workspace's pending approvals are full");
    const { approval } = claim;
    const expected = {
      id: approval.id,
      reason: "large_refund",
      message: MESSAGE,
      source: "hook",
      arguments: { order: "8812", amount: 1200 },
    };

    const listed = await api(`/v1/workspaces/${workspace.ws}/approvals`, { key: workspace.adminKey });
    expect(listed.status).toBe(200);
    expect(listed.body.approvals).toEqual([expect.objectContaining(expected)]);
    const one = await api(`/v1/workspaces/${workspace.ws}/approvals/${approval.id}`, { key: workspace.adminKey });
    expect(one.body).toMatchObject(expected);
    const approved = await api(`/v1/workspaces/${workspace.ws}/approvals/${approval.id}/approve`, {
      method: "POST",
      key: workspace.adminKey,
    });
    expect(approved.status).toBe(200);
    expect(approved.body).toMatchObject({ ...expected, status: "approved" });
  });

  it("keeps a policy approval's message null", async () => {
    const workspace = await createWorkspace();
    const claim = await workspaceClient(env, workspace.ws).claimOrRequestApproval({
      ...hookRequest,
      revisionId: null,
      reason: "policy_approval",
      message: null,
      source: "policy",
    });
    if (!("approval" in claim)) throw new Error("the workspace's pending approvals are full");
    const { approval } = claim;
    const denied = await api(`/v1/workspaces/${workspace.ws}/approvals/${approval.id}/deny`, { method: "POST", key: workspace.adminKey });
    expect(denied.status).toBe(200);
    expect(denied.body).toMatchObject({ reason: "policy_approval", message: null, status: "denied" });
  });
});
