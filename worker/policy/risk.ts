/**
 * Risk rules: an access profile's modes by MCP tool annotation. A rule can only
 * tighten (`approval` or `block`); it is a floor under the profile's default mode
 * and per-tool overrides, and no hook can lift it.
 */

/** The annotations a rule can name: the two that say a call may do harm beyond reading. */
export const RISK_HINTS = ["destructiveHint", "openWorldHint"] as const;
export type RiskHint = (typeof RISK_HINTS)[number];

export type RiskMode = "approval" | "block";

/**
 * `match`: a tool that omits the hint is read with the MCP spec default (true for both
 * hints), so an upstream cannot escape the rule by saying nothing. `ignore`: only an
 * explicit `true` matches.
 */
export type WhenMissing = "match" | "ignore";

export interface RiskRule {
  mode: RiskMode;
  whenMissing: WhenMissing;
}

export type RiskRules = Partial<Record<RiskHint, RiskRule>>;

/** The approval reason a risk rule's `approval` carries, e.g. `risk_destructive_hint`. */
export type RiskApprovalReason = `risk_${"destructive_hint" | "open_world_hint"}`;

const APPROVAL_REASONS: Record<RiskHint, RiskApprovalReason> = {
  destructiveHint: "risk_destructive_hint",
  openWorldHint: "risk_open_world_hint",
};

export interface RiskMatch {
  hint: RiskHint;
  mode: RiskMode;
  approvalReason: RiskApprovalReason;
}

/**
 * The rules that apply to a tool with these annotations, in RISK_HINTS order.
 * Annotations come from the upstream and are untrusted: `true` always matches,
 * `false` never does, and anything else (absent, or not a boolean) counts as missing.
 * Per the MCP spec, destructiveHint means nothing for a tool that declares
 * `readOnlyHint: true`, so a missing destructiveHint does not match such a tool.
 */
export function matchRiskRules(rules: RiskRules, annotations: Record<string, unknown> | undefined): RiskMatch[] {
  const matches: RiskMatch[] = [];
  for (const hint of RISK_HINTS) {
    const rule = rules[hint];
    if (!rule) continue;
    const value = annotations?.[hint];
    const missingMatches = rule.whenMissing === "match" && !(hint === "destructiveHint" && annotations?.readOnlyHint === true);
    const matched = value === true || (typeof value !== "boolean" && missingMatches);
    if (matched) matches.push({ hint, mode: rule.mode, approvalReason: APPROVAL_REASONS[hint] });
  }
  return matches;
}
