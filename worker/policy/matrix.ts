import type { ToolRecord } from "../tools/tools.store.ts";
import { effectiveMode } from "./effective-mode.ts";
import type { PolicyMode, ProfileRecord } from "./profiles.store.ts";

export interface ToolModeCell {
  profileId: string;
  mode: PolicyMode;
  override: PolicyMode | null;
  floor: { hint: "destructiveHint" | "openWorldHint"; mode: "approval" | "block" } | null;
}

export interface MatrixRow {
  uid: string;
  publicName: string;
  serviceId: string;
  serviceSlug: string;
  status: ToolRecord["status"];
  approvedHash: string | null;
  description: string | null;
  modes: ToolModeCell[];
}

export interface MatrixFilter {
  q?: string;
  mode?: PolicyMode;
  /** With `mode`: the one profile whose cell must match; absent, any profile's may. */
  profileId?: string;
}

/** One row per tool: its effective mode under every profile, computed as the call path computes it. */
export function matrixRow(tool: ToolRecord, profiles: ProfileRecord[], overrides: Map<string, Map<string, PolicyMode>>): MatrixRow {
  return {
    uid: tool.uid,
    publicName: tool.publicName,
    serviceId: tool.serviceId,
    serviceSlug: tool.serviceSlug,
    status: tool.status,
    approvedHash: tool.approvedHash,
    description: tool.definition.description ?? null,
    modes: profiles.map((profile) => {
      const { mode, override, floor } = effectiveMode(profile, overrides.get(profile.id)?.get(tool.uid), tool.definition.annotations);
      return { profileId: profile.id, mode, override, floor: floor ? { hint: floor.hint, mode: floor.mode } : null };
    }),
  };
}

/** Whether a row passes the text and mode filters (service and review state are filtered in SQL). */
export function matchesFilter(row: MatrixRow, tool: ToolRecord, filter: MatrixFilter): boolean {
  if (filter.q) {
    const needle = filter.q.toLowerCase();
    const haystack = [tool.publicName, tool.definition.title ?? "", tool.definition.description ?? ""].join("\n").toLowerCase();
    if (!haystack.includes(needle)) return false;
  }
  if (filter.mode) {
    const cells = filter.profileId ? row.modes.filter((cell) => cell.profileId === filter.profileId) : row.modes;
    if (!cells.some((cell) => cell.mode === filter.mode)) return false;
  }
  return true;
}
