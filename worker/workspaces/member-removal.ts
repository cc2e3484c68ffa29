import type { z } from "@hono/zod-openapi";
import type { RemovedMemberSchema } from "../../schema/api/workspaces.ts";
import { revokeKeysCreatedBy } from "../auth/keys.store.ts";
import { deleteMembership, findMember, startMemberRemoval } from "../auth/users.store.ts";
import { ApiError } from "../http/errors.ts";
import { revokeOAuthGrantsApprovedBy } from "../oauth/grants.routes.ts";
import { SHARED_SUBJECT } from "../upstream-auth/grants.do.ts";
import { revokeGrant, revokeSubjectGrants } from "../upstream-auth/lifecycle.ts";
import { workspaceClient } from "./workspace.client.ts";

/** Refuses a change that would leave the workspace without an admin member (409 `last_admin`). */
export const lastAdmin = (email: string, userId: string, change: "removed" | "demoted") =>
  new ApiError("last_admin", {
    message: `${email} is the workspace's last admin and cannot be ${change}: make another member admin first`,
    details: { userId },
  });

/**
 * Refuses revoking a key when the workspace would be left with no admin member and no other admin key (409
 * `last_admin`): nobody could administer it again.
 */
export const lastAdminKey = (keyId: string) =>
  new ApiError("last_admin", {
    message: `${keyId} (or a key made with it) is the workspace's last admin key and the workspace has no admin member: make another admin key, or add an admin member, first`,
    details: { keyId },
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
export async function removeMember(
  env: Env,
  workspaceId: string,
  userId: string,
  removedBy: string,
  options: { revokeSharedGrants: boolean } = { revokeSharedGrants: false },
): Promise<RemovedMember | null> {
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
  const sharedGrantsAuthorized = await sharedGrantsOf(env, workspaceId, [userId, ...keys.made], {
    revoke: options.revokeSharedGrants,
    reason: `Grant revoked: ${member.email}, who authorized it, left the workspace`,
  });
  // The membership ends last: a removal that failed part-way is still one to retry, not a 404 with credentials left.
  // No key escaped the revocation above: a key is written only while its maker is an unrevoked key or a member whose
  // removal has not started (`createApiKey`), and the tree was revoked in one statement after the removal started.
  await deleteMembership(env.DB, workspaceId, userId);
  return {
    ...member,
    revokedKeys: keys.revoked,
    upstreamGrants,
    oauthGrants: oauthClients.length,
    cancelledApprovals,
    sharedGrantsAuthorized,
  };
}

/**
 * The workspace's shared upstream grants (`workspace`: every caller of the service uses them) that the member
 * authorized, or a key of theirs did (`authorizedBy`: who made the authorization link). Such a grant acts as an
 * upstream account the member signed in with (or whoever opened their key's link), not as the member in Rayrun, so by
 * default it stays: revoking it would stop the service for everyone until an admin authorizes it again. With
 * `revoke`, each is revoked at its authorization server and deleted, and a service it indexed goes back to pending.
 */
async function sharedGrantsOf(
  env: Env,
  workspaceId: string,
  authorizers: string[],
  options: { revoke: boolean; reason: string },
): Promise<RemovedMember["sharedGrantsAuthorized"]> {
  const grants = (await workspaceClient(env, workspaceId).listUpstreamGrants()).filter(
    (grant) => grant.subject === SHARED_SUBJECT && authorizers.includes(grant.authorizedBy),
  );
  if (grants.length === 0) return [];
  const { results } = await env.DB.prepare(
    "SELECT id, slug FROM services WHERE workspace_id = ? AND id IN (SELECT value FROM json_each(?))",
  )
    .bind(workspaceId, JSON.stringify(grants.map((grant) => grant.serviceId)))
    .all<{ id: string; slug: string }>();
  const slugs = new Map(results.map((row) => [row.id, row.slug]));
  const answered: RemovedMember["sharedGrantsAuthorized"] = [];
  for (const grant of grants) {
    if (options.revoke) await revokeGrant(env, workspaceId, grant, options.reason);
    answered.push({
      grantId: grant.id,
      serviceId: grant.serviceId,
      service: slugs.get(grant.serviceId) ?? null,
      authorizedBy: grant.authorizedBy,
      revoked: options.revoke,
    });
  }
  return answered.sort((a, b) => a.serviceId.localeCompare(b.serviceId));
}
