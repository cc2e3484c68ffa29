import { approvalRoutes } from "./approvals/approvals.routes.ts";
import { devLoginRoutes } from "./auth/dev-login.routes.ts";
import { whoamiRoutes } from "./auth/whoami.routes.ts";
import { createRouter } from "./http/app.ts";
import { refuseCrossSiteRequests } from "./http/csrf.ts";
import { ApiError, handleError } from "./http/errors.ts";
import { hookRoutes } from "./hooks/lifecycle/hooks.routes.ts";
import { jsonBody } from "./http/json-body.ts";
import { leaseRoutes } from "./leases/lease.routes.ts";
import { logRoutes } from "./logs/logs.routes.ts";
import { serveMcpWithBrowserChecks } from "./mcp/mcp.browser.ts";
import { handleMcpRequest } from "./mcp/mcp.endpoint.ts";
import { oauthGrantRoutes } from "./oauth/grants.routes.ts";
import { oauthRoutes } from "./oauth/oauth.routes.ts";
import { policyMatrixRoutes } from "./policy/matrix.routes.ts";
import { profileRoutes } from "./policy/profiles.routes.ts";
import { servicePolicyRoutes } from "./policy/service-policies.routes.ts";
import { serviceRoutes } from "./services/services.routes.ts";
import { toolRoutes } from "./tools/tools.routes.ts";
import { upstreamOAuthRoutes } from "./upstream-auth/oauth.routes.ts";
import { workspaceRoutes } from "./workspaces/workspaces.routes.ts";

/** The whole HTTP surface: REST API under /v1, the client MCP endpoint, OAuth for MCP clients, dev login. */
export function createApp() {
  const app = createRouter();
  app.onError(handleError);
  app.notFound(() => {
    throw new ApiError("not_found", { message: "No such route" });
  });

  // First, before any body is read or any route runs: a page of another origin riding on the console's session.
  app.use("*", refuseCrossSiteRequests());
  app.use("/v1/*", jsonBody());
  app.route("/", whoamiRoutes);
  app.route("/", workspaceRoutes);
  app.route("/", leaseRoutes);
  app.route("/", profileRoutes);
  app.route("/", policyMatrixRoutes);
  app.route("/", serviceRoutes);
  app.route("/", upstreamOAuthRoutes);
  app.route("/", servicePolicyRoutes);
  app.route("/", toolRoutes);
  app.route("/", hookRoutes);
  app.route("/", approvalRoutes);
  app.route("/", logRoutes);
  app.route("/", devLoginRoutes);
  app.route("/", oauthGrantRoutes);
  app.route("/", oauthRoutes);

  app.doc31("/v1/openapi.json", {
    openapi: "3.1.0",
    info: {
      title: "Rayrun API",
      version: "1.0.0",
      description: "Errors are `{ error: { code, message, details? } }` with stable codes listed in docs/errors.md.",
    },
  });
  app.openAPIRegistry.registerComponent("securitySchemes", "apiKey", { type: "http", scheme: "bearer" });

  app.all("/mcp", (c) =>
    serveMcpWithBrowserChecks(c.env, c.req.raw, (request) => handleMcpRequest(c.env, request, c.executionCtx as ExecutionContext)),
  );
  return app;
}
