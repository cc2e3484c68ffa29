import { DurableObject } from "cloudflare:workers";
import { ApprovalStore, type ApprovalRequest, type ApprovalStatus } from "../approvals/approvals.do.ts";
import {
  HookLifecycle,
  type CommitRevisionInput,
  type DeployInput,
  type DraftSavePrecheck,
  type SaveDraftInput,
} from "../hooks/lifecycle/lifecycle.do.ts";
import type { HookActor } from "../hooks/lifecycle/lifecycle.types.ts";
import { newId } from "../lib/ids.ts";

/**
 * One instance per workspace, addressed by workspace id. It is the single writer
 * for state that must not race: hook drafts and etags, deployment pointers, quota
 * counters, byte allowances and approvals (see schema/STORAGE.md). The class only
 * delegates: each domain keeps its tables and SQL in its own module.
 */
export class WorkspaceDO extends DurableObject<Env> {
  #approvals: ApprovalStore | undefined;
  #hooks: HookLifecycle | undefined;

  #hookLifecycle(): HookLifecycle {
    this.#hooks ??= new HookLifecycle(this.ctx.storage.sql, this.env);
    return this.#hooks;
  }

  /** The call path's one read per call: the tool's active and shadow pointers (one indexed SQL read). */
  toolDeployments(toolUid: string) {
    return this.#hookLifecycle().deployments(toolUid);
  }

  /** Every tool's pointers, for discovery of public contracts. */
  allToolDeployments() {
    return this.#hookLifecycle().allDeployments();
  }

  hookDraft(toolUid: string) {
    return this.#hookLifecycle().draft(toolUid);
  }

  precheckHookDraftSave(input: DraftSavePrecheck) {
    return this.#hookLifecycle().precheckDraftSave(input);
  }

  saveHookDraft(input: SaveDraftInput) {
    return this.#hookLifecycle().saveDraft(input);
  }

  chargeHookCompile(actorId: string) {
    return this.#hookLifecycle().chargeCompile(actorId);
  }

  commitHookRevision(input: CommitRevisionInput) {
    return this.#hookLifecycle().commitRevision(input);
  }

  deployHook(input: DeployInput) {
    return this.#hookLifecycle().deploy(input);
  }

  undeployHook(input: Omit<DeployInput, "revisionId" | "currentDefinitionHash">) {
    return this.#hookLifecycle().undeploy(input);
  }

  resetHook(input: { workspaceId: string; toolUid: string; actor: HookActor }) {
    return this.#hookLifecycle().reset(input);
  }

  hookUsage(workspaceId: string, actorId: string) {
    return this.#hookLifecycle().usage(workspaceId, actorId);
  }

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
