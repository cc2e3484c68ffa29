import { useEffect, useState } from "preact/hooks";
import { api, call, type Schemas } from "../api.ts";
import { useActorNames } from "../ui/actors.ts";
import { when } from "../ui/format.ts";
import { useLoad } from "../ui/load.ts";
import { Empty, ErrorNote, Loading } from "../ui/status.tsx";
import { CallDetail } from "./CallDetail.tsx";
import type { ScreenProps } from "./screen.ts";

const POLL_MS = 3000;
/** Runs shown, and pages read at most to find them. */
const SHOWN = 100;
const MAX_PAGES = 3;

type RunRow = Schemas["CodeRun"];

/** The workspace's run_code runs: who ran which program (its digest, never its text), how it ended, its inner calls. */
export function CodeRuns({ ws }: ScreenProps) {
  const [outcome, setOutcome] = useState<"" | "ok" | "error">("");
  const [open, setOpen] = useState<string | null>(null);
  const name = useActorNames(ws);
  const runs = useLoad(async () => {
    // A page reads at most the newest 10,000 calls below its cursor (docs/logs.md), so runs among many direct calls
    // may need a few pages to show.
    const found: RunRow[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const query = { limit: SHOWN, ...(cursor ? { cursor } : {}), ...(outcome ? { outcome } : {}) };
      const page = await call(api.GET("/v1/workspaces/{ws}/code-runs", { params: { path: { ws }, query } }));
      if (typeof page === "string") throw new Error("The code runs route answered JSON lines instead of JSON");
      found.push(...page.runs);
      cursor = page.nextCursor ?? undefined;
      pages++;
    } while (cursor && found.length < SHOWN && pages < MAX_PAGES);
    return { runs: found.slice(0, SHOWN), searchedAll: cursor === undefined };
  }, [ws, outcome]);
  useEffect(() => {
    const timer = setInterval(runs.reload, POLL_MS);
    return () => clearInterval(timer);
  }, [runs.reload]);
  return (
    <section aria-labelledby="screen-title">
      <h1 id="screen-title">Code Mode runs</h1>
      <form class="filters" aria-label="Run filters" onSubmit={(e) => e.preventDefault()}>
        <span class="field">
          <label for="runs-outcome">Outcome</label>
          <select id="runs-outcome" value={outcome} onChange={(e) => setOutcome(e.currentTarget.value as typeof outcome)}>
            <option value="">any</option>
            <option>ok</option>
            <option>error</option>
          </select>
        </span>
      </form>
      <ErrorNote error={runs.error} />
      {runs.loading && !runs.data && <Loading what="runs" />}
      {runs.data?.runs.length === 0 && (
        <Empty>{runs.data.searchedAll ? "No run_code runs yet." : "No run_code runs among the newest calls searched."}</Empty>
      )}
      {runs.data && runs.data.runs.length > 0 && (
        <div class="table-wrap">
          <table aria-label="Code Mode runs">
            <thead>
              <tr>
                <th scope="col">Time</th>
                <th scope="col">Actor</th>
                <th scope="col">Outcome</th>
                <th scope="col">Inner calls</th>
                <th scope="col">Duration</th>
                <th scope="col">Program</th>
                <th scope="col">Request id</th>
              </tr>
            </thead>
            <tbody>
              {runs.data.runs.map((run) => (
                <tr key={run.id}>
                  <td>{when(run.createdAt)}</td>
                  <td>{name(run.actor)}</td>
                  <td>
                    {run.outcome}
                    {run.code && <span class="error"> {run.code}</span>}
                  </td>
                  <td>{run.innerCalls}</td>
                  <td>{run.durationMs.toFixed(1)} ms</td>
                  <td>{run.programSha256 ? <code title={run.programSha256}>{run.programSha256.slice(0, 12)}…</code> : "—"}</td>
                  <td>
                    <button type="button" class="link" aria-label={`Open ${run.requestId}`} onClick={() => setOpen(run.requestId)}>
                      <code>{run.requestId}</code>
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {open && <CallDetail ws={ws} requestId={open} actorName={name} onClose={() => setOpen(null)} />}
    </section>
  );
}
