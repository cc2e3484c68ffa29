import type { Schemas } from "../api.ts";

/** What the Hooks tab needs to know about its tool. */
export type HookTool = Pick<Schemas["Tool"], "uid" | "publicName" | "definition" | "definitionHash" | "status">;
