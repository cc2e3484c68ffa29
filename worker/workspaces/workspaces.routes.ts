import { createRoute } from "@hono/zod-openapi";
import { errorResponses, json, jsonBody, WorkspaceParams } from "../../schema/api/common.ts";
import {
  ActorSchema,
  ApiKeyListSchema,
  CreateApiKeyBody,
  CreatedApiKeySchema,
  CreateWorkspaceBody,
  CreateWorkspaceResponse,
  MemberSchema,
  PutMemberBody,
  RemovedMemberSchema,
  RemoveMemberQuery,
  RevokedApiKeySchema,
  RotatedApiKeySchema,
  UpdateWorkspaceBody,
  WorkspaceSchema,
} from "../../schema/api/workspaces.ts";
import { z } from "@hono/zod-openapi";
import { guard } from "../auth/guard.ts";
import { revokeSubjectGrants } from "../upstream-auth/lifecycle.ts";
import { createApiKey, listApiKeys, MAX_ACTIVE_KEYS, revokeKeyTree, rotateApiKey } from "../auth/keys.store.ts";
import { listMembers, MAX_MEMBERS, upsertMember } from "../auth/users.store.ts";
import { createRouter } from "../http/app.ts";
import { changeInForce } from "../leases/change-window.ts";
import { ApiError, notFound } from "../http/errors.ts";
import { timingSafeEqual } from "../lib/crypto.ts";
import { findProfile } from "../policy/profiles.store.ts";
import { lastAdmin, lastAdminKey, removeMember } from "./member-removal.ts";
import { workspaceClient } from "./workspace.client.ts";
import { createWorkspace, getWorkspace, updateWorkspace } from "./workspaces.store.ts";

export const workspaceRoutes = createRouter();

workspaceRoutes.openapi(
  createRoute({
    method: "post",
    path: "/v1/workspaces",
    tags: ["workspaces"],
    summary: "Create a workspace (deployment bootstrap secret required)",
    description: "Authorize with `Authorization: Bearer <BOOTSTRAP_SECRET>`. Returns the first admin key, shown once.",
    request: { body: jsonBody(CreateWorkspaceBody) },
    responses: { 201: json(CreateWorkspaceResponse, "Created"), ...errorResponses(400) },
  }),
  async (c) => {
    const presented = /^Bearer\s+(\S+)$/i.exec(c.req.header("authorization") ?? "")?.[1] ?? "";
    if (!c.env.BOOTSTRAP_SECRET || !timingSafeEqual(presented, c.env.BOOTSTRAP_SECRET)) {
      throw new ApiError("unauthorized", { message: "Creating a workspace needs the deployment bootstrap secret" });
    }
    const body = c.req.valid("json");
    const { workspace, defaultProfileId } = await createWorkspace(c.env.DB, body.name);
    const adminKey = await createApiKey(c.env.DB, {
      workspaceId: workspace.id,
      name: "bootstrap admin",
      scopes: ["admin"],
      profileId: null,
      createdBy: "bootstrap",
    });
    if (typeof adminKey === "string") throw new Error(`the bootstrap admin key was not written (${adminKey})`);
    if (body.adminEmail) await upsertMember(c.env.DB, workspace.id, body.adminEmail, "admin");
    return c.json({ workspace, adminKey, defaultProfileId }, 201);
  },
);

workspaceRoutes.openapi(
  createRoute({
    method: "get",
    path: "/v1/workspaces/{ws}",
    tags: ["workspaces"],
    summary: "Get a workspace",
    middleware: guard("hooks:read"),
    request: { params: WorkspaceParams },
    responses: { 200: json(WorkspaceSchema, "The workspace"), ...errorResponses(404) },
  }),
  async (c) => {
    const workspace = await getWorkspace(c.env.DB, c.req.valid("param").ws);
    if (!workspace) throw notFound("Workspace");
    return c.json(workspace, 200);
  },
);

workspaceRoutes.openapi(
  createRoute({
    method: "patch",
    path: "/v1/workspaces/{ws}",
    tags: ["workspaces"],
    summary: "Rename a workspace or change its hook-log detail policy",
    middleware: guard("admin"),
    request: { params: WorkspaceParams, body: jsonBody(UpdateWorkspaceBody) },
    responses: { 200: json(WorkspaceSchema, "The workspace"), ...errorResponses(400, 404) },
  }),
  async (c) => {
    const { ws } = c.req.valid("param");
    const workspace = await updateWorkspace(c.env.DB, ws, c.req.valid("json"));
    if (!workspace) throw notFound("Workspace");
    await changeInForce(c);
    return c.json(workspace, 200);
  },
);

workspaceRoutes.openapi(
  createRoute({
    method: "post",
    path: "/v1/workspaces/{ws}/keys",
    tags: ["keys"],
    summary: "Create an API key (the secret is returned once)",
    description: "A workspace holds at most 1,000 unrevoked keys (413 `too_many_keys`).",
    middleware: guard("admin"),
    request: { params: WorkspaceParams, body: jsonBody(CreateApiKeyBody) },
    responses: { 201: json(CreatedApiKeySchema, "Created"), ...errorResponses(400, 404, 413) },
  }),
  async (c) => {
    const { ws } = c.req.valid("param");
    const body = c.req.valid("json");
    const callsTools = body.scopes.includes("tools:call");
    if (callsTools && !body.profileId) {
      throw new ApiError("invalid_request", {
        message: "A key with tools:call must name the access profile it belongs to",
        details: {
          issues: [{ field: "json.profileId", message: "Required with tools:call" }],
        },
      });
    }
    if (body.profileId && !(await findProfile(c.env.DB, ws, body.profileId))) {
      throw new ApiError("invalid_request", {
        message: "Unknown access profile",
        details: {
          issues: [{ field: "json.profileId", message: "No such profile in this workspace" }],
        },
      });
    }
    const created = await createApiKey(c.env.DB, {
      workspaceId: ws,
      name: body.name,
      scopes: body.scopes,
      profileId: body.profileId ?? null,
      createdBy: c.get("actor").id,
    });
    if (created === "full") {
      throw new ApiError("too_many_keys", {
        message: `A workspace holds at most ${MAX_ACTIVE_KEYS} unrevoked API keys; revoke one first`,
        details: { limit: MAX_ACTIVE_KEYS },
      });
    }
    // Its maker was revoked (a key) or began to be removed (a member) after this request was authenticated.
    if (created === "maker_revoked") throw new ApiError("unauthorized", { message: "The credential making this key was revoked" });
    return c.json(created, 201);
  },
);

workspaceRoutes.openapi(
  createRoute({
    method: "get",
    path: "/v1/workspaces/{ws}/keys",
    tags: ["keys"],
    summary: "List API keys (never their secrets)",
    description:
      "Every unrevoked key and the 1,000 most recently revoked ones, oldest first; `olderRevokedKeysOmitted` is true " +
      "when earlier revocations are left out.",
    middleware: guard("admin"),
    request: { params: WorkspaceParams },
    responses: { 200: json(ApiKeyListSchema, "Keys"), ...errorResponses(404) },
  }),
  async (c) => c.json(await listApiKeys(c.env.DB, c.req.valid("param").ws), 200),
);

workspaceRoutes.openapi(
  createRoute({
    method: "delete",
    path: "/v1/workspaces/{ws}/keys/{keyId}",
    tags: ["keys"],
    summary: "Revoke an API key, and the keys made with it",
    description:
      "Revokes the key and every key made with it, however deep (a key with `admin` can make keys; they are listed in " +
      "`revokedKeys`). Answers once no request anywhere can use any of them (`effectiveAt`, also `rayrun-effective-at`). " +
      "Their own upstream OAuth grants are revoked at their authorization servers and deleted, and the approvals they wait " +
      "for are denied (`cancelledApprovals`). Revoking a key again " +
      "revokes any key made with it that is still active. A revocation that would leave the workspace with no admin " +
      "member and no other unrevoked `admin` key is refused with 409 `last_admin` and revokes nothing.",
    middleware: guard("admin"),
    request: { params: WorkspaceParams.extend({ keyId: z.string() }) },
    responses: { 200: json(RevokedApiKeySchema, "The revoked key"), ...errorResponses(404, 409) },
  }),
  async (c) => {
    const { ws, keyId } = c.req.valid("param");
    const revocation = await revokeKeyTree(c.env.DB, ws, keyId);
    if (!revocation) throw notFound("Key");
    if (revocation === "last_admin") throw lastAdminKey(keyId);
    const { key, ...made } = revocation;
    const effectiveAt = await changeInForce(c);
    // An authorization link one of the keys made would still finish, and could replace the workspace's shared grant.
    const keys = [keyId, ...made.made];
    const subjects = keys.map((id) => `key:${id}`);
    await workspaceClient(c.env, ws).dropOAuthFlows({ initiators: keys, subjects });
    await revokeSubjectGrants(c.env, ws, subjects, `Grant revoked with the key ${keyId} and the keys made with it`);
    const cancelledApprovals = await workspaceClient(c.env, ws).cancelApprovals(
      keys,
      c.get("actor").id,
      `Denied when the key ${keyId} was revoked`,
    );
    return c.json({ ...key, revokedKeys: made.revoked, cancelledApprovals, effectiveAt }, 200);
  },
);

workspaceRoutes.openapi(
  createRoute({
    method: "post",
    path: "/v1/workspaces/{ws}/keys/{keyId}/rotate",
    tags: ["keys"],
    summary: "Give an API key a new secret (returned once)",
    description:
      "The key keeps its id, name, scopes and profile, and the keys made with it, its upstream grants and the approvals " +
      "it waits for stay as they are; only the secret changes. Answers once the old secret is refused everywhere " +
      "(`effectiveAt`, also `rayrun-effective-at`). A revoked key answers 409 `key_revoked`. This is how a workspace " +
      "without an admin member replaces the secret of the key it was created with, which cannot be revoked (`last_admin`).",
    middleware: guard("admin"),
    request: { params: WorkspaceParams.extend({ keyId: z.string() }) },
    responses: { 200: json(RotatedApiKeySchema, "The key and its new secret"), ...errorResponses(404, 409) },
  }),
  async (c) => {
    const { ws, keyId } = c.req.valid("param");
    const rotated = await rotateApiKey(c.env.DB, ws, keyId);
    if (!rotated) throw notFound("Key");
    if (rotated === "revoked")
      throw new ApiError("key_revoked", { message: `${keyId} is revoked: make a new key instead`, details: { keyId } });
    return c.json({ ...rotated, effectiveAt: await changeInForce(c) }, 200);
  },
);

workspaceRoutes.openapi(
  createRoute({
    method: "get",
    path: "/v1/workspaces/{ws}/members",
    tags: ["members"],
    summary: "List browser members",
    middleware: guard("admin"),
    request: { params: WorkspaceParams },
    responses: { 200: json(z.object({ members: z.array(MemberSchema) }), "Members"), ...errorResponses(404) },
  }),
  async (c) => c.json({ members: await listMembers(c.env.DB, c.req.valid("param").ws) }, 200),
);

workspaceRoutes.openapi(
  createRoute({
    method: "put",
    path: "/v1/workspaces/{ws}/members",
    tags: ["members"],
    summary: "Add a browser member or change their role",
    description:
      "A workspace keeps at least one admin member once it has one: changing the last admin's role to `editor` or `viewer` " +
      "is refused with 409 `last_admin`. A workspace holds at most 1,000 members (413 `too_many_members`).",
    middleware: guard("admin"),
    request: { params: WorkspaceParams, body: jsonBody(PutMemberBody) },
    responses: { 200: json(MemberSchema.omit({ createdAt: true }), "The member"), ...errorResponses(400, 404, 409, 413) },
  }),
  async (c) => {
    const body = c.req.valid("json");
    const upserted = await upsertMember(c.env.DB, c.req.valid("param").ws, body.email, body.role);
    if (upserted === "full") {
      throw new ApiError("too_many_members", {
        message: `A workspace holds at most ${MAX_MEMBERS} members; remove one first`,
        details: { limit: MAX_MEMBERS },
      });
    }
    const { user, refused } = upserted;
    if (refused === "last_admin") throw lastAdmin(user.email, user.id, "demoted");
    return c.json({ id: user.id, email: user.email, role: body.role }, 200);
  },
);

workspaceRoutes.openapi(
  createRoute({
    method: "delete",
    path: "/v1/workspaces/{ws}/members/{userId}",
    tags: ["members"],
    summary: "Remove a browser member, with every credential that acts with their standing",
    description:
      "Ends the membership, revokes the keys the member created, the OAuth apps' grants they consented to, and their own " +
      "upstream OAuth grants (revoked at the authorization servers where offered), and denies the approvals those keys " +
      "and apps wait for (`cancelledApprovals`). The workspace's shared upstream grants the member authorized are listed " +
      "(`sharedGrantsAuthorized`) and kept, or revoked too with `revokeSharedGrants=true`. Answers once none of these can be used " +
      "anywhere (`effectiveAt`, also `rayrun-effective-at`). The workspace's last admin member cannot be removed " +
      "(409 `last_admin`, nothing revoked).",
    middleware: guard("admin"),
    request: { params: WorkspaceParams.extend({ userId: z.string() }), query: RemoveMemberQuery },
    responses: { 200: json(RemovedMemberSchema, "The removed member"), ...errorResponses(400, 404, 409) },
  }),
  async (c) => {
    const { ws, userId } = c.req.valid("param");
    const revokeSharedGrants = c.req.valid("query").revokeSharedGrants === "true";
    const removed = await removeMember(c.env, ws, userId, c.get("actor").id, { revokeSharedGrants });
    if (!removed) throw notFound("Member");
    return c.json({ ...removed, effectiveAt: await changeInForce(c) }, 200);
  },
);

workspaceRoutes.openapi(
  createRoute({
    method: "get",
    path: "/v1/workspaces/{ws}/actors",
    tags: ["members"],
    summary: "Names for the ids that history, approvals and deployments record: members by email, keys by name",
    description:
      "Every current member and every key of the workspace, revoked ones included (the 1,000 most recently revoked, as " +
      "the keys list), so records read by name. An id that is not listed (a former member, `bootstrap`, a key revoked " +
      "long ago) is shown as recorded.",
    middleware: guard("hooks:read"),
    request: { params: WorkspaceParams },
    responses: { 200: json(z.object({ actors: z.array(ActorSchema) }), "Actors"), ...errorResponses(404) },
  }),
  async (c) => {
    const { ws } = c.req.valid("param");
    const [members, { keys }] = await Promise.all([listMembers(c.env.DB, ws), listApiKeys(c.env.DB, ws)]);
    const actors = [
      ...members.map((member) => ({ id: member.id, kind: "user" as const, name: member.email, revoked: false })),
      ...keys.map((key) => ({ id: key.id, kind: "key" as const, name: key.name, revoked: key.revokedAt !== null })),
    ];
    return c.json({ actors }, 200);
  },
);
