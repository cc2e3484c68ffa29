import type { HookStage } from "../../../schema/hooks/contract.ts";
import { newId, nowIso } from "../../lib/ids.ts";
import type { PublicContract } from "../compiler/index.ts";
import { bundleKey, deleteBundles, listToolBundles, putBundle } from "./bundles.r2.ts";
import { etagMatches, etagOf } from "./content.ts";
import { DeploymentTable, type DeploymentPointer, type ToolDeployments, type ToolPointers } from "./deployments.do.ts";
import { DraftTable } from "./drafts.do.ts";
import {
  historyCounts,
  insertDeploymentEvent,
  resetToolHistory,
  type DeploymentAction,
  type DeploymentEvent,
  type ResetEvent,
} from "./events.store.ts";
import { failure, type DeploymentSlot, type HookActor, type JsonObject, type Outcome } from "./lifecycle.types.ts";
import { HistoryAllowanceTable, QUOTAS, rateLimited, RateQuotaTable } from "./quotas.do.ts";
import { findRevision, insertRevision, toRevisionRecord, type RevisionRecord } from "./revisions.store.ts";
import { ToolLocks } from "./tool-locks.ts";
import { findVersion, insertVersion, type NewVersion } from "./versions.store.ts";

export interface DraftView {
  source: string;
  config: JsonObject;
  etag: string;
  versionId: string | null;
}

/** A version to write (`source` already formatted and size-checked by the route), guarded by `ifMatch`. */
export interface SaveDraftInput extends Omit<NewVersion, "id" | "createdAt"> {
  ifMatch: string;
}

/** A save as the route received it, before formatting: `contentHash` is of the source as sent. */
export interface DraftSavePrecheck {
  workspaceId: string;
  toolUid: string;
  contentHash: string;
  ifMatch: string;
}

export interface SaveDraftResult {
  etag: string;
  versionId: string;
  created: boolean;
}

export interface CommitRevisionInput {
  workspaceId: string;
  toolUid: string;
  versionId: string;
  contentHash: string;
  config: JsonObject;
  bundle: string;
  compiledBytes: number;
  sourceHash: string;
  stages: HookStage[];
  contract: PublicContract | null;
  replaces: RevisionRecord["replaces"];
  definitionHash: string;
  actor: HookActor;
}

export interface DeployInput {
  workspaceId: string;
  toolUid: string;
  slot: DeploymentSlot;
  revisionId: string;
  /** The tool's upstream definition hash now: only revisions compiled against it may run. */
  currentDefinitionHash: string;
  actor: HookActor;
}

/** The workspace's share of the hook usage; compile attempts are counted per actor (ActorQuotaDO). */
export interface WorkspaceHookUsage {
  draftSaves: { used: number; limit: number };
  historyBytes: { used: number; limit: number };
  deployedBytes: { used: number; limit: number };
}

const staleEtag = (etag: string) =>
  failure("precondition_failed", "The draft changed since you read it; reload it and reapply your change", { etag }, { etag });

/**
 * The hook lifecycle's single-writer half, living in the workspace Durable
 * Object: drafts and etags, quotas and allowances, deployment pointers. Every
 * write to one tool's hook runs under that tool's lock, and every
 * check-and-charge of a workspace-wide limit is synchronous SQL, so neither
 * concurrent requests nor other tools can overrun a limit.
 */
export class HookLifecycle {
  readonly #env: Env;
  readonly #drafts: DraftTable;
  readonly #quotas: RateQuotaTable;
  readonly #history: HistoryAllowanceTable;
  readonly #deployments: DeploymentTable;
  readonly #locks = new ToolLocks();

  constructor(sql: SqlStorage, env: Env) {
    this.#env = env;
    this.#drafts = new DraftTable(sql);
    this.#quotas = new RateQuotaTable(sql);
    this.#history = new HistoryAllowanceTable(sql);
    this.#deployments = new DeploymentTable(sql);
  }

  draft(toolUid: string): DraftView {
    const draft = this.#drafts.get(toolUid);
    if (!draft) return { source: "", config: {}, etag: etagOf(null), versionId: null };
    return { source: draft.source, config: draft.config, etag: etagOf(draft.versionId), versionId: draft.versionId };
  }

  /**
   * A save's cheap refusals, answered before the route formats the source
   * (Prettier is synchronous): 412 for a stale etag, and 429 when the save
   * quota is used up, unless the content is exactly the draft's (identical
   * saves are free). Nothing is charged; `saveDraft` checks both again under
   * the tool's lock.
   */
  precheckDraftSave(input: DraftSavePrecheck): Outcome<object> {
    const current = this.#drafts.get(input.toolUid);
    const etag = etagOf(current?.versionId ?? null);
    if (!etagMatches(input.ifMatch, etag)) return staleEtag(etag);
    if (current?.contentHash === input.contentHash) return { ok: true };
    const refusal = this.#quotas.refusal("draft_saves", input.workspaceId, QUOTAS.draftSavesPerHour, Date.now());
    if (refusal) return rateLimited("draft_saves", refusal, "Too many draft saves in this workspace");
    return { ok: true };
  }

  saveDraft(input: SaveDraftInput): Promise<Outcome<SaveDraftResult>> {
    return this.#locks.run(input.toolUid, async () => {
      const current = this.#drafts.get(input.toolUid);
      const etag = etagOf(current?.versionId ?? null);
      if (!etagMatches(input.ifMatch, etag)) return staleEtag(etag);
      if (current && current.contentHash === input.contentHash) {
        return { ok: true, etag, versionId: current.versionId, created: false };
      }

      const now = Date.now();
      const charge = this.#quotas.charge("draft_saves", input.workspaceId, QUOTAS.draftSavesPerHour, now);
      if (!charge.ok) return rateLimited("draft_saves", charge, "Too many draft saves in this workspace");
      const history = this.#history.reserveHistory(input.toolUid, input.bytes, QUOTAS.historyBytes);
      if (!history.ok) {
        this.#quotas.refund(charge.eventId);
        return failure(
          "history_full",
          "The workspace's draft history is full; export the versions you need, then reset hooks to reclaim it",
          {
            usedBytes: history.used,
            limitBytes: history.limit,
            versionBytes: input.bytes,
          },
        );
      }

      const versionId = newId("hv");
      const createdAt = new Date(now).toISOString();
      try {
        await insertVersion(this.#env.DB, {
          id: versionId,
          workspaceId: input.workspaceId,
          toolUid: input.toolUid,
          source: input.source,
          config: input.config,
          contentHash: input.contentHash,
          bytes: input.bytes,
          note: input.note,
          restoredFrom: input.restoredFrom,
          actor: input.actor,
          createdAt,
        });
      } catch (error) {
        this.#quotas.refund(charge.eventId);
        this.#history.releaseHistory(input.toolUid, input.bytes);
        throw error;
      }
      this.#drafts.put({
        toolUid: input.toolUid,
        source: input.source,
        config: input.config,
        contentHash: input.contentHash,
        versionId,
        updatedAt: createdAt,
      });
      return { ok: true, etag: etagOf(versionId), versionId, created: true };
    });
  }

  /** Stores a compiled, tested version as a revision: bundle to R2, then metadata to D1. */
  commitRevision(input: CommitRevisionInput): Promise<Outcome<{ revision: RevisionRecord }>> {
    return this.#locks.run(input.toolUid, async () => {
      // A reset may have run since the route read the version.
      if (!(await findVersion(this.#env.DB, input.workspaceId, input.toolUid, input.versionId))) {
        return failure("not_found", "Version not found");
      }
      const revisionId = newId("rev");
      const unnumbered: Omit<RevisionRecord, "number"> = {
        revisionId,
        toolUid: input.toolUid,
        versionId: input.versionId,
        contentHash: input.contentHash,
        sourceHash: input.sourceHash,
        config: input.config,
        bundleKey: bundleKey(input.workspaceId, input.toolUid, revisionId),
        compiledBytes: input.compiledBytes,
        stages: input.stages,
        contract: input.contract,
        replaces: input.replaces,
        definitionHash: input.definitionHash,
        createdBy: input.actor.id,
        channel: input.actor.channel,
        createdAt: nowIso(),
      };
      await putBundle(this.#env.BUNDLES, unnumbered.bundleKey, input.bundle, input.sourceHash);
      try {
        const number = await insertRevision(this.#env.DB, input.workspaceId, unnumbered);
        return { ok: true, revision: { ...unnumbered, number } };
      } catch (error) {
        await deleteBundles(this.#env.BUNDLES, [unnumbered.bundleKey]);
        throw error;
      }
    });
  }

  /** Points `slot` at a revision of this tool compiled against the tool's current upstream definition. */
  deploy(input: DeployInput): Promise<Outcome<{ deployment: DeploymentPointer; event: DeploymentEvent }>> {
    return this.#locks.run(input.toolUid, async () => {
      const stored = await findRevision(this.#env.DB, input.workspaceId, input.toolUid, input.revisionId);
      if (!stored) return failure("not_found", "Revision not found");
      const revision = toRevisionRecord(stored);
      if (revision.definitionHash !== input.currentDefinitionHash) {
        return failure(
          "incompatible_revision",
          "The revision was compiled against a different upstream definition than the tool's current one",
          {
            revisionDefinitionHash: revision.definitionHash,
            currentDefinitionHash: input.currentDefinitionHash,
          },
        );
      }
      const before = this.#deployments.forTool(input.toolUid);
      const previous = before[input.slot];
      const deployment: DeploymentPointer = {
        revisionId: revision.revisionId,
        versionId: revision.versionId,
        bundleKey: revision.bundleKey,
        bundleBytes: revision.compiledBytes,
        stages: revision.stages,
        contract: revision.contract,
        config: revision.config,
        definitionHash: revision.definitionHash,
        deployedBy: input.actor.id,
        deployedAt: nowIso(),
      };
      const action = await this.#classify(input, stored.seq, before);
      // Checked and charged in one synchronous run, after the last await: the lock is this tool's only, and a
      // deploy to another tool may write its pointer while this one waits on D1.
      const otherBytes = this.#deployments.deployedBytesExcept(input.toolUid, input.slot);
      if (otherBytes + revision.compiledBytes > QUOTAS.deployedBytes) {
        return failure("deployed_code_full", "Active and shadow code of this workspace would exceed its allowance", {
          usedBytes: otherBytes,
          limitBytes: QUOTAS.deployedBytes,
          revisionBytes: revision.compiledBytes,
        });
      }
      this.#deployments.set(input.toolUid, input.slot, deployment);
      const event = await this.#recordEvent(input, action, revision.revisionId, previous);
      return { ok: true, deployment, event };
    });
  }

  /** Empties a pointer; the tool then runs without that slot's hook. */
  undeploy(input: Omit<DeployInput, "revisionId" | "currentDefinitionHash">): Promise<Outcome<{ event: DeploymentEvent }>> {
    return this.#locks.run(input.toolUid, async () => {
      const previous = this.#deployments.forTool(input.toolUid)[input.slot];
      if (!previous) return failure("not_found", `Nothing is deployed to ${input.slot}`);
      this.#deployments.remove(input.toolUid, input.slot);
      const event = await this.#recordEvent(input, "remove", null, previous);
      return { ok: true, event };
    });
  }

  /**
   * Removes the tool's whole hook: D1 history (with the surviving reset event,
   * atomically), then the draft, pointers and history allowance here. Its R2
   * bundles are not removed here but named in the answer: the caller deletes
   * them once the change is in force everywhere (`deleteBundles`), since until
   * then another isolate's lease may still point a call at one of them. A reset
   * retried after an R2 failure finds and names whatever is left under the
   * tool's prefix.
   */
  reset(input: { workspaceId: string; toolUid: string; actor: HookActor }): Promise<Outcome<{ reset: ResetEvent; bundleKeys: string[] }>> {
    return this.#locks.run(input.toolUid, async () => {
      const counts = await historyCounts(this.#env.DB, input.workspaceId, input.toolUid);
      const bundleKeys = await listToolBundles(this.#env.BUNDLES, input.workspaceId, input.toolUid);
      const reset: ResetEvent = {
        resetId: newId("hre"),
        toolUid: input.toolUid,
        actorId: input.actor.id,
        actorKind: input.actor.kind,
        channel: input.actor.channel,
        versionsRemoved: counts.versions,
        revisionsRemoved: counts.revisions,
        bundlesRemoved: bundleKeys.length,
        createdAt: nowIso(),
      };
      await resetToolHistory(this.#env.DB, input.workspaceId, { ...reset, actor: input.actor });
      this.#deployments.removeTool(input.toolUid);
      this.#drafts.delete(input.toolUid);
      this.#history.clearHistory(input.toolUid);
      return { ok: true, reset, bundleKeys };
    });
  }

  deployments(toolUid: string): ToolDeployments {
    return this.#deployments.forTool(toolUid);
  }

  allDeployments(): ToolPointers[] {
    return this.#deployments.all();
  }

  usage(workspaceId: string): WorkspaceHookUsage {
    const now = Date.now();
    return {
      draftSaves: { used: this.#quotas.used("draft_saves", workspaceId, now), limit: QUOTAS.draftSavesPerHour },
      historyBytes: { used: this.#history.historyBytes(), limit: QUOTAS.historyBytes },
      deployedBytes: { used: this.#deployments.deployedBytes(), limit: QUOTAS.deployedBytes },
    };
  }

  /**
   * Names the pointer change for the event log: active moving to an older
   * revision than it held is a rollback; otherwise active taking shadow's
   * revision is a promotion.
   */
  async #classify(input: DeployInput, seq: number, before: ToolDeployments): Promise<DeploymentAction> {
    if (input.slot === "shadow") return "deploy";
    if (before.active) {
      const current = await findRevision(this.#env.DB, input.workspaceId, input.toolUid, before.active.revisionId);
      if (current && seq < current.seq) return "rollback";
    }
    return before.shadow?.revisionId === input.revisionId ? "promote" : "deploy";
  }

  /** Records a pointer change; if that fails the pointer is put back, so no change goes unattributed. */
  async #recordEvent(
    input: { workspaceId: string; toolUid: string; slot: DeploymentSlot; actor: HookActor },
    action: DeploymentAction,
    revisionId: string | null,
    previous: DeploymentPointer | undefined,
  ): Promise<DeploymentEvent> {
    const event: DeploymentEvent = {
      eventId: newId("hde"),
      toolUid: input.toolUid,
      slot: input.slot,
      action,
      revisionId,
      previousRevisionId: previous?.revisionId ?? null,
      actorId: input.actor.id,
      channel: input.actor.channel,
      createdAt: nowIso(),
    };
    try {
      await insertDeploymentEvent(this.#env.DB, input.workspaceId, event);
    } catch (error) {
      this.#deployments.restore(input.toolUid, input.slot, previous);
      throw error;
    }
    return event;
  }
}
