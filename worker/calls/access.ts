import type { Catalog, CatalogTool } from "./catalog.ts";

/** Why the gateway refuses a call before any hook or upstream sees it. Stable codes. */
export type AccessRefusal = "tool_blocked" | "tool_review_required" | "upstream_authorization_required" | "no_access_profile";

/** `needsApproval`: policy allows the call only with a one-call human approval (step 3 of the pipeline). */
export type AccessDecision = { allowed: true; needsApproval: boolean } | { allowed: false; code: AccessRefusal; message: string };

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
    return {
      allowed: false,
      code: "upstream_authorization_required",
      message: "The service needs upstream authorization before its tools can be called",
    };
  }
  const mode = profile.overrides.get(tool.uid) ?? profile.defaultMode;
  if (mode === "block") return { allowed: false, code: "tool_blocked", message: `${tool.publicName} is blocked by policy` };
  return { allowed: true, needsApproval: mode === "approval" };
}

/**
 * Discovery shows only what this client could call now (a tool under policy
 * approval counts as callable). A tool in review or awaiting upstream authorization is hidden, but
 * calling it by name explains why it is refused; a blocked tool stays unknown.
 */
export function isListed(catalog: Catalog, profileId: string | null, tool: CatalogTool): boolean {
  return decideAccess(catalog, profileId, tool).allowed;
}
