import { createRouter } from "../../http/app.ts";
import { buildRoutes } from "./build.routes.ts";
import { deployRoutes } from "./deploy.routes.ts";
import { draftRoutes } from "./draft.routes.ts";

/** Every hook lifecycle route under `/v1/workspaces/{ws}/tools/{toolUid}/hook…`, plus the workspace's hook usage. */
export const hookRoutes = createRouter();
hookRoutes.route("/", draftRoutes);
hookRoutes.route("/", buildRoutes);
hookRoutes.route("/", deployRoutes);
