import { createRoute, z } from "@hono/zod-openapi";
import { errorResponses, json, jsonBody } from "../../schema/api/common.ts";
import { PutServicePolicyBody, ServiceParams, ServicePolicySchema } from "../../schema/api/services.ts";
import { guard } from "../auth/guard.ts";
import { createRouter } from "../http/app.ts";
import { changeInForce } from "../leases/change-window.ts";
import { notFound } from "../http/errors.ts";
import { findService } from "../services/services.store.ts";
import { findProfile } from "./profiles.store.ts";
import { defaultContentModes, listServicePolicies, setServicePolicy } from "./service-policies.store.ts";

export const servicePolicyRoutes = createRouter();

const MODES_DESCRIPTION =
  "A profile without a row for the service has the modes of its `defaultMode`: `allow` allows both, `block` and `approval` " +
  "block both (a read cannot wait for a one-call approval). Blocked resources and prompts are left out of every list, and " +
  "reading, getting or completing one answers exactly as for one that does not exist.";

servicePolicyRoutes.openapi(
  createRoute({
    method: "get",
    path: "/v1/workspaces/{ws}/services/{svc}/policies",
    tags: ["policy"],
    summary: "Per-profile modes for a service's resources and prompts",
    description: MODES_DESCRIPTION,
    middleware: guard("hooks:read"),
    request: { params: ServiceParams },
    responses: { 200: json(z.object({ policies: z.array(ServicePolicySchema) }), "Rows set so far"), ...errorResponses(404) },
  }),
  async (c) => {
    const { ws, svc } = c.req.valid("param");
    const service = await findService(c.env.DB, ws, svc);
    if (!service || service.deletedAt) throw notFound("Service");
    return c.json({ policies: await listServicePolicies(c.env.DB, ws, svc) }, 200);
  },
);

servicePolicyRoutes.openapi(
  createRoute({
    method: "put",
    path: "/v1/workspaces/{ws}/services/{svc}/policy",
    tags: ["policy"],
    summary: "Allow or block a service's resources and prompts for one access profile",
    description: `${MODES_DESCRIPTION} A kind left out of the body keeps its mode.`,
    middleware: guard("admin"),
    request: { params: ServiceParams, body: jsonBody(PutServicePolicyBody) },
    responses: { 200: json(ServicePolicySchema, "The service's modes for the profile"), ...errorResponses(400, 404) },
  }),
  async (c) => {
    const { ws, svc } = c.req.valid("param");
    const body = c.req.valid("json");
    const service = await findService(c.env.DB, ws, svc);
    if (!service || service.deletedAt) throw notFound("Service");
    const profile = await findProfile(c.env.DB, ws, body.profileId);
    if (!profile) throw notFound("Access profile");
    const policy = await setServicePolicy(c.env.DB, ws, {
      ...body,
      serviceId: svc,
      updatedBy: c.get("actor").id,
      defaults: defaultContentModes(profile.defaultMode),
    });
    await changeInForce(c);
    return c.json(policy, 200);
  },
);
