import { env } from "cloudflare:test";
import { describe, it } from "vitest";
import { hookGateway } from "./lifecycle.fixtures.ts";

describe("a tool's reset events", () => {
  // Resets are not rate limited and each one keeps its event for good, so a hooks:write key resetting a tool in a
  // loop grew the list without bound, and GET /resets answered every row of it in one response.
  it("list the latest 100, newest first", async ({ expect }) => {
    const g = await hookGateway();
    const older = Array.from({ length: 150 }, (_, n) =>
      env.DB.prepare(
        `INSERT INTO hook_reset_events (id, workspace_id, tool_uid, actor_id, actor_kind, channel, versions_removed, revisions_removed,
           bundles_removed, created_at) VALUES (?, ?, ?, 'key_x', 'key', 'api', 0, 0, 0, ?)`,
      ).bind(`hre_old${n}`, g.ws, g.toolUid, new Date(Date.UTC(2026, 0, 1, 0, 0, n)).toISOString()),
    );
    await env.DB.batch(older);
    const reset = await g.call(g.writer, g.base(), { method: "DELETE" });
    expect(reset.status).toBe(200);

    const listed = await g.call(g.writer, `${g.base()}/resets`);
    expect(listed.status).toBe(200);
    expect(listed.body.resets).toHaveLength(100);
    expect(listed.body.resets[0]).toEqual(reset.body.reset);
    expect(listed.body.resets[1].resetId).toBe("hre_old149");
  });
});
