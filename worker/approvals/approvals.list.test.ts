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
  reason: "policy_approval",
  message: null,
  source: "policy",
});

/**
 * Creates approvals straight in the workspace's Durable Object, in this order:
 * `sameMs` of them in one millisecond, then `later` ones each a little earlier
 * than the last (clocks can step back). Ids run against insertion order, so
 * neither ids nor times can stand in for it. Returns the ids newest first.
 */
async function seedApprovals(ws: string, sameMs: number, later: number): Promise<string[]> {
  return runInDurableObject(env.WORKSPACE.getByName(ws), (_instance, state) => {
    const store = new ApprovalStore(state.storage.sql);
    const now = Date.now();
    const ids: string[] = [];
    for (let n = 0; n < sameMs + later; n++) {
      const id = `apr_listing_${String(99 - n).padStart(2, "0")}`;
      store.claimOrRequest(request(n), id, n < sameMs ? now : now - n);
      ids.push(id);
    }
    // One is decided, so a status filter has something to leave out.
    store.decide(ids[1]!, "denied", "usr_listing", null, now);
    return ids.reverse();
  });
}

async function pageThrough(ws: string, key: string, query: string): Promise<{ ids: string[]; pages: number }> {
  const ids: string[] = [];
  let cursor: string | null = null;
  let pages = 0;
  do {
    const page: ApiResponse<{ approvals: { id: string }[]; nextCursor: string | null }> = await api(
      `/v1/workspaces/${ws}/approvals?limit=2${query}${cursor ? `&cursor=${cursor}` : ""}`,
      { key },
    );
    expect(page.status).toBe(200);
    ids.push(...page.body.approvals.map((approval) => approval.id));
    cursor = page.body.nextCursor;
    pages++;
  } while (cursor);
  return { ids, pages };
}

describe("listing approvals", () => {
  it("pages through every approval, newest first, even when several share a millisecond", async () => {
    const workspace = await createWorkspace();
    const newestFirst = await seedApprovals(workspace.ws, 4, 2);
    const all = await pageThrough(workspace.ws, workspace.adminKey, "");
    expect(all.ids).toEqual(newestFirst);
    expect(all.pages).toBe(3); // a full last page says so: no empty page after it
    const pending = await pageThrough(workspace.ws, workspace.adminKey, "&status=pending");
    expect(pending.ids).toEqual(newestFirst.filter((id) => id !== newestFirst.at(-2)));
    expect(pending.pages).toBe(3);
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
