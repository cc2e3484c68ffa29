import { useEffect, useState } from "preact/hooks";
import { api, call, type Schemas } from "../api.ts";
import { json, when } from "../ui/format.ts";
import { useLoad } from "../ui/load.ts";
import { Empty, ErrorNote, Loading } from "../ui/status.tsx";
import type { ScreenProps } from "./screen.ts";

type Status = Schemas["Approval"]["status"];
const STATUSES: Status[] = ["pending", "approved", "denied", "used", "expired"];
const POLL_MS = 5000;

export function Approvals({ ws }: ScreenProps) {
  const [status, setStatus] = useState<Status>("pending");
  const approvals = useLoad(
    async () =>
      (await call(api.GET("/v1/workspaces/{ws}/approvals", { params: { path: { ws }, query: { status, limit: 100 } } }))).approvals,
    [ws, status],
  );
  const [actionError, setActionError] = useState<unknown>(undefined);
  // The queue fills while agents call: poll it.
  useEffect(() => {
    const timer = setInterval(approvals.reload, POLL_MS);
    return () => clearInterval(timer);
  }, [approvals.reload]);

  async function decide(approval: Schemas["Approval"], decision: "approve" | "deny") {
    setActionError(undefined);
    const params = { params: { path: { ws, id: approval.id } } };
    try {
      await call(
        decision === "approve"
          ? api.POST("/v1/workspaces/{ws}/approvals/{id}/approve", params)
          : api.POST("/v1/workspaces/{ws}/approvals/{id}/deny", params),
      );
      approvals.reload();
    } catch (error) {
      setActionError(error);
    }
  }

  return (
    <section aria-labelledby="screen-title">
      <h1 id="screen-title">Approvals</h1>
      <div class="filters">
        <label>
          Status
          <select value={status} onChange={(e) => setStatus(e.currentTarget.value as Status)}>
            {STATUSES.map((s) => (
              <option key={s} value={s}>
                {s}
              </option>
            ))}
          </select>
        </label>
        <button type="button" class="secondary" onClick={approvals.reload}>
          Refresh
        </button>
      </div>
      <ErrorNote error={actionError ?? approvals.error} />
      {approvals.loading && !approvals.data && <Loading what="approvals" />}
      {approvals.data?.length === 0 && <Empty>No {status} approvals.</Empty>}
      {approvals.data?.map((approval) => (
        <article key={approval.id} class="panel" aria-label={`Approval for ${approval.publicName}`}>
          <h2>
            <code>{approval.publicName}</code> <span class="muted">({approval.status})</span>
          </h2>
          <dl class="facts">
            <dt>Reason</dt>
            <dd>
              <code>{approval.reason}</code> ({approval.source})
            </dd>
            {approval.message && (
              <>
                <dt>Message</dt>
                <dd>{approval.message}</dd>
              </>
            )}
            <dt>Requested</dt>
            <dd>{when(approval.createdAt)}</dd>
            <dt>Expires</dt>
            <dd>{when(approval.expiresAt)}</dd>
            <dt>Key</dt>
            <dd>
              <code>{approval.keyId}</code>
            </dd>
            {approval.decidedBy && (
              <>
                <dt>Decided</dt>
                <dd>
                  {approval.decidedBy}, {when(approval.decidedAt)}
                </dd>
              </>
            )}
          </dl>
          <h3>Call as it will run (after the before hook)</h3>
          <pre tabIndex={0} aria-label="Transformed arguments">
            {json(approval.arguments)}
          </pre>
          {approval.status === "pending" && (
            <p>
              <button type="button" onClick={() => decide(approval, "approve")}>
                Approve
              </button>{" "}
              <button type="button" class="danger" onClick={() => decide(approval, "deny")}>
                Deny
              </button>
            </p>
          )}
        </article>
      ))}
    </section>
  );
}
