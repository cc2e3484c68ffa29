// Customer lookups go through, but the phone number never reaches the agent.
export default defineToolAdapter({
  apiVersion: "rayrun.hooks/v1",
  before({ arguments: args }) {
    if (!args.email.includes("@")) return { action: "reject", reason: "invalid_email", message: "Pass a full email address" };
    return { action: "continue", arguments: args };
  },
  after({ result }) {
    return { action: "return", result: { ...result, phone: "redacted" } };
  },
});
