import { effectiveMode } from "../policy/effective-mode.ts";
import type { RiskApprovalReason } from "../policy/risk.ts";
import type { Catalog, CatalogProfile, CatalogTool } from "./catalog.ts";

/** Why the gateway refuses a call before any hook or upstream sees it. Stable codes. */
export type AccessRefusal =
  | "tool_blocked"
  | "tool_review_required"
  | "tool_name_invalid"
  | "schema_too_complex"
  | "upstream_authorization_required"
  | "no_access_profile";

/** The code an approval required by the access profile carries: a risk rule's, else `policy_approval`. */
export type PolicyApprovalReason = "policy_approval" | RiskApprovalReason;

/** `needsApproval`: policy allows the call only with a one-call human approval (step 3 of the pipeline). */
export type AccessDecision =
  | { allowed: true; needsApproval: false }
  | { allowed: true; needsApproval: true; approvalReason: PolicyApprovalReason }
  | { allowed: false; code: AccessRefusal; message: string; details?: Record<string, unknown> };

/**
 * Step 1 of the call pipeline: ordinary access policy on the public tool. The
 * profile's block comes first: a client whose profile blocks a tool must not
 * learn that it exists, so it never hears that the tool is in review or waits
 * for upstream authorization. Then the checks run most-fundamental first, so
 * the reported reason is the one an admin must fix.
 */
export function decideAccess(catalog: Catalog, profileId: string | null, tool: CatalogTool): AccessDecision {
  const profile = profileId ? catalog.profiles.get(profileId) : undefined;
  if (!profile) return { allowed: false, code: "no_access_profile", message: "This key belongs to no access profile" };
  const mode = decideMode(profile, tool);
  if (!mode.allowed) return mode;
  if (tool.status === "review_required") {
    return tool.neverApproved
      ? {
          allowed: false,
          code: "tool_review_required",
          message: `${tool.publicName} is new: an admin must review its definition before it can be called`,
          details: { review: "new_tool" },
        }
      : {
          allowed: false,
          code: "tool_review_required",
          message: `The upstream changed ${tool.publicName}'s definition; an admin must review it before it can be called`,
          details: { review: "changed_definition" },
        };
  }
  if (tool.nameProblem) {
    // One name a model API cannot take breaks a client's whole tool list: hidden from discovery, refused by name.
    return {
      allowed: false,
      code: "tool_name_invalid",
      message: `${tool.publicName} cannot be offered to MCP clients: ${tool.nameProblem}`,
    };
  }
  if (tool.schemaBreach) {
    // Validating this tool's calls would cost unbounded work: it is refused, and hidden from discovery like a tool in review.
    const { bound, limit, message } = tool.schemaBreach;
    return {
      allowed: false,
      code: "schema_too_complex",
      message: `${tool.publicName}'s upstream schema is past a validation bound (${message}), so it cannot be called`,
      details: { bound, ...(limit !== undefined ? { limit } : {}) },
    };
  }
  if (tool.serviceRequiresAuthorization) {
    return {
      allowed: false,
      code: "upstream_authorization_required",
      message: "The service needs upstream authorization before its tools can be called",
    };
  }
  return mode;
}

/** The profile's mode for the tool (policy/effective-mode.ts), as an access decision. */
function decideMode(profile: CatalogProfile, tool: CatalogTool): AccessDecision {
  const { mode, floor, risks } = effectiveMode(profile, profile.overrides.get(tool.uid), tool.definition.annotations);
  if (mode === "block") {
    const by = floor ? `the access profile's ${floor.hint} rule` : "policy";
    return { allowed: false, code: "tool_blocked", message: `${tool.publicName} is blocked by ${by}` };
  }
  if (mode === "allow") return { allowed: true, needsApproval: false };
  // A risk rule names why the tool is risky, which tells an approver more than `policy_approval`.
  const risk = risks.find((match) => match.mode === "approval");
  return { allowed: true, needsApproval: true, approvalReason: risk?.approvalReason ?? "policy_approval" };
}

/**
 * Discovery shows only what this client could call now (a tool under policy
 * approval counts as callable). A tool in review, with an upstream schema past a validation bound, or
 * awaiting upstream authorization is hidden, but
 * calling it by name explains why it is refused; a blocked tool stays unknown.
 */
export function isListed(catalog: Catalog, profileId: string | null, tool: CatalogTool): boolean {
  return decideAccess(catalog, profileId, tool).allowed;
}
