// The draft: TypeScript source (type-checked as you type against the tool's
// generated declarations, and its module shape checked in the compiler's words),
// JSON config, save with the etag, the conflict view when someone saved first,
// and one status line derived from every check of the text now in the editors.
import { useMemo, useState } from "preact/hooks";
import { ApiRequestError } from "../api.ts";
import { ConfirmDialog, type ConfirmRequest } from "../ui/ConfirmDialog.tsx";
import { when } from "../ui/format.ts";
import { CodeEditor } from "./CodeEditor.tsx";
import { compiledFor, type CompileState } from "./compile.ts";
import { DiffEditor } from "./DiffEditor.tsx";
import type { DraftText, HookDraftControls } from "./draft.ts";
import { hookErrorMessage } from "./errors.ts";
import { pretty } from "./json.ts";
import type { Problem } from "./problem.ts";
import type { Monaco } from "./monaco.ts";
import { checkHookShape } from "./shape.ts";
import { TEMPLATES, templateSource, type TemplateId } from "./templates.ts";
import type { HookTool } from "./tool.ts";

interface DraftEditorProps {
  monaco: Monaco;
  tool: HookTool;
  draft: HookDraftControls;
  compile: { state: CompileState; compile: (text: DraftText) => Promise<void> };
  /** The saved draft's version number (v3), when known. */
  versionLabel: string | undefined;
  note: string;
  onNote: (note: string) => void;
  onSave: () => void;
}

const CONFIG_ERROR_CODES = new Set(["config_too_large", "invalid_request"]);

export function DraftEditor({ monaco, tool, draft, compile, versionLabel, note, onNote, onSave }: DraftEditorProps) {
  const { state } = draft;
  const [typeProblems, setTypeProblems] = useState<Problem[]>([]);
  const [template, setTemplate] = useState<TemplateId>("skeleton");
  const [confirming, setConfirming] = useState<ConfirmRequest>();
  const shapeProblems = useMemo(() => checkHookShape(state.text.source), [state.text.source]);
  // The server's verdict counts only for the text it compiled: an edit clears it, markers included.
  const current = compiledFor(compile.state, state.text) ? compile.state : ({ status: "idle" } as const);
  const compileProblems = current.status === "failed" ? current.diagnostics : [];
  const compileMarkers = useMemo(() => ({ owner: "rayrun-compile", problems: compileProblems }), [compile.state, state.text]);
  const shapeMarkers = useMemo(() => ({ owner: "rayrun-shape", problems: shapeProblems }), [shapeProblems]);
  const typeErrors = typeProblems.filter((problem) => problem.source === "typescript");
  const problems = [...shapeProblems, ...typeErrors, ...compileProblems];
  // A config the API refused (too large, too deep) is shown beside the config editor.
  const configServerError =
    state.saveError instanceof ApiRequestError &&
    CONFIG_ERROR_CODES.has(state.saveError.code) &&
    /config/i.test(`${state.saveError.message} ${JSON.stringify(state.saveError.details ?? {})}`)
      ? state.saveError
      : undefined;

  const askReload = () => {
    if (!state.dirty) return void draft.reload();
    setConfirming({
      title: "Discard your unsaved changes?",
      confirmLabel: "Discard and reload",
      danger: true,
      body: <p>The editors get the saved draft back; what you typed since it was saved is lost.</p>,
      run: () => draft.reload(),
    });
  };
  const applyTemplate = () => {
    const put = async () => draft.replace({ source: templateSource(tool, template) });
    if (!state.dirty && state.server?.versionId === null) return void put();
    setConfirming({
      title: "Replace the source with the template?",
      confirmLabel: "Use the template",
      body: <p>The source editor gets the template; your current text is replaced (the saved draft is not touched until you save).</p>,
      run: put,
    });
  };

  return (
    <section class="panel hook-draft" aria-labelledby="hook-draft-title">
      <h3 id="hook-draft-title">Draft</h3>
      <DraftStatus state={state} compile={current} problems={problems.length} versionLabel={versionLabel} />
      {state.restored && (
        <div class="notice warn" role="alert">
          <p>
            Restored your unsaved text from {when(state.restored.savedAt)} (kept in this tab until you save or discard it).
            {state.restored.newerOnServer && " Someone saved a newer draft since: saving shows both side by side."}
          </p>
          <p class="actions">
            <button type="button" class="secondary" onClick={draft.dismissRestored}>
              Keep editing it
            </button>
            <button type="button" class="danger" onClick={() => void draft.reload()}>
              Discard it and load the saved draft
            </button>
          </p>
        </div>
      )}

      <div class="actions">
        <label>
          Start from a template
          <select value={template} onChange={(e) => setTemplate(e.currentTarget.value as TemplateId)}>
            {TEMPLATES.map((t) => (
              <option key={t.id} value={t.id}>
                {t.label}
              </option>
            ))}
          </select>
        </label>
        <button type="button" class="secondary" onClick={applyTemplate}>
          Use template
        </button>
      </div>
      <p class="muted small">
        Keyboard: Ctrl+S (⌘S on macOS) saves. In an editor Tab indents; press Ctrl+M (Ctrl+Shift+M on macOS) to make Tab move focus out of
        it. F8 goes to the next problem.
      </p>
      <div class="hook-editors">
        <div class="hook-source">
          <span class="editor-label" id="hook-source-label">
            Hook source (TypeScript)
          </span>
          <CodeEditor
            monaco={monaco}
            uri={`file:///rayrun/${tool.uid}/hook.ts`}
            language="typescript"
            value={state.text.source}
            generation={state.textGeneration}
            onChange={(source) => draft.edit({ source })}
            label="Hook source (TypeScript)"
            markers={compileMarkers}
            extraMarkers={shapeMarkers}
            onProblems={setTypeProblems}
            height="26rem"
          />
          <ProblemList problems={problems} />
        </div>
        <div class="hook-config">
          <span class="editor-label" id="hook-config-label">
            Config (JSON object, at most 16 KiB)
          </span>
          <CodeEditor
            monaco={monaco}
            uri={`file:///rayrun/${tool.uid}/config.json`}
            language="json"
            value={state.text.configText}
            generation={state.textGeneration}
            onChange={(configText) => draft.edit({ configText })}
            label="Config (JSON object, at most 16 KiB)"
            height="8rem"
          />
          {state.configProblem && (
            <p class="error" role="alert">
              {state.configProblem}
            </p>
          )}
          {configServerError && (
            <p class="error" role="alert">
              The server refused the config: {hookErrorMessage(configServerError)}
            </p>
          )}
          <p class="muted small">Config is stored in history and readable by every member: never put a secret here.</p>
        </div>
      </div>

      <div class="actions">
        <label>
          Note for this version (optional)
          <input value={note} maxLength={1000} onInput={(e) => onNote(e.currentTarget.value)} />
        </label>
        <button type="button" onClick={onSave} disabled={state.saving || !state.server || Boolean(state.conflict)}>
          {state.saving ? "Saving…" : "Save draft"}
        </button>
        <button
          type="button"
          class="secondary"
          onClick={() => state.server && void compile.compile(draft.state.pristine)}
          disabled={compile.state.status === "running" || !state.server?.versionId || state.dirty}
          title={state.dirty ? "Save first: the server compiles the saved draft" : undefined}
        >
          {compile.state.status === "running" ? "Compiling…" : "Compile saved draft"}
        </button>
        <button type="button" class="secondary" onClick={askReload} disabled={state.saving}>
          Reload
        </button>
      </div>
      {state.saveError !== undefined && !configServerError && (
        <p class="error" role="alert">
          {hookErrorMessage(state.saveError)}
        </p>
      )}
      {current.status === "failed" && current.diagnostics.length === 0 && (
        <p class="error" role="alert">
          {hookErrorMessage(current.error)}
        </p>
      )}
      {state.conflict && <ConflictView monaco={monaco} draft={draft} note={note} />}
      {state.setAside && (
        <details class="panel set-aside">
          <summary>Your text from before you loaded the newer draft (kept until your next save)</summary>
          <pre aria-label="Your set-aside source">{state.setAside.source}</pre>
          <pre aria-label="Your set-aside config">{state.setAside.configText}</pre>
        </details>
      )}
      <ConfirmDialog request={confirming} onClose={() => setConfirming(undefined)} />
    </section>
  );
}

/**
 * The one status line: saved or not, and what every check of the text in the editors says (the type
 * checker, the shape rules, and the server's compile when it compiled this very text).
 */
function DraftStatus(props: {
  state: HookDraftControls["state"];
  compile: CompileState;
  problems: number;
  versionLabel: string | undefined;
}) {
  const { state, compile, problems, versionLabel } = props;
  const saved = state.server?.versionId ? `Saved version ${versionLabel ?? state.server.versionId.slice(0, 12)}` : "No draft saved yet";
  const formatted =
    state.lastSave && !state.dirty
      ? state.lastSave.created
        ? state.lastSave.formatted
          ? " · saved and formatted"
          : ` · saved as sent (${state.lastSave.formatSkipped ?? "not formatted"})`
        : " · identical to the saved draft, nothing new stored"
      : "";
  const tone = problems > 0 ? "error" : compile.status === "ok" && !state.dirty ? "ok" : "muted";
  return (
    <p class={tone} role="status" data-testid="draft-status">
      {state.saving ? "Saving… · " : ""}
      {saved}
      {state.dirty
        ? " · unsaved changes"
        : state.server?.versionId
          ? formatted
          : ": the editor holds the typed skeleton; Save draft stores it"}
      {problems > 0 ? (
        ` · ${problems} ${problems === 1 ? "problem" : "problems"}, listed under the editor`
      ) : compile.status === "running" ? (
        " · compiling…"
      ) : compile.status === "ok" ? (
        <>
          {" · "}
          <CompiledSummary result={compile.result} />
        </>
      ) : state.dirty ? (
        " · no problems found as you type"
      ) : (
        ""
      )}
    </p>
  );
}

function CompiledSummary({ result }: { result: Extract<CompileState, { status: "ok" }>["result"] }) {
  const replaced = Object.entries(result.replaces)
    .filter(([, replaces]) => replaces)
    .map(([part]) => part);
  return (
    <span>
      Compiles: stages {result.stages.join(" and ")}, {result.compiledBytes.toLocaleString()} bytes
      {replaced.length > 0 ? `; its public contract replaces the upstream ${replaced.join(", ")}` : ""}.
    </span>
  );
}

const SOURCE_LABELS: Record<string, string> = { typescript: "type", shape: "shape", compile: "compiler" };

/** Every problem with the text in the editors, from the type checker, the shape rules and the compiler, in one list. */
function ProblemList({ problems }: { problems: Problem[] }) {
  return (
    <div class="problems" aria-live="polite">
      {problems.length === 0 ? (
        <p class="ok small">No problems found.</p>
      ) : (
        <ul class="small type-problems">
          {problems.map((problem) => (
            <li key={`${problem.source}:${problem.line}:${problem.column}:${problem.message}`}>
              Line {problem.line}, column {problem.column} ({SOURCE_LABELS[problem.source] ?? problem.source}): {problem.message}
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}

function ConflictView({ monaco, draft, note }: { monaco: Monaco; draft: HookDraftControls; note: string }) {
  const conflict = draft.state.conflict!;
  const { theirs, mine } = conflict;
  return (
    <section class="panel conflict" role="alert" aria-labelledby="conflict-title">
      <h4 id="conflict-title">Someone saved a newer draft while you were editing</h4>
      <p>
        Left: the newer draft. Right: your text, not saved yet. Choose one knowingly: overwriting keeps the newer draft in history as its
        own version; loading it keeps your text visible below until your next save.
      </p>
      <DiffEditor
        monaco={monaco}
        original={theirs.source}
        modified={mine.source}
        language="typescript"
        label="Newer draft compared with yours"
      />
      <div class="side-by-side">
        <div>
          <h5>Newer draft's config</h5>
          <pre aria-label="Newer draft's config">{pretty(theirs.config)}</pre>
        </div>
        <div>
          <h5>Your config</h5>
          <pre aria-label="Your config">{mine.configText}</pre>
        </div>
      </div>
      <div class="actions">
        <button type="button" class="danger" onClick={() => draft.overwrite(note)}>
          Overwrite with my text
        </button>
        <button type="button" class="secondary" onClick={draft.takeTheirs}>
          Load the newer draft
        </button>
      </div>
    </section>
  );
}
