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
import { LeaseGrants } from "../leases/grants.do.ts";
import { UpstreamGrantStore, type GrantSubject, type NewFlow, type TokenRequest } from "../upstream-auth/grants.do.ts";
import { WORKSPACE_MIGRATIONS } from "./workspace.schema.ts";

/**
 * One instance per workspace, addressed by workspace id. It is the single writer
 * for state that must not race: hook drafts and etags, deployment pointers, the
 * draft-save quota, byte allowances and approvals (see schema/STORAGE.md). It
 * also grants the read leases every isolate holds on the call-affecting state
 * (docs/leases.md), and opens and closes the windows changes are written in. Its
 * schema is migrated once, when the object starts; the class only delegates:
 * each domain keeps its SQL in its own module. Worker code reaches it through
 * workspace.client.ts.
 */
export class WorkspaceDO extends DurableObject<Env> {
  readonly #approvals: ApprovalStore;
  readonly #hooks: HookLifecycle;
  readonly #leases: LeaseGrants;
  readonly #grants: UpstreamGrantStore;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    // No request reaches the tables before the schema is current.
    void ctx.blockConcurrencyWhile(async () => {
      applyMigrations(ctx.storage, WORKSPACE_MIGRATIONS);
    });
    this.#approvals = new ApprovalStore(ctx.storage.sql);
    this.#hooks = new HookLifecycle(ctx.storage.sql, env);
    this.#leases = new LeaseGrants(ctx.storage.sql);
    this.#grants = new UpstreamGrantStore(ctx.storage.sql, env);
  }

  /** A read lease on the call-affecting state, with every tool's pointers unless the holder has this token's. */
  grantLease(holder: string, heldToken: string | null) {
    return this.#leases.grant(holder, heldToken, () => this.#hooks.allDeployments());
  }

  /** Opens a change window before a write request's writes (worker/leases/change-window.ts). */
  beginChange(): string {
    const id = newId("chg");
    this.#leases.beginChange(id);
    return id;
  }

  /** Closes it: a new version, and when it is in force everywhere (the requesting holder's leases given up). */
  endChange(id: string, relinquishedBy: string | null) {
    return this.#leases.endChange(id, relinquishedBy);
  }

  leaseStatus() {
    return this.#leases.status();
  }

  /** The tool's active and shadow pointers (one indexed SQL read), for the API. */
  toolDeployments(toolUid: string) {
    return this.#hooks.deployments(toolUid);
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
    return this.#pointersChanged(this.#hooks.deploy(input));
  }

  undeployHook(input: Omit<DeployInput, "revisionId" | "currentDefinitionHash">) {
    return this.#pointersChanged(this.#hooks.undeploy(input));
  }

  resetHook(input: { workspaceId: string; toolUid: string; actor: HookActor }) {
    return this.#pointersChanged(this.#hooks.reset(input));
  }

  /**
   * Pointers live here, so a pointer change is a new lease version whoever asked
   * for it; the route's own change window waits it out. The version moves after
   * the write, never before, so no grant names a version newer than its pointers.
   */
  async #pointersChanged<R>(change: Promise<R>): Promise<R> {
    try {
      return await change;
    } finally {
      this.#leases.advance();
    }
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

  cancelApprovals(keyIds: string[], actorId: string, note: string) {
    return this.#approvals.cancelFor(keyIds, actorId, note);
  }

  reusableOAuthFlow(serviceId: string, subject: GrantSubject) {
    return this.#grants.reusableFlow(serviceId, subject);
  }

  createOAuthFlow(flow: NewFlow) {
    return this.#grants.createFlow(flow);
  }

  startOAuthFlow(flowId: string, browserHash: string, signedInUser: string | null, confirmed: boolean) {
    return this.#grants.startFlow(flowId, browserHash, signedInUser, confirmed);
  }

  dropOAuthFlows(filter: { initiators: string[]; subjects: string[] }) {
    return this.#grants.dropFlows(filter);
  }

  consumeOAuthFlow(state: string, browserHash: string | null) {
    return this.#grants.consumeFlow(state, browserHash);
  }

  saveUpstreamGrant(input: Parameters<UpstreamGrantStore["saveGrant"]>[0]) {
    return this.#grants.saveGrant(input);
  }

  listUpstreamGrants(serviceId?: string) {
    return this.#grants.listGrants(serviceId);
  }

  takeUpstreamGrants(filter: { serviceId: string; grantId?: string }) {
    return this.#grants.takeGrants(filter);
  }

  upstreamAccessToken(request: TokenRequest) {
    return this.#grants.accessToken(request);
  }
}
