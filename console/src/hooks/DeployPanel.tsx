// Revisions and the two deployment slots: build a revision from the saved
// draft, deploy it to shadow, promote it, roll active back to an earlier
// compatible revision, or empty a slot. Every step shows the change first.
import type { HookTool } from "./tool.ts";
import { useState } from "preact/hooks";
import { api, call, type Schemas } from "../api.ts";
import { useLoad } from "../ui/load.ts";
import { Empty, Loading } from "../ui/status.tsx";
import { ConfirmDialog, type ConfirmRequest } from "../ui/ConfirmDialog.tsx";
import { hookErrorMessage } from "./errors.ts";
import { numberLabels } from "./labels.ts";

type Slot = "active" | "shadow";
type Revision = Schemas["HookRevision"];
type Pointer = Schemas["HookDeploymentPointer"];

interface DeployPanelProps {
  ws: string;
  tool: HookTool;
  /** The saved draft's version, which a new revision is built from. */
  draftVersionId: string | null;
  /** Its number (v3), when known. */
  draftVersionLabel: string | undefined;
  dirty: boolean;
  /** Changes when something elsewhere in the tab may have changed revisions or deployments. */
  generation: number;
  /** A person's or key's name for an actor id. */
  name: (id: string | null | undefined) => string;
  /** A revision or a deployment changed here: the other panels (History marks live and shadow) re-read. */
  onChanged: () => void;
}

const when = (iso: string) => new Date(iso).toLocaleString();
type Labels = ReturnType<typeof numberLabels>;

function describeRevision(revision: Revision, labels: Labels): string {
  return `revision ${labels.revision(revision.revisionId)} (from version ${labels.version(revision.versionId)}, built ${when(revision.createdAt)})`;
}

function describePointer(pointer: Pointer, revisions: Revision[], labels: Labels): string {
  if (!pointer) return "nothing (no hook runs)";
  const revision = revisions.find((r) => r.revisionId === pointer.revisionId);
  return revision ? describeRevision(revision, labels) : `revision ${labels.revision(pointer.revisionId)}`;
}

export function DeployPanel({ ws, tool, draftVersionId, draftVersionLabel, dirty, generation, name, onChanged }: DeployPanelProps) {
  const params = { path: { ws, toolUid: tool.uid } };
  const [changes, setChanges] = useState(0);
  const data = useLoad(async () => {
    const [deployments, revisions, versions] = await Promise.all([
      call(api.GET("/v1/workspaces/{ws}/tools/{toolUid}/hook/deployments", { params })),
      call(api.GET("/v1/workspaces/{ws}/tools/{toolUid}/hook/revisions", { params: { ...params, query: { limit: 50 } } })),
      call(api.GET("/v1/workspaces/{ws}/tools/{toolUid}/hook/versions", { params: { ...params, query: { limit: 100 } } })),
    ]);
    return { deployments, revisions: revisions.revisions, labels: numberLabels(revisions.revisions, versions.versions) };
  }, [ws, tool.uid, generation, changes]);
  const [error, setError] = useState<unknown>();
  const [notice, setNotice] = useState<string>();
  const [confirming, setConfirming] = useState<ConfirmRequest>();
  const [creating, setCreating] = useState(false);

  const act = async (what: () => Promise<string>) => {
    setError(undefined);
    setNotice(undefined);
    try {
      setNotice(await what());
      onChanged();
    } catch (failure) {
      setError(failure);
    } finally {
      setChanges((n) => n + 1);
    }
  };

  const createRevision = () =>
    act(async () => {
      setCreating(true);
      try {
        const created = await call(
          api.POST("/v1/workspaces/{ws}/tools/{toolUid}/hook/revisions", { params, body: { versionId: draftVersionId! } }),
        );
        return `Revision r${created.number} (${created.revisionId}) built from version ${draftVersionLabel ?? created.versionId} (${created.compiledBytes.toLocaleString()} bytes, stages ${created.stages.join(" and ")}).`;
      } finally {
        setCreating(false);
      }
    });

  if (!data.data)
    return data.error ? (
      <p class="error" role="alert">
        {hookErrorMessage(data.error)}
      </p>
    ) : (
      <Loading what="deployments" />
    );
  const { deployments, revisions, labels } = data.data;
  const { active, shadow } = deployments;
  const activeRevision = revisions.find((r) => r.revisionId === active?.revisionId);

  const ask = (slot: Slot, revision: Revision | null, action: string) => {
    const current = slot === "active" ? active : shadow;
    const target = revision ? describeRevision(revision, labels) : "nothing";
    setConfirming({
      title: `${action}?`,
      confirmLabel: action,
      danger: slot === "active",
      body: (
        <>
          <p>
            The <strong>{slot}</strong> slot of {tool.publicName} changes:
          </p>
          <dl class="change">
            <dt>Now</dt>
            <dd>{describePointer(current, revisions, labels)}</dd>
            <dt>After</dt>
            <dd>{target}</dd>
          </dl>
          <p>
            {slot === "active"
              ? revision
                ? "Every live call of this tool runs this revision's hook from now on."
                : "Live calls of this tool run without a hook from now on."
              : revision
                ? "The shadow runs after each live call on the same inputs; it never changes what clients get."
                : "Shadow runs stop."}
          </p>
        </>
      ),
      run: () =>
        act(async () => {
          if (revision) {
            const done = await call(
              api.PUT("/v1/workspaces/{ws}/tools/{toolUid}/hook/deployments/{slot}", {
                params: { path: { ...params.path, slot } },
                body: { revisionId: revision.revisionId },
              }),
            );
            return `${slot} is now revision ${labels.revision(revision.revisionId)} (${done.event.action}).`;
          }
          await call(
            api.DELETE("/v1/workspaces/{ws}/tools/{toolUid}/hook/deployments/{slot}", { params: { path: { ...params.path, slot } } }),
          );
          return `${slot} emptied.`;
        }),
    });
  };

  return (
    <section aria-labelledby="deploy-title" class="deploy">
      <h3 id="deploy-title">Deploy</h3>
      <div class="slots side-by-side">
        {(["active", "shadow"] as const).map((slot) => {
          const pointer = slot === "active" ? active : shadow;
          return (
            <section class="panel slot" key={slot} aria-label={`${slot} slot`}>
              <h4>{slot === "active" ? "Active" : "Shadow"}</h4>
              {pointer ? (
                <p data-testid={`${slot}-revision`}>
                  Revision <strong>{labels.revision(pointer.revisionId)}</strong> <code class="muted">{pointer.revisionId}</code> (from
                  version {labels.version(pointer.versionId)}), stages {pointer.stages.join(" and ")}; deployed by{" "}
                  {name(pointer.deployedBy)} at {when(pointer.deployedAt)}
                  {pointer.definitionHash !== tool.definitionHash && (
                    <strong class="error"> · built for an earlier definition: calls fail closed</strong>
                  )}
                </p>
              ) : (
                <Empty>Nothing deployed.</Empty>
              )}
              {slot === "shadow" && shadow && shadow.revisionId !== active?.revisionId && (
                <button
                  type="button"
                  onClick={() =>
                    ask("active", revisions.find((r) => r.revisionId === shadow.revisionId) ?? null, "Promote shadow to active")
                  }
                >
                  Promote shadow to active
                </button>
              )}
              {pointer && (
                <button type="button" class="secondary" onClick={() => ask(slot, null, `Remove ${slot}`)}>
                  Remove {slot}
                </button>
              )}
            </section>
          );
        })}
      </div>

      <div class="actions">
        <button type="button" onClick={createRevision} disabled={creating || !draftVersionId}>
          {creating ? "Building…" : `Create revision from saved version ${draftVersionLabel ?? draftVersionId?.slice(0, 12) ?? "—"}`}
        </button>
        {dirty && <span class="muted">Unsaved changes are not part of a revision.</span>}
      </div>
      {notice && (
        <p class="ok" role="status">
          {notice}
        </p>
      )}
      {error !== undefined && (
        <p class="error" role="alert">
          {hookErrorMessage(error)}
        </p>
      )}

      <h4>Revisions</h4>
      {revisions.length === 0 ? (
        <Empty>No revisions yet: save a draft, test each stage, then create one.</Empty>
      ) : (
        <div class="table-wrap">
          <table class="revisions">
            <thead>
              <tr>
                <th scope="col">Revision</th>
                <th scope="col">Version</th>
                <th scope="col">Built</th>
                <th scope="col">By</th>
                <th scope="col">Stages</th>
                <th scope="col">Where</th>
                <th scope="col">Actions</th>
              </tr>
            </thead>
            <tbody>
              {revisions.map((revision) => {
                const compatible = revision.definitionHash === tool.definitionHash;
                const isActive = revision.revisionId === active?.revisionId;
                const isShadow = revision.revisionId === shadow?.revisionId;
                const older = activeRevision ? revision.createdAt < activeRevision.createdAt : false;
                return (
                  <tr key={revision.revisionId} data-revision={revision.revisionId}>
                    <td>
                      <strong>r{revision.number}</strong>
                    </td>
                    <td>{labels.version(revision.versionId)}</td>
                    <td>{when(revision.createdAt)}</td>
                    <td>
                      {name(revision.createdBy)} ({revision.channel})
                    </td>
                    <td>{revision.stages.join(", ")}</td>
                    <td>
                      {[isActive && "active (live)", isShadow && "shadow"].filter(Boolean).join(", ") || "—"}
                      {!compatible && <span class="error"> · earlier definition</span>}
                    </td>
                    <td class="row-actions">
                      {!isShadow && (
                        <button
                          type="button"
                          class="secondary"
                          disabled={!compatible}
                          onClick={() => ask("shadow", revision, "Deploy to shadow")}
                        >
                          Deploy to shadow
                        </button>
                      )}
                      {!isActive && (
                        <button
                          type="button"
                          class="secondary"
                          disabled={!compatible}
                          onClick={() => ask("active", revision, older ? "Roll back active" : "Deploy to active")}
                        >
                          {older ? "Roll back to this" : "Deploy to active"}
                        </button>
                      )}
                    </td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        </div>
      )}

      <h4>Deployment changes</h4>
      {deployments.events.length === 0 ? (
        <Empty>No deployment changes yet.</Empty>
      ) : (
        <div class="table-wrap">
          <table class="deploy-events">
            <thead>
              <tr>
                <th scope="col">When</th>
                <th scope="col">Slot</th>
                <th scope="col">Action</th>
                <th scope="col">From</th>
                <th scope="col">To</th>
                <th scope="col">By</th>
              </tr>
            </thead>
            <tbody>
              {deployments.events.map((event) => (
                <tr key={event.eventId}>
                  <td>{when(event.createdAt)}</td>
                  <td>{event.slot}</td>
                  <td>{event.action}</td>
                  <td>{labels.revision(event.previousRevisionId)}</td>
                  <td>{labels.revision(event.revisionId)}</td>
                  <td>
                    {name(event.actorId)} ({event.channel})
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <ConfirmDialog request={confirming} onClose={() => setConfirming(undefined)} />
    </section>
  );
}
