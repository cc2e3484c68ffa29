import { DurableObject } from "cloudflare:workers";
import { ApprovalStore, type ApprovalRequest, type ApprovalStatus } from "../approvals/approvals.do.ts";
import { newId } from "../lib/ids.ts";

/**
 * One instance per workspace, addressed by workspace id. It is the single writer
 * for state that must not race: hook drafts and etags, deployment pointers, quota
 * counters, byte allowances and approvals (see schema/STORAGE.md). The class only
 * delegates: each domain keeps its tables and SQL in its own module.
 */
export class WorkspaceDO extends DurableObject<Env> {
  #approvals: ApprovalStore | undefined;

  #approvalStore(): ApprovalStore {
    this.#approvals ??= new ApprovalStore(this.ctx.storage.sql);
    return this.#approvals;
  }

  claimOrRequestApproval(request: ApprovalRequest) {
    return this.#approvalStore().claimOrRequest(request, newId("apr"));
  }

  getApproval(id: string) {
    return this.#approvalStore().get(id);
  }

  listApprovals(filter: { status?: ApprovalStatus; limit: number; before?: number }) {
    return this.#approvalStore().list(filter);
  }

  decideApproval(id: string, decision: "approved" | "denied", actorId: string) {
    return this.#approvalStore().decide(id, decision, actorId);
  }
}
