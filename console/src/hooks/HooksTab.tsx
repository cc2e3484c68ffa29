// The Hooks tab for one tool (issue 15, item 4): editor, test console, deploy
// and history. Loaded on demand by the Tools screen, so it and Monaco stay out
// of the console's initial JavaScript; Monaco itself is one more lazy chunk.
import type { HookTool } from "./tool.ts";
import { useEffect, useRef, useState } from "preact/hooks";
import { api, call } from "../api.ts";
import { useLeaveGuard } from "../router.ts";
import { StageRuns } from "../screens/CallDetail.tsx";
import { useActorNames } from "../ui/actors.ts";
import { useLoad } from "../ui/load.ts";
import { useRevisionNames } from "../ui/revisions.ts";
import { Loading } from "../ui/status.tsx";
import { useCompile } from "./compile.ts";
import { DeployPanel } from "./DeployPanel.tsx";
import { DraftEditor } from "./DraftEditor.tsx";
import { useHookDraft } from "./draft.ts";
import { hookErrorMessage } from "./errors.ts";
import { HistoryPanel } from "./HistoryPanel.tsx";
import { useMonaco } from "./loadMonaco.ts";
import { TestConsole } from "./TestConsole.tsx";
import "./hooks.css";

export interface HooksTabProps {
  workspaceId: string;
  /** The tool's public name, e.g. `demo__search_release_notes`. */
  toolName: string;
}

export default function HooksTab({ workspaceId, toolName }: HooksTabProps) {
  const tool = useLoad(async () => {
    const { tools } = await call(
      api.GET("/v1/workspaces/{ws}/tools", { params: { path: { ws: workspaceId }, query: { publicName: toolName } } }),
    );
    const found = tools[0];
    if (!found) throw new Error(`There is no tool named ${toolName} in this workspace`);
    return found;
  }, [workspaceId, toolName]);
  const monaco = useMonaco();

  return (
    <section aria-labelledby="hooks-tab-title" class="hooks-tab">
      <h2 id="hooks-tab-title">Hook for {toolName}</h2>
      {tool.error !== undefined && !tool.data ? (
        <p class="error" role="alert">
          {hookErrorMessage(tool.error)}
        </p>
      ) : monaco.error !== undefined ? (
        <p class="error" role="alert">
          The editor could not be loaded: {hookErrorMessage(monaco.error)}. Reload the page to try again.
        </p>
      ) : !tool.data || !monaco.module ? (
        <Loading what={tool.data ? "the editor" : "the tool"} />
      ) : (
        <HookWorkspace ws={workspaceId} tool={tool.data} monaco={monaco.module} />
      )}
    </section>
  );
}

const PANELS = [
  { id: "test", label: "Test" },
  { id: "deploy", label: "Deploy" },
  { id: "history", label: "History" },
  { id: "logs", label: "Logs" },
] as const;
type Panel = (typeof PANELS)[number]["id"];

function HookWorkspace({ ws, tool, monaco }: { ws: string; tool: HookTool; monaco: typeof import("./monaco.ts") }) {
  // Bumped whenever this tab changed hook state, so the panels re-read it.
  const [generation, setGeneration] = useState(0);
  const bump = () => setGeneration((n) => n + 1);
  const compile = useCompile(ws, tool.uid);
  const draft = useHookDraft(ws, tool, (stored) => {
    bump();
    void compile.compile(stored);
  });
  const [panel, setPanel] = useState<Panel>("test");
  const [note, setNote] = useState("");
  const declarations = useDeclarations(ws, tool.uid, monaco);
  const name = useActorNames(ws);
  const server = draft.state.server;
  const versionLabel = useVersionLabel(ws, tool.uid, server?.versionId ?? null);

  // Unsaved edits are guarded: another tab of the tool, another screen, a reload or a closed tab asks first
  // (and the text is kept in this tab's storage meanwhile).
  useLeaveGuard(
    draft.state.dirty ? "You have unsaved changes to this hook. Leave anyway? (They stay in this tab until you discard them.)" : null,
  );
  const save = async () => {
    await draft.save(note);
    setNote("");
  };
  // Ctrl+S (⌘S) saves wherever focus is in the console, the editors included.
  const latestSave = useRef(save);
  latestSave.current = save;
  useEffect(() => {
    const onKey = (event: KeyboardEvent) => {
      if ((event.ctrlKey || event.metaKey) && !event.altKey && event.key.toLowerCase() === "s") {
        event.preventDefault();
        void latestSave.current();
      }
    };
    addEventListener("keydown", onKey, { capture: true });
    return () => removeEventListener("keydown", onKey, { capture: true });
  }, []);

  if (draft.state.loadError !== undefined && !server)
    return (
      <p class="error" role="alert">
        {hookErrorMessage(draft.state.loadError)}
      </p>
    );
  if (!server) return <Loading what="the draft" />;

  return (
    <>
      {declarations.error !== undefined && (
        <p class="error" role="alert">
          Type declarations for this tool are not available, so the editor cannot type-check it: {hookErrorMessage(declarations.error)}
        </p>
      )}
      {tool.status !== "active" && (
        <p class="highlight" role="status">
          This tool is {tool.status === "review_required" ? "waiting for its changed definition to be reviewed" : "removed upstream"}.
        </p>
      )}
      <DraftEditor
        monaco={monaco.monaco}
        tool={tool}
        draft={draft}
        compile={compile}
        versionLabel={versionLabel}
        note={note}
        onNote={setNote}
        onSave={() => void save()}
      />
      <div role="tablist" aria-label="Hook panels" class="hook-panels">
        {PANELS.map((item) => (
          <button
            key={item.id}
            type="button"
            role="tab"
            id={`hook-tab-${item.id}`}
            aria-selected={panel === item.id}
            aria-controls={`hook-panel-${item.id}`}
            tabIndex={panel === item.id ? 0 : -1}
            class={panel === item.id ? "tab selected" : "tab"}
            onClick={() => setPanel(item.id)}
            onKeyDown={(event) => {
              const step = event.key === "ArrowRight" ? 1 : event.key === "ArrowLeft" ? -1 : 0;
              if (!step) return;
              const index = (PANELS.findIndex((p) => p.id === panel) + step + PANELS.length) % PANELS.length;
              setPanel(PANELS[index]!.id);
              document.getElementById(`hook-tab-${PANELS[index]!.id}`)?.focus();
            }}
          >
            {item.label}
          </button>
        ))}
      </div>
      {/* Every panel stays mounted (hidden when not selected), so test inputs survive switching panels. */}
      {PANELS.map((item) => (
        <div
          key={item.id}
          role="tabpanel"
          id={`hook-panel-${item.id}`}
          aria-labelledby={`hook-tab-${item.id}`}
          class="panel"
          hidden={panel !== item.id}
        >
          {item.id === "test" && (
            <TestConsole ws={ws} tool={tool} dirty={draft.state.dirty} hasDraft={server.versionId !== null} onTested={bump} />
          )}
          {item.id === "deploy" && (
            <DeployPanel
              ws={ws}
              tool={tool}
              draftVersionId={server.versionId}
              draftVersionLabel={versionLabel}
              dirty={draft.state.dirty}
              generation={generation}
              name={name}
              onChanged={bump}
            />
          )}
          {item.id === "logs" && <HookLogs ws={ws} toolUid={tool.uid} visible={panel === "logs"} generation={generation} />}
          {item.id === "history" && (
            <HistoryPanel
              ws={ws}
              tool={tool}
              monaco={monaco.monaco}
              draft={server}
              dirty={draft.state.dirty}
              generation={generation}
              name={name}
              onDraftChanged={() => {
                bump();
                compile.clear();
                void draft.reload();
              }}
            />
          )}
        </div>
      ))}
    </>
  );
}

/** `v7` for the draft's version: it is always the tool's newest one (a save, a restore or a newer draft makes it so). */
function useVersionLabel(ws: string, toolUid: string, versionId: string | null): string | undefined {
  const newest = useLoad(
    async () =>
      versionId
        ? (
            await call(
              api.GET("/v1/workspaces/{ws}/tools/{toolUid}/hook/versions", { params: { path: { ws, toolUid }, query: { limit: 1 } } }),
            )
          ).versions[0]
        : undefined,
    [ws, toolUid, versionId],
  );
  return newest.data?.versionId === versionId && newest.data ? `v${newest.data.number}` : undefined;
}

const LOGS_POLL_MS = 3000;

/**
 * What the tool's hook did live: every active and shadow stage run and every refusal before dispatch, newest
 * first, with outcome, duration, revision, request id and whether shadow differed; with payload capture on, a row
 * where shadow differed shows the JSON diff of the two verdicts. Polls while shown.
 */
function HookLogs({ ws, toolUid, visible, generation }: { ws: string; toolUid: string; visible: boolean; generation: number }) {
  const [channel, setChannel] = useState<"" | "active" | "shadow">("");
  const revisionName = useRevisionNames(ws, [toolUid], generation);
  const logs = useLoad(async () => {
    if (!visible) return null;
    const page = await call(
      api.GET("/v1/workspaces/{ws}/tools/{toolUid}/hook/logs", {
        params: { path: { ws, toolUid }, query: { limit: 100, ...(channel ? { channel } : {}) } },
      }),
    );
    if (typeof page === "string") throw new Error("The logs route answered JSON lines instead of JSON");
    return page.logs;
  }, [ws, toolUid, channel, visible]);
  useEffect(() => {
    if (!visible) return;
    const timer = setInterval(logs.reload, LOGS_POLL_MS);
    return () => clearInterval(timer);
  }, [logs.reload, visible]);
  return (
    <>
      <span class="field">
        <label for="hook-logs-channel">Channel</label>
        <select id="hook-logs-channel" value={channel} onChange={(e) => setChannel(e.currentTarget.value as typeof channel)}>
          <option value="">active and shadow</option>
          <option value="active">active</option>
          <option value="shadow">shadow</option>
        </select>
      </span>
      {logs.error !== undefined && (
        <p class="error" role="alert">
          {hookErrorMessage(logs.error)}
        </p>
      )}
      {logs.data === undefined && <Loading what="the hook's logs" />}
      {logs.data && <StageRuns rows={logs.data} label="Hook stage runs" revisionName={revisionName} />}
    </>
  );
}

/** Fetches the tool's generated `.d.ts` and hands it to Monaco's TypeScript service. */
function useDeclarations(ws: string, toolUid: string, monaco: { setToolDeclarations: (text: string) => void }): { error: unknown } {
  const [error, setError] = useState<unknown>();
  useEffect(() => {
    let current = true;
    call(api.GET("/v1/workspaces/{ws}/tools/{toolUid}/hook/types", { params: { path: { ws, toolUid } }, parseAs: "text" })).then(
      (text) => current && monaco.setToolDeclarations(text),
      (failure: unknown) => current && setError(failure),
    );
    return () => {
      current = false;
    };
  }, [ws, toolUid, monaco]);
  return { error };
}
