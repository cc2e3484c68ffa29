import { describe, it } from "vitest";
import { api } from "../test/helpers.ts";

describe("API contract", () => {
  it("serves an OpenAPI 3.1 document describing every /v1 route with its error shape", async ({ expect }) => {
    const res = await api("/v1/openapi.json");
    expect(res.status).toBe(200);
    expect(res.body.openapi).toBe("3.1.0");
    const paths = Object.keys(res.body.paths);
    expect(paths).toEqual(
      expect.arrayContaining([
        "/v1/workspaces",
        "/v1/workspaces/{ws}/keys",
        "/v1/workspaces/{ws}/keys/{keyId}",
        "/v1/workspaces/{ws}/services",
        "/v1/workspaces/{ws}/services/{svc}/refresh",
        "/v1/workspaces/{ws}/tools",
        "/v1/workspaces/{ws}/tools/{toolUid}",
        "/v1/workspaces/{ws}/tools/{toolUid}/review",
        "/v1/workspaces/{ws}/tools/{toolUid}/policy",
        "/v1/workspaces/{ws}/profiles",
      ]),
    );
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
