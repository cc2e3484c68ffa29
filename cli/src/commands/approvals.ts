// `rayrun approvals …`: calls waiting for a human decision.
import type { Command } from "commander";
import type { Context } from "../context.ts";
import type { Printer } from "../output.ts";
import { table } from "../output.ts";

type Run = (action: (ctx: Context, out: Printer) => Promise<void>) => () => Promise<void>;
const STATUSES = ["pending", "approved", "denied", "used", "expired"] as const;

export function registerApprovals(program: Command, run: Run): void {
  const approvals = program.command("approvals").description("Calls a policy or hook sent for approval");
  approvals
    .command("list")
    .description("List approvals (pending by default)")
    .option("--status <status>", STATUSES.join(", "), "pending")
    .action((options: { status: (typeof STATUSES)[number] }) =>
      run(async (ctx, out) => {
        const { approvals } = await ctx.call(
          ctx.api.GET("/v1/workspaces/{ws}/approvals", {
            params: { path: { ws: ctx.workspace }, query: { status: options.status, limit: 200 } },
          }),
        );
        out.result(approvals, () =>
          table([
            ["ID", "TOOL", "REASON", "STATUS", "EXPIRES", "MESSAGE"],
            ...approvals.map((a) => [a.id, a.publicName, a.reason, a.status, a.expiresAt, a.message ?? ""]),
          ]),
        );
      })(),
    );
  for (const decision of ["approve", "deny"] as const) {
    approvals
      .command(`${decision} <id>`)
      .description(decision === "approve" ? "Approve one exact call; the agent's retry then runs once" : "Deny the call")
      .action((id: string) =>
        run(async (ctx, out) => {
          const decided = await ctx.call(
            ctx.api.POST(`/v1/workspaces/{ws}/approvals/{id}/${decision}`, { params: { path: { ws: ctx.workspace, id } } }),
          );
          out.result(decided, () => `${decided.id}: ${decided.status}`);
        })(),
      );
  }
}
