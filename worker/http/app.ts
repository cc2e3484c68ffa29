import { OpenAPIHono } from "@hono/zod-openapi";
import type { Actor, Principal } from "../auth/principal.ts";
import type { ChangeWindow } from "../leases/lease.types.ts";
import { ApiError } from "./errors.ts";

export interface AppEnv {
  Bindings: Env;
  /** `change` is set on every authorised write under a workspace (leases/change-window.ts). */
  Variables: { principal: Principal; actor: Actor; change: ChangeWindow };
}

/**
 * A router whose schema failures become 400 `invalid_request` naming the field,
 * so every route answers bad input the same way.
 */
export function createRouter(): OpenAPIHono<AppEnv> {
  return new OpenAPIHono<AppEnv>({
    defaultHook: (result) => {
      if (result.success) return;
      const issues = result.error.issues.map((issue) => ({
        field: [result.target, ...issue.path].map(String).join("."),
        message: issue.message,
      }));
      const first = issues[0];
      throw new ApiError("invalid_request", {
        message: first ? `Invalid ${first.field}: ${first.message}` : "Invalid request",
        details: { issues },
      });
    },
  });
}
