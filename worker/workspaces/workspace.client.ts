import type { Approval, ApprovalRequest, ApprovalStatus, ClaimResult } from "../approvals/approvals.do.ts";
import type { DeploymentEvent, ResetEvent } from "../hooks/lifecycle/events.store.ts";
import type {
  CommitRevisionInput,
  DeployInput,
  DraftSavePrecheck,
  DraftView,
  SaveDraftInput,
  SaveDraftResult,
  WorkspaceHookUsage,
} from "../hooks/lifecycle/lifecycle.do.ts";
import type { DeploymentPointer, ToolDeployments } from "../hooks/lifecycle/deployments.do.ts";
import type { ChangeInForce, LeaseGrant, LeaseStatus } from "../leases/lease.types.ts";
import type { HookActor, Outcome } from "../hooks/lifecycle/lifecycle.types.ts";
import type { RevisionRecord } from "../hooks/lifecycle/revisions.store.ts";
import type {
  ConsumedFlow,
  FlowRefusal,
  FlowToConfirm,
  GrantSubject,
  GrantSummary,
  NewFlow,
  TakenGrant,
  TokenAnswer,
  TokenRequest,
} from "../upstream-auth/grants.do.ts";
import type { GrantTokens } from "../upstream-auth/oauth.tokens.ts";

/**
 * RPC typing turns a result it cannot prove serialisable (for example one with
 * an `unknown` field) into `never`, which would satisfy any annotation. This
 * identity refuses `never` ("Expected 2 arguments"), so every method below
 * compiles only while the object returns plain data of the stated type; the
 * domain types use JSON value types (schema/hooks/contract.ts), not `unknown`.
 */
function serialisable<R>(result: R, ..._refused: [R] extends [never] ? [rpcResultIsNotSerialisable: never] : []): R {
  return result;
}

/**
 * The one way Worker code reaches a workspace's Durable Object (WorkspaceDO),
 * addressed by workspace id. Each method resolves to the plain type it states.
 */
export function workspaceClient(env: Env, workspaceId: string) {
  const stub = env.WORKSPACE.getByName(workspaceId);
  return {
    /** A read lease on the call-affecting state (worker/leases/holder.ts is the one caller). */
    grantLease: (holder: string, heldToken: string | null): Promise<LeaseGrant> => serialisable(stub.grantLease(holder, heldToken)),
    beginChange: (): Promise<string> => serialisable(stub.beginChange()),
    endChange: (id: string, relinquishedBy: string | null): Promise<ChangeInForce> => serialisable(stub.endChange(id, relinquishedBy)),
    leaseStatus: (): Promise<LeaseStatus> => serialisable(stub.leaseStatus()),
    /** The tool's active and shadow pointers. */
    toolDeployments: (toolUid: string): Promise<ToolDeployments> => serialisable(stub.toolDeployments(toolUid)),

    hookDraft: (toolUid: string): Promise<DraftView> => serialisable(stub.hookDraft(toolUid)),
    precheckHookDraftSave: (input: DraftSavePrecheck): Promise<Outcome<object>> => serialisable(stub.precheckHookDraftSave(input)),
    saveHookDraft: (input: SaveDraftInput): Promise<Outcome<SaveDraftResult>> => serialisable(stub.saveHookDraft(input)),
    commitHookRevision: (input: CommitRevisionInput): Promise<Outcome<{ revision: RevisionRecord }>> =>
      serialisable(stub.commitHookRevision(input)),
    deployHook: (input: DeployInput): Promise<Outcome<{ deployment: DeploymentPointer; event: DeploymentEvent }>> =>
      serialisable(stub.deployHook(input)),
    undeployHook: (input: Omit<DeployInput, "revisionId" | "currentDefinitionHash">): Promise<Outcome<{ event: DeploymentEvent }>> =>
      serialisable(stub.undeployHook(input)),
    resetHook: (input: {
      workspaceId: string;
      toolUid: string;
      actor: HookActor;
    }): Promise<Outcome<{ reset: ResetEvent; bundleKeys: string[] }>> => serialisable(stub.resetHook(input)),
    /** Draft saves, history and deployed bytes of the workspace (compile attempts: actor-quota.client.ts). */
    hookUsage: (): Promise<WorkspaceHookUsage> => serialisable(stub.hookUsage(workspaceId)),

    /** Consumes the approval of this exact call if there is one, else returns the pending request (created if new). */
    claimOrRequestApproval: (request: ApprovalRequest): Promise<ClaimResult> => serialisable(stub.claimOrRequestApproval(request)),
    getApproval: (id: string): Promise<Approval | null> => serialisable(stub.getApproval(id)),
    listApprovals: (filter: {
      status?: ApprovalStatus;
      limit: number;
      before?: number;
    }): Promise<{ approvals: Approval[]; nextBefore: number | null }> => serialisable(stub.listApprovals(filter)),
    decideApproval: (
      id: string,
      decision: "approved" | "denied",
      actorId: string,
      note: string | null,
    ): Promise<{ ok: true; approval: Approval } | { ok: false; reason: "not_found" | "not_pending"; approval?: Approval }> =>
      serialisable(stub.decideApproval(id, decision, actorId, note)),
    /** Denies the pending approvals of these callers (key ids, `oauth:<client id>`) and expires their unused ones. */
    cancelApprovals: (keyIds: string[], actorId: string, note: string): Promise<string[]> =>
      serialisable(stub.cancelApprovals(keyIds, actorId, note)),

    /** Upstream OAuth (worker/upstream-auth/grants.do.ts): flows in progress and grants, tokens sealed. */
    reusableOAuthFlow: (serviceId: string, subject: GrantSubject): Promise<{ flowId: string; expiresAt: string } | null> =>
      serialisable(stub.reusableOAuthFlow(serviceId, subject)),
    createOAuthFlow: (flow: NewFlow): Promise<{ expiresAt: string }> => serialisable(stub.createOAuthFlow(flow)),
    startOAuthFlow: (
      flowId: string,
      browserHash: string,
      signedInUser: string | null,
      confirmed: boolean,
    ): Promise<{ ok: true; authorizeUrl: string } | { ok: true; confirm: FlowToConfirm } | { ok: false; reason: FlowRefusal }> =>
      serialisable(stub.startOAuthFlow(flowId, browserHash, signedInUser, confirmed)),
    dropOAuthFlows: (filter: { initiators: string[]; subjects: string[] }): Promise<number> => serialisable(stub.dropOAuthFlows(filter)),
    consumeOAuthFlow: (
      state: string,
      browserHash: string | null,
    ): Promise<{ ok: true; flow: ConsumedFlow } | { ok: false; reason: FlowRefusal }> =>
      serialisable(stub.consumeOAuthFlow(state, browserHash)),
    saveUpstreamGrant: (input: {
      flowId: string;
      serviceId: string;
      subject: GrantSubject;
      mode: "shared" | "per_user";
      tokens: GrantTokens;
      authorizedBy: string;
    }): Promise<{ saved: true; replacedTokens: string | null } | { saved: false }> => serialisable(stub.saveUpstreamGrant(input)),
    listUpstreamGrants: (serviceId?: string): Promise<GrantSummary[]> => serialisable(stub.listUpstreamGrants(serviceId)),
    takeUpstreamGrants: (filter: { serviceId: string; grantId?: string }): Promise<TakenGrant[]> =>
      serialisable(stub.takeUpstreamGrants(filter)),
    upstreamAccessToken: (request: TokenRequest): Promise<TokenAnswer> => serialisable(stub.upstreamAccessToken(request)),
  };
}

export type WorkspaceClient = ReturnType<typeof workspaceClient>;
