import { createRoute, z } from "@hono/zod-openapi";
import { errorResponses, json } from "../../schema/api/common.ts";
import { createRouter } from "../http/app.ts";
import { authenticate } from "./authenticate.ts";
import { ROLES, SCOPES, scopesForRole, type Scope } from "./principal.ts";
import { getWorkspace } from "../workspaces/workspaces.store.ts";
import { workspacesOfUser } from "./users.store.ts";
import { mcpResource, publicUrl } from "../oauth/oauth.config.ts";

const WhoamiSchema = z
  .object({
    kind: z.enum(["key", "user"]),
    id: z.string().openapi({ description: "The key id (never its secret) or the user id" }),
    channel: z.enum(["browser", "api", "cli"]).openapi({ description: "The channel this caller's changes are attributed to" }),
    mcpUrl: z.string().openapi({ description: "The MCP endpoint agents connect to: `<PUBLIC_URL>/mcp` (else this origin's)" }),
    email: z.string().optional().openapi({ description: "Only for a user" }),
    workspaces: z
      .array(
        z.object({
          id: z.string(),
          name: z.string(),
          role: z.enum(ROLES).nullable().openapi({ description: "A member's role; null for a key" }),
          scopes: z.array(z.enum(SCOPES)),
        }),
      )
      .openapi({ description: "Where the caller has standing: a key's one workspace, a user's memberships" }),
  })
  .openapi("Whoami");

export const whoamiRoutes = createRouter();

whoamiRoutes.openapi(
  createRoute({
    method: "get",
    path: "/v1/whoami",
    tags: ["workspaces"],
    summary: "Who the credentials are, and the workspaces they reach (clients such as the CLI pick the workspace from it)",
    middleware: [authenticate()],
    responses: { 200: json(WhoamiSchema, "The caller"), ...errorResponses() },
  }),
  async (c) => {
    const principal = c.get("principal");
    const mcpUrl = mcpResource(publicUrl(c.env) ?? new URL(c.req.url).origin);
    const sorted = (scopes: Iterable<Scope>) => SCOPES.filter((scope) => new Set(scopes).has(scope));
    if (principal.kind === "key") {
      const workspace = await getWorkspace(c.env.DB, principal.workspaceId);
      const workspaces = workspace ? [{ id: workspace.id, name: workspace.name, role: null, scopes: sorted(principal.scopes) }] : [];
      return c.json({ kind: "key" as const, id: principal.id, channel: principal.channel, mcpUrl, workspaces }, 200);
    }
    const memberships = await workspacesOfUser(c.env.DB, principal.id);
    return c.json(
      {
        kind: "user" as const,
        id: principal.id,
        channel: principal.channel,
        mcpUrl,
        email: principal.email,
        workspaces: memberships.map((m) => ({ ...m, scopes: sorted(scopesForRole(m.role)) })),
      },
      200,
    );
  },
);
