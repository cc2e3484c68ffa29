import { api, call, type Schemas } from "../api.ts";
import { useActorNames } from "../ui/actors.ts";
import { json, when } from "../ui/format.ts";
import { JsonDiff } from "../ui/JsonDiff.tsx";
import { useLoad } from "../ui/load.ts";
import { useRevisionNames } from "../ui/revisions.ts";
import { ErrorNote, Loading } from "../ui/status.tsx";

/** What a differed shadow row's captured details hold: both verdicts (outcome, value, error). */
interface Comparison {
  active: unknown;
  shadow: unknown;
}

export function comparisonOf(row: Schemas["CallLog"]): Comparison | null {
  const comparison = row.details?.comparison as Partial<Comparison> | undefined;
  return comparison && "active" in comparison && "shadow" in comparison ? (comparison as Comparison) : null;
}

/** One call opened from Logs: its row (a run_code with its inner calls), its stage runs, the shadow comparison. */
export function CallDetail({
  ws,
  requestId,
  actorName,
  onClose,
}: {
  ws: string;
  requestId: string;
  actorName: (actor: string) => string;
  onClose: () => void;
}) {
  const detail = useLoad(
    () => call(api.GET("/v1/workspaces/{ws}/logs/{requestId}", { params: { path: { ws, requestId } } })),
    [ws, requestId],
  );
  const revisionName = useRevisionNames(ws, detail.data?.stages.map((row) => row.toolUid) ?? []);
  const person = useActorNames(ws);
  return (
    <section class="call-detail" aria-label={`Call ${requestId}`}>
      <h2>
        Call <code>{requestId}</code>{" "}
        <button type="button" onClick={onClose}>
          Close
        </button>
      </h2>
      <ErrorNote error={detail.error} />
      {detail.loading && !detail.data && <Loading what="the call" />}
      {detail.data && (
        <>
          <dl class="facts">
            {detail.data.calls.map((row) => (
              <div key={row.id}>
                <dt>
                  {row.kind}
                  {row.callIndex !== null ? ` #${row.callIndex}` : ""} {row.name}
                </dt>
                <dd>
                  {row.outcome}
                  {row.code ? ` (${row.code})` : ""} · {actorName(row.actor)}
                  {row.grantedBy ? ` (granted by ${person(row.grantedBy)})` : ""} · {when(row.createdAt)} · {row.durationMs.toFixed(1)} ms
                  (gateway {row.gatewayMs.toFixed(1)}, hooks {row.hooksMs.toFixed(1)}, upstream {row.upstreamMs.toFixed(1)}) · {row.bytesIn}{" "}
                  B in, {row.bytesOut} B out
                  {row.revisionId ? ` · revision ${revisionName(row.revisionId)}` : ""}
                  {row.shadow ? ` · shadow ${row.shadow}` : ""}
                  {row.item ? ` · ${row.item}` : ""}
                  {row.programSha256
                    ? ` · program ${row.programSha256.slice(0, 12)}… (${row.programBytes} B, ${row.innerCalls} calls)`
                    : ""}
                </dd>
              </div>
            ))}
          </dl>
          <StageRuns rows={detail.data.stages} label="Stage runs of this call" revisionName={revisionName} />
        </>
      )}
    </section>
  );
}

/** Stage runs (active and shadow), each with its payload details when they were captured and the reader may see them. */
export function StageRuns({
  rows,
  label,
  revisionName,
}: {
  rows: Schemas["CallLog"][];
  label: string;
  /** `r7 (rev_…)` for a revision id, from useRevisionNames. */
  revisionName: (revisionId: string | null) => string;
}) {
  if (!rows.length) return <p class="muted">No hook stage ran and nothing was refused before dispatch.</p>;
  return (
    <div class="table-wrap">
      <table aria-label={label}>
        <thead>
          <tr>
            <th scope="col">Time</th>
            <th scope="col">Request id</th>
            <th scope="col">Stage</th>
            <th scope="col">Channel</th>
            <th scope="col">Outcome</th>
            <th scope="col">Duration</th>
            <th scope="col">Revision</th>
            <th scope="col">Shadow differed</th>
          </tr>
        </thead>
        <tbody>
          {rows.map((row) => {
            const comparison = comparisonOf(row);
            const { comparison: _, ...details } = row.details ?? {};
            return (
              <tr key={row.id} class={row.shadowDiffered ? "highlight" : undefined}>
                <td>{when(row.createdAt)}</td>
                <td>
                  <code>{row.requestId}</code>
                  {row.callIndex !== null && <span class="muted"> #{row.callIndex}</span>}
                </td>
                <td>{row.stage}</td>
                <td>{row.channel}</td>
                <td>
                  {row.outcome}
                  {row.code && <span class="error"> {row.code}</span>}
                  {Object.keys(details).length > 0 && (
                    <details>
                      <summary>Payload details</summary>
                      <pre tabIndex={0}>{json(details)}</pre>
                    </details>
                  )}
                  {comparison && (
                    <details open>
                      <summary>Active vs shadow</summary>
                      <JsonDiff before={comparison.active} after={comparison.shadow} label={`Diff of active and shadow for ${row.stage}`} />
                    </details>
                  )}
                </td>
                <td>{row.durationMs.toFixed(1)} ms</td>
                <td>{revisionName(row.revisionId)}</td>
                <td>{row.shadowDiffered === null ? "—" : row.shadowDiffered ? <strong>differed</strong> : "same"}</td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </div>
  );
}
