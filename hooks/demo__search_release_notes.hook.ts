// Normalises the agent's query and keeps the first few release notes (config `limit`).
export default defineToolAdapter({
  apiVersion: "rayrun.hooks/v1",
  before({ arguments: args, context }) {
    const query = args.query.trim().toLowerCase();
    context.log.info("search", { query });
    return { action: "continue", arguments: { query } };
  },
  after({ result, context }) {
    const limit = Number(context.config.limit ?? 3);
    return { action: "return", result: { items: result.items.slice(0, limit) } };
  },
});
