import type { HookStage } from "../../../schema/hooks/contract.ts";
import type { HookActor } from "./lifecycle.types.ts";

export interface TestRunRecord {
  id: string;
  workspaceId: string;
  toolUid: string;
  contentHash: string;
  definitionHash: string;
  stage: HookStage;
  outcome: string;
  passed: boolean;
  errorCode: string | null;
  actor: HookActor;
  createdAt: string;
}

/**
 * Records a run of the content of `testedVersionId`, only if that version still
 * exists. A reset removes a tool's versions and test runs in one D1 batch, so
 * this one statement either lands before the reset (which then removes it) or
 * sees the version gone and writes nothing: a test that was running while the
 * hook was reset never leaves a record behind. Returns whether it was recorded.
 */
export async function insertTestRun(db: D1Database, run: TestRunRecord, testedVersionId: string): Promise<boolean> {
  const result = await db
    .prepare(
      `INSERT INTO hook_test_runs (id, workspace_id, tool_uid, content_hash, definition_hash, stage, outcome, passed, error_code,
         actor_id, channel, created_at)
       SELECT ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?
       WHERE EXISTS (SELECT 1 FROM hook_versions WHERE id = ? AND workspace_id = ? AND tool_uid = ?)`,
    )
    .bind(
      run.id,
      run.workspaceId,
      run.toolUid,
      run.contentHash,
      run.definitionHash,
      run.stage,
      run.outcome,
      run.passed ? 1 : 0,
      run.errorCode,
      run.actor.id,
      run.actor.channel,
      run.createdAt,
      testedVersionId,
      run.workspaceId,
      run.toolUid,
    )
    .run();
  return result.meta.changes === 1;
}

/**
 * The stages among `stages` whose latest recorded test for exactly this
 * content, against this upstream definition, did not pass (or never ran).
 * A later failing run withdraws an earlier pass.
 */
export async function untestedStages(
  db: D1Database,
  workspaceId: string,
  toolUid: string,
  contentHash: string,
  definitionHash: string,
  stages: readonly HookStage[],
): Promise<HookStage[]> {
  const { results } = await db
    .prepare(
      `SELECT stage, passed FROM hook_test_runs
       WHERE workspace_id = ? AND tool_uid = ? AND content_hash = ? AND definition_hash = ? ORDER BY seq DESC`,
    )
    .bind(workspaceId, toolUid, contentHash, definitionHash)
    .all<{ stage: HookStage; passed: number }>();
  const latest = new Map<HookStage, boolean>();
  for (const row of results) if (!latest.has(row.stage)) latest.set(row.stage, row.passed === 1);
  return stages.filter((stage) => latest.get(stage) !== true);
}
