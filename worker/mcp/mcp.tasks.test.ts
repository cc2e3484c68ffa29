import { env } from "cloudflare:test";
import { describe, it } from "vitest";
import { forgetExpiredTasks } from "./mcp.tasks.ts";

describe("task rows", () => {
  it("are deleted by the hourly job once past their expiry, and kept until then", async ({ expect }) => {
    const insert = (id: string, expiresAt: string) =>
      env.DB.prepare(
        `INSERT INTO gateway_tasks (id, workspace_id, credential, service_id, public_name, upstream_task_id, upstream_session,
           arguments, upstream_arguments, revision_id, created_at, expires_at)
         VALUES (?, 'ws_tasks', 'key:k', 'svc_1', 'svc__tool', 'up-1', NULL, '{}', '{}', NULL, ?, ?)`,
      )
        .bind(id, new Date(0).toISOString(), expiresAt)
        .run();
    const now = Date.parse("2026-12-01T12:00:00Z");
    await insert("tsk_expired_one", "2026-12-01T11:59:59.000Z");
    await insert("tsk_still_open", "2026-12-01T12:00:01.000Z");
    expect(await forgetExpiredTasks(env.DB, now)).toBeGreaterThanOrEqual(1);
    const left = await env.DB.prepare("SELECT id FROM gateway_tasks WHERE workspace_id = 'ws_tasks'").all<{ id: string }>();
    expect(left.results.map((row) => row.id)).toEqual(["tsk_still_open"]);
  });
});
