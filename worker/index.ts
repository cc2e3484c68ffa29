import { createApp } from "./app.ts";
import { applyLogRetention } from "./logs/logs.store.ts";

export { CallRelayDO } from "./mcp/call-relay.do.ts";
export { OAuthRegistryDO } from "./oauth/registry.do.ts";
export { ActorQuotaDO } from "./quotas/actor-quota.do.ts";
export { WorkspaceDO } from "./workspaces/workspace.do.ts";

const app = createApp();

export default {
  fetch: app.fetch,
  /** Hourly (wrangler.toml): clears captured hook-log details and old log rows past their retention. */
  async scheduled(_controller, env, ctx) {
    ctx.waitUntil(applyLogRetention(env.DB));
  },
} satisfies ExportedHandler<Env>;
