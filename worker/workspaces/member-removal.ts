import type { z } from "@hono/zod-openapi";
import type { RemovedMemberSchema } from "../../schema/api/workspaces.ts";
import { revokeKeysCreatedBy } from "../auth/keys.store.ts";
import { deleteMembership, findMember, startMemberRemoval } from "../auth/users.store.ts";
import { ApiError } from "../http/errors.ts";
import { revokeOAuthGrantsApprovedBy } from "../oauth/grants.routes.ts";
import { revokeSubjectGrants } from "../upstream-auth/lifecycle.ts";
import { workspaceClient } from "./workspace.client.ts";

/** Refuses a change that would leave the workspace without an admin member (409 `last_admin`). */
export const lastAdmin = (email: string, userId: string, change: "removed" | "demoted") =>
  new ApiError("last_admin", {
    message: `${email} is the workspace's last admin and cannot be ${change}: make another member admin first`,
    details: { userId },
  });

/** What a removal took with it, as the API answers it (`effectiveAt` is added once it is in force). */
export type RemovedMember = Omit<z.infer<typeof RemovedMemberSchema>, "effectiveAt">;

/**
 * Removes a member from a workspace, and with them every credential that acts with their standing there: the keys
 * they created (which call with the member's upstream grants), their upstream grants, the upstream authorization
 * links they made, and the OAuth grants they consented to; the approvals their keys and those apps wait for are denied. Their console session loses the workspace at once (its
 * role is read on every request). Null when the user is no member. Runs inside the route's change window, so the
 * revocations are in force everywhere once the route's `changeInForce` has answered. The workspace's last admin
 * member is refused (`last_admin`) before anything is revoked; the check and the start of the removal are one write.
 */
export async function removeMember(env: Env, workspaceId: string, userId: string, removedBy: string): Promise<RemovedMember | null> {
  const member = await findMember(env.DB, workspaceId, userId);
  if (!member) return null;
  if (!(await startMemberRemoval(env.DB, workspaceId, userId))) {
    if (!(await findMember(env.DB, workspaceId, userId))) return null;
    throw lastAdmin(member.email, userId, "removed");
  }
  const keys = await revokeKeysCreatedBy(env.DB, workspaceId, userId);
  const oauthClients = await revokeOAuthGrantsApprovedBy(env, workspaceId, member.email);
  // Calls waiting for approval that the member's keys or apps asked for: none is approved and run for someone gone.
  const cancelledApprovals = await workspaceClient(env, workspaceId).cancelApprovals(
    [...keys.made, ...oauthClients.map((clientId) => `oauth:${clientId}`)],
    removedBy,
    `Denied when ${member.email} was removed from the workspace`,
  );
  // A key made with one of the member's keys has grants of its own (`key:<id>`); the member's keys use the member's.
  // Every key of the tree, revoked now or by a removal that failed part-way: a retry leaves nothing of theirs.
  const subjects = [`user:${userId}`, ...keys.made.map((keyId) => `key:${keyId}`)];
  // Before the grants go: an authorization link the member or their keys made could otherwise still finish.
  await workspaceClient(env, workspaceId).dropOAuthFlows({ initiators: [userId, ...keys.made], subjects });
  const upstreamGrants = await revokeSubjectGrants(env, workspaceId, subjects, `Grant revoked: ${member.email} left the workspace`);
  // The membership ends last: a removal that failed part-way is still one to retry, not a 404 with credentials left.
  await deleteMembership(env.DB, workspaceId, userId);
  // A key the member made while this ran, with the standing they still had.
  const late = await revokeKeysCreatedBy(env.DB, workspaceId, userId);
  return {
    ...member,
    revokedKeys: [...keys.revoked, ...late.revoked].sort(),
    upstreamGrants,
    oauthGrants: oauthClients.length,
    cancelledApprovals,
  };
}
