export { WorkspaceDO } from "./workspaces/workspace.do.ts";

export default {
  async fetch(): Promise<Response> {
    return new Response("rayrun");
  },
} satisfies ExportedHandler<Env>;
