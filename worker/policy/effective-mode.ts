import type { PolicyMode } from "./profiles.store.ts";
import { matchRiskRules, type RiskMatch, type RiskRules } from "./risk.ts";

/** block > approval > allow: the order in which modes restrict a call. */
export const STRICTNESS: Record<PolicyMode, number> = { allow: 0, approval: 1, block: 2 };

/** One tool's mode under one profile, with what set it. */
export interface EffectiveMode {
  /** What /mcp enforces. */
  mode: PolicyMode;
  /** The per-tool override, or null when the profile's default mode applies. */
  override: PolicyMode | null;
  /** Every risk rule the tool's annotations match, in RISK_HINTS order. */
  risks: RiskMatch[];
  /**
   * The strictest matching risk rule when it is stricter than the override (else the default mode): the
   * mode cannot be set below it for this tool, by an override or a hook.
   */
  floor: RiskMatch | null;
}

/**
 * The one definition of a tool's mode under a profile, used by the call path and by every view of policy:
 * the strictest of the per-tool override (else the default mode) and every risk rule the tool's annotations
 * match. Risk rules are a floor, so an override can tighten them but never lift them.
 */
export function effectiveMode(
  profile: { defaultMode: PolicyMode; riskRules: RiskRules },
  override: PolicyMode | undefined,
  annotations: Record<string, unknown> | undefined,
): EffectiveMode {
  const chosen = override ?? profile.defaultMode;
  const risks = matchRiskRules(profile.riskRules, annotations);
  const strictestRisk = risks.reduce<RiskMatch | null>(
    (strictest, risk) => (!strictest || STRICTNESS[risk.mode] > STRICTNESS[strictest.mode] ? risk : strictest),
    null,
  );
  const floor = strictestRisk && STRICTNESS[strictestRisk.mode] > STRICTNESS[chosen] ? strictestRisk : null;
  return { mode: floor ? floor.mode : chosen, override: override ?? null, risks, floor };
}
