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
import { applyMigrations } from "../lib/sqlite-migrations.ts";
import { WORKSPACE_MIGRATIONS } from "./workspace.schema.ts";

/**
 * One instance per workspace, addressed by workspace id. It is the single writer
 * for state that must not race: hook drafts and etags, deployment pointers, the
 * draft-save quota, byte allowances and approvals (see schema/STORAGE.md). Its
 * schema is migrated once, when the object starts; the class only delegates:
 * each domain keeps its SQL in its own module. Worker code reaches it through
 * workspace.client.ts.
 */
export class WorkspaceDO extends DurableObject<Env> {
  readonly #approvals: ApprovalStore;
  readonly #hooks: HookLifecycle;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    // No request reaches the tables before the schema is current.
    void ctx.blockConcurrencyWhile(async () => {
      applyMigrations(ctx.storage, WORKSPACE_MIGRATIONS);
    });
    this.#approvals = new ApprovalStore(ctx.storage.sql);
    this.#hooks = new HookLifecycle(ctx.storage.sql, env);
  }

  /** The call path's one read per call: the tool's active and shadow pointers (one indexed SQL read). */
  toolDeployments(toolUid: string) {
    return this.#hooks.deployments(toolUid);
  }

  /** Every tool's pointers, for discovery of public contracts. */
  allToolDeployments() {
    return this.#hooks.allDeployments();
  }

  hookDraft(toolUid: string) {
    return this.#hooks.draft(toolUid);
  }

  precheckHookDraftSave(input: DraftSavePrecheck) {
    return this.#hooks.precheckDraftSave(input);
  }

  saveHookDraft(input: SaveDraftInput) {
    return this.#hooks.saveDraft(input);
  }

  commitHookRevision(input: CommitRevisionInput) {
    return this.#hooks.commitRevision(input);
  }

  deployHook(input: DeployInput) {
    return this.#hooks.deploy(input);
  }

  undeployHook(input: Omit<DeployInput, "revisionId" | "currentDefinitionHash">) {
    return this.#hooks.undeploy(input);
  }

  resetHook(input: { workspaceId: string; toolUid: string; actor: HookActor }) {
    return this.#hooks.reset(input);
  }

  hookUsage(workspaceId: string) {
    return this.#hooks.usage(workspaceId);
  }

  claimOrRequestApproval(request: ApprovalRequest) {
    return this.#approvals.claimOrRequest(request, newId("apr"));
  }

  getApproval(id: string) {
    return this.#approvals.get(id);
  }

  listApprovals(filter: { status?: ApprovalStatus; limit: number; before?: number }) {
    return this.#approvals.list(filter);
  }

  decideApproval(id: string, decision: "approved" | "denied", actorId: string, note: string | null) {
    return this.#approvals.decide(id, decision, actorId, note);
  }
}
