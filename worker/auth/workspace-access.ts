import type { Context, MiddlewareHandler } from "hono";
import type { AppEnv } from "../http/app.ts";
import { ApiError } from "../http/errors.ts";
import { scopesForRole, type Actor, type Scope } from "./principal.ts";
import { roleInForce } from "./users.store.ts";

/**
 * Resolves what the caller may do in the workspace named by the `{ws}` path
 * parameter. A caller with no standing there gets 404, the same answer as for a
 * workspace that does not exist, so ids of other tenants leak nothing.
 */
async function actorFor(c: Context<AppEnv>, workspaceId: string): Promise<Actor> {
  const principal = c.get("principal");
  if (principal.kind === "key") {
    if (principal.workspaceId !== workspaceId) throw new ApiError("not_found", { message: "Workspace not found" });
    return { id: principal.id, kind: "key", channel: principal.channel, workspaceId, scopes: principal.scopes, role: null };
  }
  const role = await roleInForce(c.env.DB, workspaceId, principal.id);
  if (!role) throw new ApiError("not_found", { message: "Workspace not found" });
  return { id: principal.id, kind: "user", channel: "browser", workspaceId, scopes: scopesForRole(role), role };
}

function assertScope(actor: Actor, scope: Scope): void {
  if (!actor.scopes.has(scope)) {
    throw new ApiError("forbidden", { message: `This credential lacks the '${scope}' scope`, details: { required: scope } });
  }
}

/** Route guard: the caller must hold `scope` in the path's workspace. Sets `actor`. */
export function requireScope(scope: Scope): MiddlewareHandler<AppEnv> {
  return async function requireScope(c, next) {
    const workspaceId = c.req.param("ws");
    if (!workspaceId) throw new ApiError("not_found", { message: "Workspace not found" });
    const actor = await actorFor(c, workspaceId);
    assertScope(actor, scope);
    c.set("actor", actor);
    return next();
  };
}
