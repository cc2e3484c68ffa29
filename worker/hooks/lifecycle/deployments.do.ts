import type { HookStage } from "../../../schema/hooks/contract.ts";
import type { PublicContract } from "../compiler/index.ts";
import type { DeploymentSlot, JsonObject } from "./lifecycle.types.ts";

/**
 * What the call path needs to run one deployed revision, without another
 * lookup: the bundle's R2 key, the contract fixed at compile time, the config
 * deployed with it, and the upstream definition hash it was compiled against
 * (the call path fails closed if the tool's current hash differs).
 */
export interface DeploymentPointer {
  revisionId: string;
  versionId: string;
  bundleKey: string;
  bundleBytes: number;
  stages: HookStage[];
  contract: PublicContract | null;
  config: JsonObject;
  definitionHash: string;
  deployedBy: string;
  deployedAt: string;
}

export interface ToolDeployments {
  active?: DeploymentPointer;
  shadow?: DeploymentPointer;
}

/**
 * One tool's pointers with its uid. Lists are arrays of these rather than a
 * record keyed by uid, whose RPC type is too deep for TypeScript to check.
 */
export interface ToolPointers extends ToolDeployments {
  toolUid: string;
}

interface PointerRow {
  tool_uid: string;
  slot: DeploymentSlot;
  revision_id: string;
  version_id: string;
  bundle_key: string;
  bundle_bytes: number;
  stages: string;
  contract: string | null;
  config: string;
  definition_hash: string;
  deployed_by: string;
  deployed_at: string;
  [key: string]: SqlStorageValue;
}

const toPointer = (row: PointerRow): DeploymentPointer => ({
  revisionId: row.revision_id,
  versionId: row.version_id,
  bundleKey: row.bundle_key,
  bundleBytes: row.bundle_bytes,
  stages: JSON.parse(row.stages) as HookStage[],
  contract: row.contract ? (JSON.parse(row.contract) as PublicContract) : null,
  config: JSON.parse(row.config) as JsonObject,
  definitionHash: row.definition_hash,
  deployedBy: row.deployed_by,
  deployedAt: row.deployed_at,
});

/** The active and shadow pointers of every tool in the workspace. */
export class DeploymentTable {
  readonly #sql: SqlStorage;

  constructor(sql: SqlStorage) {
    this.#sql = sql;
  }

  /** One indexed read of at most two rows: the call path does this once per call. */
  forTool(toolUid: string): ToolDeployments {
    const deployments: ToolDeployments = {};
    for (const row of this.#sql.exec<PointerRow>("SELECT * FROM hook_deployments WHERE tool_uid = ?", toolUid)) {
      deployments[row.slot] = toPointer(row);
    }
    return deployments;
  }

  /** Every tool with a pointer, for listing public contracts without one read per tool. */
  all(): ToolPointers[] {
    const byTool = new Map<string, ToolPointers>();
    for (const row of this.#sql.exec<PointerRow>("SELECT * FROM hook_deployments")) {
      let tool = byTool.get(row.tool_uid);
      if (!tool) byTool.set(row.tool_uid, (tool = { toolUid: row.tool_uid }));
      tool[row.slot] = toPointer(row);
    }
    return [...byTool.values()];
  }

  /** Bundle bytes under every pointer of the workspace. */
  deployedBytes(): number {
    return this.#sql.exec<{ n: number }>("SELECT COALESCE(SUM(bundle_bytes), 0) AS n FROM hook_deployments").one().n;
  }

  /** Bundle bytes under every pointer except the one about to be replaced (a revision under both pointers counts twice). */
  deployedBytesExcept(toolUid: string, slot: DeploymentSlot): number {
    return this.#sql
      .exec<{ n: number }>(
        "SELECT COALESCE(SUM(bundle_bytes), 0) AS n FROM hook_deployments WHERE NOT (tool_uid = ? AND slot = ?)",
        toolUid,
        slot,
      )
      .one().n;
  }

  set(toolUid: string, slot: DeploymentSlot, pointer: DeploymentPointer): void {
    this.#sql.exec(
      `INSERT OR REPLACE INTO hook_deployments (tool_uid, slot, revision_id, version_id, bundle_key, bundle_bytes, stages,
         contract, config, definition_hash, deployed_by, deployed_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      toolUid,
      slot,
      pointer.revisionId,
      pointer.versionId,
      pointer.bundleKey,
      pointer.bundleBytes,
      JSON.stringify(pointer.stages),
      pointer.contract ? JSON.stringify(pointer.contract) : null,
      JSON.stringify(pointer.config),
      pointer.definitionHash,
      pointer.deployedBy,
      pointer.deployedAt,
    );
  }

  /** Puts back what a slot held before (or empties it), when the change could not be recorded. */
  restore(toolUid: string, slot: DeploymentSlot, previous: DeploymentPointer | undefined): void {
    if (previous) this.set(toolUid, slot, previous);
    else this.remove(toolUid, slot);
  }

  remove(toolUid: string, slot: DeploymentSlot): void {
    this.#sql.exec("DELETE FROM hook_deployments WHERE tool_uid = ? AND slot = ?", toolUid, slot);
  }

  removeTool(toolUid: string): number {
    return this.#sql.exec("DELETE FROM hook_deployments WHERE tool_uid = ?", toolUid).rowsWritten;
  }
}
