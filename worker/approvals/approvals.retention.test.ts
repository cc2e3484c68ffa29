/**
 * Approvals are kept APPROVAL_RETENTION_MS after they expire, then deleted, a bounded number per new request: the
 * requests a `tools:call` key makes (up to 100 an hour, 64 KiB each) no longer pile up in the workspace's Durable
 * Object for ever.
 */
import { env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { createWorkspace } from "../../test/helpers.ts";
import { APPROVAL_TTL_MS, ApprovalStore, type ApprovalRequest } from "./approvals.do.ts";

/** What docs/limits.md promises: an approval is kept 30 days after it expires (APPROVAL_RETENTION_MS). */
const APPROVAL_RETENTION_MS = 30 * 24 * 60 * 60 * 1000;

const request = (n: number): ApprovalRequest => ({
  toolUid: "tool_retention",
  publicName: "demo__delete_record",
  keyId: `key_retention_${n % 10}`,
  revisionId: null,
  callHash: `hash-${n}`,
  argumentsJson: JSON.stringify({ id: `r${n}`, padding: "x".repeat(1000) }),
  reason: "policy_approval",
  message: null,
  source: "policy",
});

describe("approval retention", () => {
  it("deletes approvals long expired, whatever became of them, and keeps those within retention", async () => {
    const { ws } = await createWorkspace();
    await runInDurableObject(env.WORKSPACE.getByName(ws), (_instance, state) => {
      const store = new ApprovalStore(state.storage.sql);
      const now = Date.now();
      const gone = now - APPROVAL_RETENTION_MS - APPROVAL_TTL_MS - 60_000;
      const kept = now - APPROVAL_RETENTION_MS + 60_000;
      // 150 past retention (some denied, some used, the rest never decided) and one still within it.
      for (let n = 0; n < 150; n++) {
        store.claimOrRequest(request(n), `apr_old_${n}`, gone + n);
        if (n % 3 === 1) store.decide(`apr_old_${n}`, "denied", "usr_retention", null, gone + n);
        if (n % 3 === 2) {
          store.decide(`apr_old_${n}`, "approved", "usr_retention", null, gone + n);
          store.claimOrRequest(request(n), "unused", gone + n + 1);
        }
      }
      store.claimOrRequest(request(1000), "apr_recent", kept);
      const count = () => state.storage.sql.exec<{ n: number }>("SELECT COUNT(*) AS n FROM approvals").one().n;
      expect(count()).toBe(151);

      // Each new request deletes at most 100 of them: two are enough here.
      store.claimOrRequest(request(2000), "apr_new_1", now);
      expect(count()).toBe(52);
      store.claimOrRequest(request(2001), "apr_new_2", now);
      expect(count()).toBe(3);
      expect(store.get("apr_old_0", now)).toBeNull();
      expect(store.get("apr_recent", now)?.status).toBe("expired");
      expect(store.get("apr_new_2", now)?.status).toBe("pending");
    });
  });
});
