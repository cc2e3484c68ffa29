import { createApp } from "./app.ts";

export { WorkspaceDO } from "./workspaces/workspace.do.ts";

const app = createApp();

export default {
  fetch: app.fetch,
} satisfies ExportedHandler<Env>;
