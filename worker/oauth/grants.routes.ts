import { createRoute, z } from "@hono/zod-openapi";
import type { GrantSummary, OAuthHelpers } from "@cloudflare/workers-oauth-provider";
import { errorResponses, json, WorkspaceParams } from "../../schema/api/common.ts";
import { OAuthGrantParams, OAuthGrantSchema, RevokedOAuthGrantSchema } from "../../schema/api/oauth.ts";
import { guard } from "../auth/guard.ts";
import { createRouter } from "../http/app.ts";
import { ApiError, notFound } from "../http/errors.ts";
import { changeInForce } from "../leases/change-window.ts";
import { authorizationServer } from "./oauth.config.ts";
import { recordRevokedGrant } from "./revoked-grants.ts";

/**
 * Admins see and revoke the OAuth grants bound to their workspace. Revoking deletes the grant's tokens from KV,
 * which deployed may serve them from cache for 60 s or more, so it also lists the grant as revoked in the
 * workspace's lease-covered state: the answer comes once no isolate can still accept its tokens.
 */
export const oauthGrantRoutes = createRouter();

function oauthApi(env: Env): OAuthHelpers {
  const server = authorizationServer(env);
  if (!server) throw new ApiError("not_found", { message: "OAuth is not configured: set PUBLIC_URL" });
  return server.getOAuthApi(env);
}

/** Every grant whose subject is the workspace (the consent page makes it so). */
async function workspaceGrants(oauth: OAuthHelpers, workspaceId: string): Promise<GrantSummary[]> {
  const grants: GrantSummary[] = [];
  let cursor: string | undefined;
  do {
    const page = await oauth.listUserGrants(workspaceId, { cursor });
    grants.push(...page.items);
    cursor = page.cursor;
  } while (cursor);
  return grants;
}

const isoSeconds = (seconds: number | undefined) => (seconds === undefined ? null : new Date(seconds * 1000).toISOString());
const stringOrNull = (value: unknown) => (typeof value === "string" ? value : null);

async function toApi(oauth: OAuthHelpers, grant: GrantSummary): Promise<z.infer<typeof OAuthGrantSchema>> {
  const client = await oauth.lookupClient(grant.clientId);
  const metadata: unknown = grant.metadata;
  const fields = typeof metadata === "object" && metadata !== null ? (metadata as Record<string, unknown>) : {};
  return {
    id: grant.id,
    clientId: grant.clientId,
    clientName: client?.clientName ?? null,
    profileId: stringOrNull(fields.profileId),
    scopes: grant.scope,
    approvedBy: stringOrNull(fields.approvedBy),
    createdAt: isoSeconds(grant.createdAt) ?? "",
    expiresAt: isoSeconds(grant.expiresAt),
  };
}

/**
 * Revokes one grant: listed as revoked in the workspace's lease-covered state first (from then on every isolate
 * reading under a new lease refuses it, whatever KV serves), then deleted with its tokens.
 */
async function revokeOAuthGrant(env: Env, oauth: OAuthHelpers, workspaceId: string, grant: GrantSummary): Promise<void> {
  await recordRevokedGrant(env.DB, workspaceId, { id: grant.id, expiresAt: grant.expiresAt === undefined ? null : grant.expiresAt * 1000 });
  await oauth.revokeGrant(grant.id, workspaceId);
}

/**
 * Revokes the one grant a consent wrote (its `consentId`, kept in the grant's metadata too), when the admin who gave it
 * turned out, once it was written, no longer to stand in the workspace. Answers whether it found it.
 */
export async function withdrawConsent(env: Env, workspaceId: string, consentId: string): Promise<boolean> {
  const oauth = oauthApi(env);
  const grant = (await workspaceGrants(oauth, workspaceId)).find(
    (candidate) => (candidate.metadata as { consentId?: unknown } | undefined)?.consentId === consentId,
  );
  if (grant) await revokeOAuthGrant(env, oauth, workspaceId, grant);
  return grant !== undefined;
}

/**
 * Revokes the workspace's OAuth grants a member consented to (`approvedBy`, their email): the app acts with the
 * member's standing, which ends with the membership. Answers the client id of each grant revoked; none where OAuth is
 * not configured.
 */
export async function revokeOAuthGrantsApprovedBy(env: Env, workspaceId: string, email: string): Promise<string[]> {
  if (!authorizationServer(env)) return [];
  const oauth = oauthApi(env);
  const approved = (await workspaceGrants(oauth, workspaceId)).filter(
    (grant) => (grant.metadata as { approvedBy?: unknown } | undefined)?.approvedBy === email,
  );
  for (const grant of approved) await revokeOAuthGrant(env, oauth, workspaceId, grant);
  return approved.map((grant) => grant.clientId);
}

oauthGrantRoutes.openapi(
  createRoute({
    method: "get",
    path: "/v1/workspaces/{ws}/oauth/grants",
    tags: ["oauth"],
    summary: "List the OAuth grants that let apps call tools in this workspace",
    middleware: guard("admin"),
    request: { params: WorkspaceParams },
    responses: { 200: json(z.object({ grants: z.array(OAuthGrantSchema) }), "Grants"), ...errorResponses(404) },
  }),
  async (c) => {
    const oauth = oauthApi(c.env);
    const grants = await workspaceGrants(oauth, c.req.valid("param").ws);
    return c.json({ grants: await Promise.all(grants.map((grant) => toApi(oauth, grant))) }, 200);
  },
);

oauthGrantRoutes.openapi(
  createRoute({
    method: "delete",
    path: "/v1/workspaces/{ws}/oauth/grants/{grantId}",
    tags: ["oauth"],
    summary: "Revoke an OAuth grant and every token issued under it",
    description: "Answers once no request anywhere can still use the grant's tokens (`effectiveAt`, also `rayrun-effective-at`).",
    middleware: guard("admin"),
    request: { params: WorkspaceParams.extend(OAuthGrantParams.shape) },
    responses: { 200: json(RevokedOAuthGrantSchema, "The revoked grant"), ...errorResponses(404) },
  }),
  async (c) => {
    const { ws, grantId } = c.req.valid("param");
    const oauth = oauthApi(c.env);
    const grant = (await workspaceGrants(oauth, ws)).find((candidate) => candidate.id === grantId);
    if (!grant) throw notFound("Grant");
    const revoked = await toApi(oauth, grant);
    await revokeOAuthGrant(c.env, oauth, ws, grant);
    return c.json({ ...revoked, effectiveAt: await changeInForce(c) }, 200);
  },
);
