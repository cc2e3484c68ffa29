// One-call approvals: the queue, decided ones with who decided and why, and one
// approval's own page (where the `approveAt` link an agent gets leads). A
// decision is confirmed in a dialog that repeats the exact call and takes an
// optional note.
import { useEffect, useRef, useState } from "preact/hooks";
import { api, call, type Schemas } from "../api.ts";
import { href } from "../router.ts";
import { useActorNames } from "../ui/actors.ts";
import { json, when } from "../ui/format.ts";
import { useLoad } from "../ui/load.ts";
import { useRevisionNames } from "../ui/revisions.ts";
import { Empty, ErrorNote, Loading } from "../ui/status.tsx";
import type { ScreenProps } from "./screen.ts";

type Approval = Schemas["Approval"];
type Status = Approval["status"];
type Decision = "approve" | "deny";
const STATUSES: Status[] = ["pending", "approved", "denied", "used", "expired"];
const POLL_MS = 5000;

/** Tells the nav's pending count that a decision was made here. */
const announceDecision = () => dispatchEvent(new Event("rayrun:approvals-changed"));

export function Approvals({ ws, rest }: ScreenProps) {
  if (rest[0]) return <ApprovalPage ws={ws} id={rest[0]} />;
  return <ApprovalList ws={ws} />;
}

function ApprovalList({ ws }: { ws: string }) {
  const [status, setStatus] = useState<Status>("pending");
  const approvals = useLoad(
    async () =>
      (await call(api.GET("/v1/workspaces/{ws}/approvals", { params: { path: { ws }, query: { status, limit: 100 } } }))).approvals,
    [ws, status],
  );
  const name = useActorNames(ws);
  // The queue fills while agents call: poll it.
  useEffect(() => {
    const timer = setInterval(approvals.reload, POLL_MS);
    return () => clearInterval(timer);
  }, [approvals.reload]);

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
      <ErrorNote error={approvals.error} />
      {approvals.loading && !approvals.data && <Loading what="approvals" />}
      {approvals.data?.length === 0 && <Empty>No {status} approvals.</Empty>}
      {approvals.data?.map((approval) => (
        <article key={approval.id} class="panel" aria-label={`Approval for ${approval.publicName}`}>
          <h2>
            <a href={href(ws, "approvals", approval.id)}>
              <code>{approval.publicName}</code>
            </a>{" "}
            <span class="muted">({approval.status})</span>
          </h2>
          <ApprovalFacts approval={approval} name={name} />
          <h3>Call as it will run (after the before hook)</h3>
          <pre tabIndex={0} aria-label="Transformed arguments">
            {json(approval.arguments)}
          </pre>
          {approval.status === "pending" && (
            <Decide
              approval={approval}
              ws={ws}
              onDecided={() => {
                approvals.reload();
                announceDecision();
              }}
            />
          )}
        </article>
      ))}
    </section>
  );
}

function ApprovalFacts({ approval, name, revision }: { approval: Approval; name: (id: string | null) => string; revision?: string }) {
  return (
    <dl class="facts">
      <dt>Reason</dt>
      <dd>
        <code>{approval.reason}</code> ({approval.source === "hook" ? "asked by the tool's hook" : "required by policy"})
      </dd>
      {approval.message && (
        <>
          <dt>Message</dt>
          <dd>{approval.message}</dd>
        </>
      )}
      <dt>Key</dt>
      <dd>{name(approval.keyId)}</dd>
      {revision !== undefined && (
        <>
          <dt>Hook revision</dt>
          <dd>{revision}</dd>
        </>
      )}
      <dt>Requested</dt>
      <dd>{when(approval.createdAt)}</dd>
      <dt>Expires</dt>
      <dd>{when(approval.expiresAt)}</dd>
      {approval.decidedBy && (
        <>
          <dt>Decided</dt>
          <dd>
            {approval.status === "denied" ? "Denied" : "Approved"} by {name(approval.decidedBy)}, {when(approval.decidedAt)}
          </dd>
          <dt>Note</dt>
          <dd>{approval.decisionNote ?? <span class="muted">none</span>}</dd>
        </>
      )}
      {approval.usedAt && (
        <>
          <dt>Used</dt>
          <dd>{when(approval.usedAt)}: the call ran once</dd>
        </>
      )}
    </dl>
  );
}

/** The page an `approveAt` link opens: that one approval, the exact call and the revision it is bound to. */
function ApprovalPage({ ws, id }: { ws: string; id: string }) {
  const approval = useLoad(() => call(api.GET("/v1/workspaces/{ws}/approvals/{id}", { params: { path: { ws, id } } })), [ws, id]);
  const name = useActorNames(ws);
  const revisionName = useRevisionNames(ws, approval.data ? [approval.data.toolUid] : []);
  const revision =
    approval.data && (approval.data.revisionId ? revisionName(approval.data.revisionId) : "none: the tool has no active hook");

  return (
    <section aria-labelledby="screen-title">
      <p>
        <a href={href(ws, "approvals")}>All approvals</a>
      </p>
      <h1 id="screen-title">
        Approval{approval.data && " for "}
        {approval.data && <code>{approval.data.publicName}</code>}
      </h1>
      <ErrorNote error={approval.error} />
      {!approval.data && !approval.error && <Loading what="the approval" />}
      {approval.data && (
        <>
          <p>
            Status: <strong data-testid="approval-status">{approval.data.status}</strong>
            {approval.data.status === "pending" && " — the agent repeats the identical call once it is approved."}
          </p>
          <ApprovalFacts approval={approval.data} name={name} revision={revision || "…"} />
          <h2>The exact call</h2>
          <p class="muted">
            Tool <code>{approval.data.publicName}</code> with these arguments, as they reach the upstream (after the hook&apos;s before):
          </p>
          <pre tabIndex={0} aria-label="Transformed arguments">
            {json(approval.data.arguments)}
          </pre>
          <p class="muted small">
            Call hash <code>{approval.data.callHash}</code>: only this call, by this key, under this revision, can use the approval.
          </p>
          {approval.data.status === "pending" && (
            <Decide
              approval={approval.data}
              ws={ws}
              onDecided={() => {
                approval.reload();
                announceDecision();
              }}
            />
          )}
        </>
      )}
    </section>
  );
}

/** Approve and Deny, each through a dialog that repeats the call and takes an optional note. */
function Decide({ approval, ws, onDecided }: { approval: Approval; ws: string; onDecided: () => void }) {
  const [deciding, setDeciding] = useState<Decision | null>(null);
  return (
    <>
      <p class="actions">
        <button type="button" onClick={() => setDeciding("approve")}>
          Approve…
        </button>
        <button type="button" class="danger" onClick={() => setDeciding("deny")}>
          Deny…
        </button>
      </p>
      <DecisionDialog
        approval={approval}
        ws={ws}
        decision={deciding}
        onClose={() => setDeciding(null)}
        onDecided={() => {
          setDeciding(null);
          onDecided();
        }}
      />
    </>
  );
}

function DecisionDialog(props: { approval: Approval; ws: string; decision: Decision | null; onClose: () => void; onDecided: () => void }) {
  const { approval, ws, decision, onClose, onDecided } = props;
  const dialog = useRef<HTMLDialogElement>(null);
  const [note, setNote] = useState("");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(undefined);

  useEffect(() => {
    const element = dialog.current!;
    if (decision && !element.open) {
      setNote("");
      setError(undefined);
      element.showModal();
    }
    if (!decision && element.open) element.close();
  }, [decision]);

  const submit = async (event: Event) => {
    event.preventDefault();
    if (!decision) return;
    setBusy(true);
    setError(undefined);
    const params = { params: { path: { ws, id: approval.id } }, body: note.trim() ? { note: note.trim() } : {} };
    try {
      await call(
        decision === "approve"
          ? api.POST("/v1/workspaces/{ws}/approvals/{id}/approve", params)
          : api.POST("/v1/workspaces/{ws}/approvals/{id}/deny", params),
      );
      onDecided();
    } catch (failure) {
      setError(failure);
    } finally {
      setBusy(false);
    }
  };

  return (
    <dialog ref={dialog} class="confirm" aria-labelledby={`decide-${approval.id}`} onClose={onClose}>
      {decision && (
        <form method="dialog" onSubmit={submit}>
          <h3 id={`decide-${approval.id}`}>
            {decision === "approve" ? "Approve" : "Deny"} this call to <code>{approval.publicName}</code>?
          </h3>
          <p>
            {decision === "approve"
              ? "The agent's identical call then runs once, with these arguments:"
              : "The agent's call is refused; asking again makes a new request. The arguments were:"}
          </p>
          <pre aria-label="The call being decided">{json(approval.arguments)}</pre>
          <label class="block">
            Note (optional, kept with the decision)
            <textarea rows={3} maxLength={1000} value={note} onInput={(e) => setNote(e.currentTarget.value)} />
          </label>
          <ErrorNote error={error} />
          <div class="actions">
            <button type="submit" class={decision === "deny" ? "danger" : undefined} disabled={busy}>
              {busy ? "Working…" : decision === "approve" ? "Approve the call" : "Deny the call"}
            </button>
            <button type="button" class="secondary" onClick={onClose} disabled={busy}>
              Cancel
            </button>
          </div>
        </form>
      )}
    </dialog>
  );
}
