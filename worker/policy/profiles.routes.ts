import { createRoute, z } from "@hono/zod-openapi";
import { errorResponses, json, jsonBody, WorkspaceParams } from "../../schema/api/common.ts";
import { CreateProfileBody, ProfileParams, ProfileSchema, UpdateProfileBody } from "../../schema/api/workspaces.ts";
import { guard } from "../auth/guard.ts";
import { createRouter } from "../http/app.ts";
import { changeInForce } from "../leases/change-window.ts";
import { ApiError, notFound } from "../http/errors.ts";
import { createProfile, listProfiles, updateProfile } from "./profiles.store.ts";

export const profileRoutes = createRouter();

profileRoutes.openapi(
  createRoute({
    method: "get",
    path: "/v1/workspaces/{ws}/profiles",
    tags: ["policy"],
    summary: "List access profiles",
    middleware: guard("hooks:read"),
    request: { params: WorkspaceParams },
    responses: { 200: json(z.object({ profiles: z.array(ProfileSchema) }), "Profiles"), ...errorResponses(404) },
  }),
  async (c) => c.json({ profiles: await listProfiles(c.env.DB, c.req.valid("param").ws) }, 200),
);

profileRoutes.openapi(
  createRoute({
    method: "post",
    path: "/v1/workspaces/{ws}/profiles",
    tags: ["policy"],
    summary: "Create an access profile; client keys belong to one",
    middleware: guard("admin"),
    request: { params: WorkspaceParams, body: jsonBody(CreateProfileBody) },
    responses: { 201: json(ProfileSchema, "Created"), ...errorResponses(400, 404, 409) },
  }),
  async (c) => {
    const body = c.req.valid("json");
    const profile = await createProfile(c.env.DB, c.req.valid("param").ws, body);
    if (!profile)
      throw new ApiError("conflict", { message: `A profile named '${body.name}' already exists`, details: { field: "json.name" } });
    await changeInForce(c);
    return c.json(profile, 201);
  },
);

profileRoutes.openapi(
  createRoute({
    method: "patch",
    path: "/v1/workspaces/{ws}/profiles/{profileId}",
    tags: ["policy"],
    summary: "Change an access profile's default mode, risk rules or discovery",
    description:
      "Answers once the change is in force for every call (`rayrun-effective-at`). `riskRules` replaces the " +
      "profile's whole set. `discovery` chooses Direct Mode, Code Mode or both on /mcp. The name cannot be changed.",
    middleware: guard("admin"),
    request: { params: ProfileParams, body: jsonBody(UpdateProfileBody) },
    responses: { 200: json(ProfileSchema, "The profile"), ...errorResponses(400, 404) },
  }),
  async (c) => {
    const { ws, profileId } = c.req.valid("param");
    const profile = await updateProfile(c.env.DB, ws, profileId, { ...c.req.valid("json"), updatedBy: c.get("actor").id });
    if (!profile) throw notFound("Access profile");
    await changeInForce(c);
    return c.json(profile, 200);
  },
);
