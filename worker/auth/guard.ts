import type { MiddlewareHandler } from "hono";
import type { AppEnv } from "../http/app.ts";
import { changeWindow } from "../leases/change-window.ts";
import { authenticate } from "./authenticate.ts";
import type { Scope } from "./principal.ts";
import { requireScope } from "./workspace-access.ts";

/**
 * Route middleware: authenticated, and holding `scope` in the path's workspace;
 * a write then runs inside a change window, so every isolate picks it up.
 */
export const guard = (scope: Scope): MiddlewareHandler<AppEnv>[] => [authenticate(), requireScope(scope), changeWindow()];
