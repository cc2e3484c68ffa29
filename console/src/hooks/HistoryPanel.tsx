// Draft history: every saved version with who, from where, when and why; the
// diff of a version against its predecessor; restore; export; and reset of the
// whole hook behind a typed confirmation, with the reset events it leaves.
import type { HookTool } from "./tool.ts";
import { useState } from "preact/hooks";
import { api, call, type Schemas } from "../api.ts";
import { useLoad } from "../ui/load.ts";
import { Empty, Loading } from "../ui/status.tsx";
import { ConfirmDialog, type ConfirmRequest } from "../ui/ConfirmDialog.tsx";
import { DiffEditor } from "./DiffEditor.tsx";
import { hookErrorMessage } from "./errors.ts";
import { numberLabels, short } from "./labels.ts";
import type { Monaco } from "./monaco.ts";

type Version = Schemas["HookVersionSummary"];
type Diff = Schemas["HookVersionDiff"];

interface HistoryPanelProps {
  ws: string;
  tool: HookTool;
  monaco: Monaco;
  /** The draft's current version and etag, for marking it and for restoring against. */
  draft: { versionId: string | null; etag: string } | undefined;
  dirty: boolean;
  generation: number;
  /** A person's or key's name for an actor id. */
  name: (id: string | null | undefined) => string;
  /** The draft changed here (restore, reset): the editor reloads it. */
  onDraftChanged: () => void;
}

const when = (iso: string) => new Date(iso).toLocaleString();

export function HistoryPanel({ ws, tool, monaco, draft, dirty, generation, name, onDraftChanged }: HistoryPanelProps) {
  const params = { path: { ws, toolUid: tool.uid } };
  const [changes, setChanges] = useState(0);
  const [more, setMore] = useState<{ versions: Version[]; nextCursor: string | null }>();
  const first = useLoad(async () => {
    setMore(undefined);
    const [page, resets, revisions, deployments] = await Promise.all([
      call(api.GET("/v1/workspaces/{ws}/tools/{toolUid}/hook/versions", { params: { ...params, query: { limit: 50 } } })),
      call(api.GET("/v1/workspaces/{ws}/tools/{toolUid}/hook/resets", { params })),
      call(api.GET("/v1/workspaces/{ws}/tools/{toolUid}/hook/revisions", { params: { ...params, query: { limit: 100 } } })),
      call(api.GET("/v1/workspaces/{ws}/tools/{toolUid}/hook/deployments", { params })),
    ]);
    return { page, resets, revisions: revisions.revisions, active: deployments.active?.revisionId, shadow: deployments.shadow?.revisionId };
  }, [ws, tool.uid, generation, changes]);
  const [diff, setDiff] = useState<{ version: Version; diff: Diff } | { version: Version; error: unknown }>();
  const [error, setError] = useState<unknown>();
  const [notice, setNotice] = useState<string>();
  const [confirming, setConfirming] = useState<ConfirmRequest>();

  if (!first.data)
    return first.error ? (
      <p class="error" role="alert">
        {hookErrorMessage(first.error)}
      </p>
    ) : (
      <Loading what="history" />
    );
  const versions = [...first.data.page.versions, ...(more?.versions ?? [])];
  const nextCursor = more ? more.nextCursor : first.data.page.nextCursor;
  const resets = first.data.resets.resets;
  const labels = numberLabels(first.data.revisions, versions);
  const { active, shadow } = first.data;
  /** The revisions built from each version, with where each is deployed. */
  const revisionsOf = (versionId: string) => first.data!.revisions.filter((revision) => revision.versionId === versionId);

  const loadMore = async () => {
    if (!nextCursor) return;
    try {
      const page = await call(
        api.GET("/v1/workspaces/{ws}/tools/{toolUid}/hook/versions", { params: { ...params, query: { limit: 50, cursor: nextCursor } } }),
      );
      setMore({ versions: [...(more?.versions ?? []), ...page.versions], nextCursor: page.nextCursor });
    } catch (failure) {
      setError(failure);
    }
  };

  const showDiff = async (version: Version) => {
    try {
      const found = await call(
        api.GET("/v1/workspaces/{ws}/tools/{toolUid}/hook/versions/{versionId}/diff", {
          params: { path: { ...params.path, versionId: version.versionId } },
        }),
      );
      setDiff({ version, diff: found });
    } catch (failure) {
      setDiff({ version, error: failure });
    }
  };

  const run = (what: () => Promise<string>) => async () => {
    setError(undefined);
    setNotice(undefined);
    try {
      setNotice(await what());
      onDraftChanged();
    } catch (failure) {
      setError(failure);
    } finally {
      setChanges((n) => n + 1);
    }
  };

  const askRestore = (version: Version) =>
    setConfirming({
      title: `Restore version v${version.number}?`,
      confirmLabel: "Restore",
      body: (
        <>
          <p>
            Its source and config become the draft, saved as a new version attributed to you. The versions after it stay in history; nothing
            deployed changes.
          </p>
          {dirty && <p class="error">Your unsaved changes in the editor will be replaced. Save or copy them first to keep them.</p>}
        </>
      ),
      run: run(async () => {
        const restored = await call(
          api.POST("/v1/workspaces/{ws}/tools/{toolUid}/hook/versions/{versionId}/restore", {
            params: { path: { ...params.path, versionId: version.versionId }, header: { "if-match": draft?.etag ?? "" } },
            body: {},
          }),
        );
        return `Restored version v${version.number} as a new version (${short(restored.versionId)}).`;
      }),
    });

  const askReset = () =>
    setConfirming({
      title: `Reset the hook of ${tool.publicName}?`,
      confirmLabel: "Reset hook",
      danger: true,
      typeToConfirm: tool.publicName,
      body: (
        <p>
          This deletes the draft, all {versions.length}
          {nextCursor ? "+" : ""} versions, every test run and revision, empties both deployment slots (live calls run without a hook) and
          removes the compiled bundles. Only a reset event remains. Export first to keep the history.
        </p>
      ),
      run: run(async () => {
        const { reset } = await call(api.DELETE("/v1/workspaces/{ws}/tools/{toolUid}/hook", { params }));
        setDiff(undefined);
        return `Hook reset: ${reset.versionsRemoved} versions, ${reset.revisionsRemoved} revisions and ${reset.bundlesRemoved} bundles removed.`;
      }),
    });

  const exportHistory = async () => {
    setError(undefined);
    try {
      const exported = await call(api.GET("/v1/workspaces/{ws}/tools/{toolUid}/hook/export", { params }));
      const url = URL.createObjectURL(new Blob([`${JSON.stringify(exported, null, 2)}\n`], { type: "application/json" }));
      const link = document.createElement("a");
      link.href = url;
      link.download = `${tool.publicName}.hook-history.json`;
      link.click();
      setTimeout(() => URL.revokeObjectURL(url), 1000);
      setNotice(`Exported ${exported.versions.length} versions.`);
    } catch (failure) {
      setError(failure);
    }
  };

  return (
    <section aria-labelledby="history-title" class="history">
      <h3 id="history-title">History</h3>
      <div class="actions">
        <button type="button" class="secondary" onClick={exportHistory} disabled={versions.length === 0}>
          Export history (JSON)
        </button>
        <button type="button" class="danger" onClick={askReset}>
          Reset hook…
        </button>
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

      {versions.length === 0 ? (
        <Empty>No versions: the hook has no saved draft.</Empty>
      ) : (
        <div class="table-wrap">
          <table class="versions">
            <caption class="muted">Newest first; every save that changed something is a version.</caption>
            <thead>
              <tr>
                <th scope="col">Version</th>
                <th scope="col">Revisions</th>
                <th scope="col">Saved</th>
                <th scope="col">By</th>
                <th scope="col">Channel</th>
                <th scope="col">Note</th>
                <th scope="col">Actions</th>
              </tr>
            </thead>
            <tbody>
              {versions.map((version) => (
                <tr
                  key={version.versionId}
                  data-version={version.versionId}
                  class={diff?.version.versionId === version.versionId ? "highlight" : undefined}
                >
                  <td>
                    <strong>v{version.number}</strong>
                    {version.versionId === draft?.versionId && <strong> (draft)</strong>}
                  </td>
                  <td class="revision-marks">
                    {revisionsOf(version.versionId).map((revision) => (
                      <span key={revision.revisionId}>
                        r{revision.number}
                        {revision.revisionId === active && <strong class="ok"> live</strong>}
                        {revision.revisionId === shadow && <strong> shadow</strong>}{" "}
                      </span>
                    ))}
                  </td>
                  <td>{when(version.createdAt)}</td>
                  <td>
                    {name(version.actorId)} ({version.actorKind})
                  </td>
                  <td>{version.channel}</td>
                  <td>
                    {version.note ?? ""}
                    {version.restoredFrom && <span class="muted"> restored from {labels.version(version.restoredFrom)}</span>}
                  </td>
                  <td class="row-actions">
                    <button
                      type="button"
                      class="secondary"
                      onClick={() => showDiff(version)}
                      aria-label={`Diff version v${version.number} with its predecessor`}
                    >
                      Diff
                    </button>
                    {version.versionId !== draft?.versionId && (
                      <button
                        type="button"
                        class="secondary"
                        onClick={() => askRestore(version)}
                        aria-label={`Restore version v${version.number}`}
                      >
                        Restore
                      </button>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {nextCursor && (
        <button type="button" class="secondary" onClick={loadMore}>
          Load older versions
        </button>
      )}

      {diff && <DiffView monaco={monaco} shown={diff} label={labels.version} onClose={() => setDiff(undefined)} />}

      <h4>Resets</h4>
      {resets.length === 0 ? (
        <Empty>This hook was never reset.</Empty>
      ) : (
        <ul class="resets">
          {resets.map((reset) => (
            <li key={reset.resetId}>
              {when(reset.createdAt)}: reset by {name(reset.actorId)} ({reset.channel}); {reset.versionsRemoved} versions,{" "}
              {reset.revisionsRemoved} revisions and {reset.bundlesRemoved} bundles removed
            </li>
          ))}
        </ul>
      )}
      <ConfirmDialog request={confirming} onClose={() => setConfirming(undefined)} />
    </section>
  );
}

function DiffView({
  monaco,
  shown,
  label,
  onClose,
}: {
  monaco: Monaco;
  shown: { version: Version; diff: Diff } | { version: Version; error: unknown };
  label: (versionId: string) => string;
  onClose: () => void;
}) {
  const title = `Version v${shown.version.number} against ${"diff" in shown ? (shown.diff.previousVersionId ? label(shown.diff.previousVersionId) : "empty (first version)") : "its predecessor"}`;
  return (
    <section class="panel version-diff" aria-labelledby="version-diff-title">
      <h4 id="version-diff-title">{title}</h4>
      {"error" in shown ? (
        <p class="error" role="alert">
          {hookErrorMessage(shown.error)}
        </p>
      ) : shown.diff.tooLarge && shown.diff.texts ? (
        <>
          <p class="muted">The versions differ in more than 400 lines; compared here in the browser.</p>
          <DiffEditor
            monaco={monaco}
            original={shown.diff.texts.previous.source}
            modified={shown.diff.texts.current.source}
            language="typescript"
            label="Source diff"
          />
          <DiffEditor
            monaco={monaco}
            original={shown.diff.texts.previous.config}
            modified={shown.diff.texts.current.config}
            language="json"
            label="Config diff"
            height="10rem"
          />
        </>
      ) : (
        <>
          <h5>Source</h5>
          <UnifiedDiff text={shown.diff.source ?? ""} label="Source diff" />
          <h5>Config</h5>
          <UnifiedDiff text={shown.diff.config ?? ""} label="Config diff" />
        </>
      )}
      <button type="button" class="secondary" onClick={onClose}>
        Close diff
      </button>
    </section>
  );
}

/** A unified diff with added and removed lines marked (by sign and colour, not colour alone). */
function UnifiedDiff({ text, label }: { text: string; label: string }) {
  // jsdiff's "Index:" and "=====" header lines say nothing the heading does not.
  const lines = text
    .split("\n")
    .filter((line, index, all) => !(index === all.length - 1 && line === "") && !line.startsWith("Index: ") && !/^=+$/.test(line));
  const changed = lines.some((line) => /^[+-](?![+-]{2})/.test(line));
  if (!changed) return <p class="empty">No changes.</p>;
  return (
    <pre class="unified-diff" aria-label={label}>
      {lines.map((line, index) => {
        const kind =
          line.startsWith("+++") || line.startsWith("---")
            ? "meta"
            : line.startsWith("+")
              ? "added"
              : line.startsWith("-")
                ? "removed"
                : line.startsWith("@@")
                  ? "hunk"
                  : "context";
        return (
          <span key={index} class={`diff-${kind}`}>
            {line}
            {"\n"}
          </span>
        );
      })}
    </pre>
  );
}
