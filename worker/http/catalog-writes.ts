import type { MiddlewareHandler } from "hono";
import { invalidateCatalog } from "../calls/catalog.ts";
import type { AppEnv } from "./app.ts";

const READS = new Set(["GET", "HEAD", "OPTIONS"]);

/**
 * Drops this isolate's catalog snapshot of the workspace after every request
 * under `/v1/workspaces/{ws}` that is not a read, whatever the route and its
 * outcome (a failed request may have written part of its change). Tools,
 * policies, profiles, services, deployments and capture settings all change
 * there, so one place covers every write, including routes added later. A
 * write that changes nothing the call path reads costs one catalog reload.
 */
export function dropCatalogAfterWrites(): MiddlewareHandler<AppEnv> {
  return async function dropCatalogAfterWrites(c, next) {
    try {
      await next();
    } finally {
      const workspaceId = c.req.param("ws");
      if (workspaceId && !READS.has(c.req.method)) invalidateCatalog(workspaceId);
    }
  };
}
