// Revisions and versions by their per-tool numbers (r7, v12) instead of ids, where the id is known to
// the page; an id it does not know (on an older page) is shown short.
import type { Schemas } from "../api.ts";

export const short = (id: string | null | undefined) => (id ? id.slice(0, 12) : "—");

/** id → `r<number>` / `v<number>`, from the revisions and versions a panel has loaded. */
export function numberLabels(revisions: Schemas["HookRevision"][], versions: Schemas["HookVersionSummary"][]) {
  const revisionNumbers = new Map(revisions.map((revision) => [revision.revisionId, revision.number]));
  const versionNumbers = new Map(versions.map((version) => [version.versionId, version.number]));
  return {
    revision: (id: string | null | undefined) => (id && revisionNumbers.has(id) ? `r${revisionNumbers.get(id)}` : short(id)),
    version: (id: string | null | undefined) => (id && versionNumbers.has(id) ? `v${versionNumbers.get(id)}` : short(id)),
  };
}
