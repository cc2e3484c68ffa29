import type { Catalog, CatalogTool } from "./catalog.ts";

/** Why the gateway refuses a call before any hook or upstream sees it. Stable codes. */
export type AccessRefusal =
  | "tool_blocked"
  | "tool_review_required"
  | "upstream_authorization_required"
  | "approval_required"
  | "no_access_profile";

export type AccessDecision = { allowed: true } | { allowed: false; code: AccessRefusal; message: string };

/**
 * Step 1 of the call pipeline: ordinary access policy on the public tool. Checks
 * run most-fundamental first, so the reported reason is the one an admin must fix.
 */
export function decideAccess(catalog: Catalog, profileId: string | null, tool: CatalogTool): AccessDecision {
  const profile = profileId ? catalog.profiles.get(profileId) : undefined;
  if (!profile) return { allowed: false, code: "no_access_profile", message: "This key belongs to no access profile" };
  if (tool.status === "review_required") {
    return {
      allowed: false,
      code: "tool_review_required",
      message: `The upstream changed ${tool.publicName}'s definition; an admin must review it before it can be called`,
    };
  }
  if (tool.serviceRequiresAuthorization) {
    return { allowed: false, code: "upstream_authorization_required", message: "The service needs upstream authorization before its tools can be called" };
  }
  const mode = profile.overrides.get(tool.uid) ?? profile.defaultMode;
  if (mode === "block") return { allowed: false, code: "tool_blocked", message: `${tool.publicName} is blocked by policy` };
  if (mode === "approval") {
    return { allowed: false, code: "approval_required", message: `${tool.publicName} needs human approval before each call` };
  }
  return { allowed: true };
}

/**
 * Discovery shows only what this client could call now (a policy approval counts
 * as callable). A tool in review or awaiting upstream authorization is hidden, but
 * calling it by name explains why it is refused; a blocked tool stays unknown.
 */
export function isListed(catalog: Catalog, profileId: string | null, tool: CatalogTool): boolean {
  const decision = decideAccess(catalog, profileId, tool);
  return decision.allowed || decision.code === "approval_required";
}
