import { env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { api, createWorkspace, type ApiResponse } from "../../test/helpers.ts";
import { ApprovalStore, type ApprovalRequest } from "./approvals.do.ts";

const request = (n: number): ApprovalRequest => ({
  toolUid: "tool_listing",
  publicName: "demo__delete_record",
  keyId: "key_listing",
  revisionId: null,
  callHash: `hash-${n}`,
  argumentsJson: JSON.stringify({ id: `r${n}` }),
  reason: "policy requires approval",
  source: "policy",
});

/** Creates approvals straight in the workspace's Durable Object, `sameMs` of them in one millisecond. */
async function seedApprovals(ws: string, sameMs: number, later: number): Promise<string[]> {
  return runInDurableObject(env.WORKSPACE.getByName(ws), (_instance, state) => {
    const store = new ApprovalStore(state.storage.sql);
    const now = Date.now();
    const ids: string[] = [];
    for (let n = 0; n < sameMs + later; n++) {
      const id = `apr_listing_${n}`;
      store.claimOrRequest(request(n), id, n < sameMs ? now : now + n);
      ids.push(id);
    }
    return ids;
  });
}

describe("listing approvals", () => {
  it("pages through every approval, newest first, even when several share a millisecond", async () => {
    const workspace = await createWorkspace();
    const created = await seedApprovals(workspace.ws, 4, 2);
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const page: ApiResponse<{ approvals: { id: string }[]; nextCursor: string | null }> = await api(
        `/v1/workspaces/${workspace.ws}/approvals?limit=2${cursor ? `&cursor=${cursor}` : ""}`,
        { key: workspace.adminKey },
      );
      expect(page.status).toBe(200);
      seen.push(...page.body.approvals.map((approval) => approval.id));
      cursor = page.body.nextCursor;
      pages++;
    } while (cursor);
    expect(seen).toEqual([...created].reverse());
    expect(pages).toBe(3); // a full last page says so: no empty page after it
  });

  it("refuses a cursor it did not issue", async () => {
    const workspace = await createWorkspace();
    for (const cursor of ["abc", "-1", "1".repeat(16)]) {
      const res = await api(`/v1/workspaces/${workspace.ws}/approvals?cursor=${cursor}`, { key: workspace.adminKey });
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe("invalid_request");
      expect(JSON.stringify(res.body.error.details)).toContain("cursor");
    }
  });
});
