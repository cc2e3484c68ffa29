import { api, call } from "../api.ts";
import { useLoad } from "./load.ts";

/**
 * Names for the ids that records carry (`usr_…`, `key_…`, and in logs `key:<id>`): a member's email, a key's
 * name. An id the workspace does not know (a former member, `bootstrap`) reads as recorded. Without the
 * names (still loading, or refused), ids are shown.
 */
export function useActorNames(ws: string): (id: string | null | undefined) => string {
  const actors = useLoad(async () => (await call(api.GET("/v1/workspaces/{ws}/actors", { params: { path: { ws } } }))).actors, [ws]);
  const names = new Map((actors.data ?? []).map((actor) => [actor.id, actor.revoked ? `${actor.name} (revoked)` : actor.name]));
  return (id) => {
    if (!id) return "—";
    const bare = id.replace(/^key:/, "");
    return names.get(bare) ?? id;
  };
}
