import { createRoute, z } from "@hono/zod-openapi";
import { errorResponses, json, jsonBody, WorkspaceParams } from "../../schema/api/common.ts";
import { CreateProfileBody, ProfileParams, ProfileSchema, UpdateProfileBody } from "../../schema/api/workspaces.ts";
import { guard } from "../auth/guard.ts";
import { createRouter } from "../http/app.ts";
import { changeInForce } from "../leases/change-window.ts";
import { ApiError, notFound } from "../http/errors.ts";
import { createProfile, deleteProfile, keysInProfile, listProfiles, MAX_PROFILES, updateProfile } from "./profiles.store.ts";

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
    description:
      "`defaultMode` defaults to `block`: a new profile reaches no tool until an admin allows tools (per tool, or by " +
      `changing the default). A workspace holds at most ${MAX_PROFILES} profiles (\`too_many_profiles\`).`,
    middleware: guard("admin"),
    request: { params: WorkspaceParams, body: jsonBody(CreateProfileBody) },
    responses: { 201: json(ProfileSchema, "Created"), ...errorResponses(400, 404, 409, 413) },
  }),
  async (c) => {
    const body = c.req.valid("json");
    const profile = await createProfile(c.env.DB, c.req.valid("param").ws, body);
    if (profile === "name_taken") throw nameTaken(body.name);
    if (profile === "full") {
      throw new ApiError("too_many_profiles", {
        message: `A workspace holds at most ${MAX_PROFILES} access profiles; delete one first`,
        details: { limit: MAX_PROFILES },
      });
    }
    await changeInForce(c);
    return c.json(profile, 201);
  },
);

const nameTaken = (name: string) =>
  new ApiError("conflict", { message: `A profile named '${name}' already exists`, details: { field: "json.name" } });

profileRoutes.openapi(
  createRoute({
    method: "patch",
    path: "/v1/workspaces/{ws}/profiles/{profileId}",
    tags: ["policy"],
    summary: "Rename an access profile, or change its default mode, risk rules or discovery",
    description:
      "Answers once the change is in force for every call (`rayrun-effective-at`). `riskRules` replaces the " +
      "profile's whole set. `discovery` chooses Direct Mode, Code Mode or both on /mcp. A rename keeps every key in the profile.",
    middleware: guard("admin"),
    request: { params: ProfileParams, body: jsonBody(UpdateProfileBody) },
    responses: { 200: json(ProfileSchema, "The profile"), ...errorResponses(400, 404, 409) },
  }),
  async (c) => {
    const { ws, profileId } = c.req.valid("param");
    const body = c.req.valid("json");
    const profile = await updateProfile(c.env.DB, ws, profileId, { ...body, updatedBy: c.get("actor").id });
    if (profile === "name_taken") throw nameTaken(body.name ?? "");
    if (!profile) throw notFound("Access profile");
    await changeInForce(c);
    return c.json(profile, 200);
  },
);

profileRoutes.openapi(
  createRoute({
    method: "delete",
    path: "/v1/workspaces/{ws}/profiles/{profileId}",
    tags: ["policy"],
    summary: "Delete an access profile that no unrevoked key belongs to",
    description:
      "Removes the profile with its per-tool and per-service modes. Refused with `profile_in_use` (`details.keys`: id and " +
      "name of each) while an unrevoked key belongs to it; revoke or move those keys first. An OAuth grant bound to a " +
      "deleted profile is refused on /mcp (`no_access_profile`) until the app is granted again.",
    middleware: guard("admin"),
    request: { params: ProfileParams },
    responses: { 204: { description: "Deleted" }, ...errorResponses(404, 409) },
  }),
  async (c) => {
    const { ws, profileId } = c.req.valid("param");
    const outcome = await deleteProfile(c.env.DB, ws, profileId);
    if (!outcome) throw notFound("Access profile");
    if (outcome === "in_use") {
      const keys = await keysInProfile(c.env.DB, ws, profileId);
      throw new ApiError("profile_in_use", {
        message: `${keys.length} unrevoked ${keys.length === 1 ? "key belongs" : "keys belong"} to this profile; revoke ${keys.length === 1 ? "it" : "them"} first`,
        details: { keys },
      });
    }
    await changeInForce(c);
    return c.body(null, 204);
  },
);
