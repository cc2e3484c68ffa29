import { createApp } from "./app.ts";
import { consumeCallLogs } from "./logs/call-log.consumer.ts";
import { applyLogRetention } from "./logs/logs.store.ts";
import { forgetExpiredTasks } from "./mcp/mcp.tasks.ts";
import { forgetRevokedGrants } from "./oauth/revoked-grants.ts";

export { CallRelayDO } from "./mcp/call-relay.do.ts";
export { OAuthRegistryDO } from "./oauth/registry.do.ts";
export { ActorQuotaDO } from "./quotas/actor-quota.do.ts";
export { WorkspaceDO } from "./workspaces/workspace.do.ts";

const app = createApp();

export default {
  fetch: app.fetch,
  /** The call-log queue (wrangler.toml): batches of call rows into D1, and OpenTelemetry when configured. */
  async queue(batch, env) {
    await consumeCallLogs(batch, env);
  },
  /**
   * Hourly (wrangler.toml): clears captured log details and old rows and rollups past their retention, expired
   * tasks, and revoked OAuth grants whose tokens can no longer be valid.
   */
  async scheduled(_controller, env, ctx) {
    ctx.waitUntil(applyLogRetention(env.DB));
    ctx.waitUntil(forgetExpiredTasks(env.DB));
    ctx.waitUntil(forgetRevokedGrants(env.DB));
  },
} satisfies ExportedHandler<Env>;
