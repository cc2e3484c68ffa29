import { describe, it } from "vitest";
import { api } from "../test/helpers.ts";
import { createApp } from "./app.ts";

const METHODS = ["get", "put", "post", "delete", "patch"];

/** Every /v1 operation, sorted: adding, renaming or dropping a route must change this list. */
const V1_ROUTES = [
  "DELETE /v1/workspaces/{ws}/keys/{keyId}",
  "DELETE /v1/workspaces/{ws}/members/{userId}",
  "DELETE /v1/workspaces/{ws}/oauth/grants/{grantId}",
  "DELETE /v1/workspaces/{ws}/profiles/{profileId}",
  "DELETE /v1/workspaces/{ws}/services/{svc}",
  "DELETE /v1/workspaces/{ws}/services/{svc}/authorization",
  "DELETE /v1/workspaces/{ws}/tools/{toolUid}/hook",
  "DELETE /v1/workspaces/{ws}/tools/{toolUid}/hook/deployments/{slot}",
  "DELETE /v1/workspaces/{ws}/tools/{toolUid}/policy/{profileId}",
  "DELETE /v1/workspaces/{ws}/upstream-grants/{grantId}",
  "GET /v1/whoami",
  "GET /v1/workspaces/{ws}",
  "GET /v1/workspaces/{ws}/actors",
  "GET /v1/workspaces/{ws}/approvals",
  "GET /v1/workspaces/{ws}/approvals/{id}",
  "GET /v1/workspaces/{ws}/code-runs",
  "GET /v1/workspaces/{ws}/hooks/usage",
  "GET /v1/workspaces/{ws}/keys",
  "GET /v1/workspaces/{ws}/lease",
  "GET /v1/workspaces/{ws}/logs",
  "GET /v1/workspaces/{ws}/logs/{requestId}",
  "GET /v1/workspaces/{ws}/members",
  "GET /v1/workspaces/{ws}/metrics",
  "GET /v1/workspaces/{ws}/oauth/grants",
  "GET /v1/workspaces/{ws}/policy/matrix",
  "GET /v1/workspaces/{ws}/profiles",
  "GET /v1/workspaces/{ws}/services",
  "GET /v1/workspaces/{ws}/services/{svc}",
  "GET /v1/workspaces/{ws}/services/{svc}/content-logs",
  "GET /v1/workspaces/{ws}/services/{svc}/hook-history",
  "GET /v1/workspaces/{ws}/services/{svc}/policies",
  "GET /v1/workspaces/{ws}/tools",
  "GET /v1/workspaces/{ws}/tools/{toolUid}",
  "GET /v1/workspaces/{ws}/tools/{toolUid}/hook/deployments",
  "GET /v1/workspaces/{ws}/tools/{toolUid}/hook/draft",
  "GET /v1/workspaces/{ws}/tools/{toolUid}/hook/export",
  "GET /v1/workspaces/{ws}/tools/{toolUid}/hook/logs",
  "GET /v1/workspaces/{ws}/tools/{toolUid}/hook/resets",
  "GET /v1/workspaces/{ws}/tools/{toolUid}/hook/revisions",
  "GET /v1/workspaces/{ws}/tools/{toolUid}/hook/types",
  "GET /v1/workspaces/{ws}/tools/{toolUid}/hook/versions",
  "GET /v1/workspaces/{ws}/tools/{toolUid}/hook/versions/{versionId}",
  "GET /v1/workspaces/{ws}/tools/{toolUid}/hook/versions/{versionId}/diff",
  "GET /v1/workspaces/{ws}/tools/{toolUid}/policy",
  "GET /v1/workspaces/{ws}/upstream-grants",
  "PATCH /v1/workspaces/{ws}",
  "PATCH /v1/workspaces/{ws}/profiles/{profileId}",
  "PATCH /v1/workspaces/{ws}/services/{svc}",
  "POST /v1/workspaces",
  "POST /v1/workspaces/{ws}/approvals/{id}/approve",
  "POST /v1/workspaces/{ws}/approvals/{id}/deny",
  "POST /v1/workspaces/{ws}/keys",
  "POST /v1/workspaces/{ws}/keys/{keyId}/rotate",
  "POST /v1/workspaces/{ws}/profiles",
  "POST /v1/workspaces/{ws}/services",
  "POST /v1/workspaces/{ws}/services/{svc}/authorize",
  "POST /v1/workspaces/{ws}/services/{svc}/refresh",
  "POST /v1/workspaces/{ws}/tools/{toolUid}/hook/compile",
  "POST /v1/workspaces/{ws}/tools/{toolUid}/hook/revisions",
  "POST /v1/workspaces/{ws}/tools/{toolUid}/hook/test",
  "POST /v1/workspaces/{ws}/tools/{toolUid}/hook/versions/{versionId}/restore",
  "POST /v1/workspaces/{ws}/tools/{toolUid}/review",
  "PUT /v1/workspaces/{ws}/members",
  "PUT /v1/workspaces/{ws}/services/{svc}/policy",
  "PUT /v1/workspaces/{ws}/tools/{toolUid}/hook/deployments/{slot}",
  "PUT /v1/workspaces/{ws}/tools/{toolUid}/hook/draft",
  "PUT /v1/workspaces/{ws}/tools/{toolUid}/policy",
  "PUT /v1/workspaces/{ws}/tools/{toolUid}/projection",
];

/** `METHOD /path` for every operation of an OpenAPI document, sorted. */
const documentedRoutes = (paths: Record<string, Record<string, unknown>>) =>
  Object.entries(paths)
    .flatMap(([path, item]) =>
      Object.keys(item)
        .filter((key) => METHODS.includes(key))
        .map((method) => `${method.toUpperCase()} ${path}`),
    )
    .sort();

/** `METHOD /path` for every /v1 route the app's router answers (in OpenAPI path syntax), sorted. */
const servedRoutes = () => {
  const served = createApp()
    .routes.filter((route) => route.method !== "ALL" && route.path.startsWith("/v1/") && route.path !== "/v1/openapi.json")
    .map((route) => `${route.method} ${route.path.replace(/:(\w+)/g, "{$1}")}`);
  // Hono lists a route once per handler (middleware included).
  return [...new Set(served)].sort();
};

describe("API contract", () => {
  it("serves an OpenAPI 3.1 document describing every /v1 route with its error shape", async ({ expect }) => {
    const res = await api("/v1/openapi.json");
    expect(res.status).toBe(200);
    expect(res.body.openapi).toBe("3.1.0");
    const documented = documentedRoutes(res.body.paths);
    expect(documented).toEqual(V1_ROUTES);
    // A route the app answers but the document leaves out fails here too.
    expect(servedRoutes()).toEqual(documented);
    const createService = res.body.paths["/v1/workspaces/{ws}/services"].post;
    expect(createService.requestBody.content["application/json"].schema).toEqual({ $ref: "#/components/schemas/CreateService" });
    expect(createService.responses["502"].content["application/json"].schema).toEqual({ $ref: "#/components/schemas/Error" });
  });

  it("answers unknown routes and non-JSON bodies in the one error shape", async ({ expect }) => {
    const missing = await api("/v1/nothing-here");
    expect(missing.status).toBe(404);
    expect(missing.body).toEqual({ error: { code: "not_found", message: "No such route" } });
    const text = await api("/v1/workspaces", { rawBody: "name=x", headers: { "content-type": "text/plain" } });
    expect(text.status).toBe(415);
    expect(text.body).toEqual({ error: { code: "unsupported_media_type", message: "Send the request body as application/json" } });
  });
});
