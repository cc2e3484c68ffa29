import { api, call } from "../api.ts";
import { useLoad } from "./load.ts";

/** The newest revisions read per tool: the ones logs and approvals refer to are recent. */
const REVISIONS_READ = 100;

/**
 * Revisions by their per-tool numbers (`r7`) where records carry ids: one read of each tool's newest
 * revisions. An id not among them (older, or a tool reset since) reads as recorded, as it does while
 * the numbers load or when they are refused.
 */
export function useRevisionNames(
  ws: string,
  toolUids: readonly string[],
  /** Bumped by a page that made revisions since, so they are read again. */
  generation = 0,
): (revisionId: string | null | undefined) => string {
  const tools = [...new Set(toolUids)].sort();
  const numbers = useLoad(async () => {
    const pages = await Promise.all(
      tools.map((toolUid) =>
        call(
          api.GET("/v1/workspaces/{ws}/tools/{toolUid}/hook/revisions", {
            params: { path: { ws, toolUid }, query: { limit: REVISIONS_READ } },
          }),
        ).catch(() => ({ revisions: [] })),
      ),
    );
    return new Map(pages.flatMap((page) => page.revisions.map((revision) => [revision.revisionId, revision.number] as const)));
  }, [ws, tools.join(","), generation]);
  return (revisionId) => {
    if (!revisionId) return "—";
    const number = numbers.data?.get(revisionId);
    return number === undefined ? revisionId : `r${number} (${revisionId})`;
  };
}
