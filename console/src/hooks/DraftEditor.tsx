// The draft: TypeScript source (type-checked as you type against the tool's
// generated declarations), JSON config, save with the etag, the conflict view
// when someone saved first, and the server's compile diagnostics in place.
import { useMemo, useState } from "preact/hooks";
import { CodeEditor, type Problem } from "./CodeEditor.tsx";
import type { CompileState } from "./compile.ts";
import { DiffEditor } from "./DiffEditor.tsx";
import type { HookDraftControls } from "./draft.ts";
import { hookErrorMessage } from "./errors.ts";
import { pretty } from "./json.ts";
import type { Monaco } from "./monaco.ts";
import { ApiRequestError } from "../api.ts";

interface DraftEditorProps {
  monaco: Monaco;
  toolUid: string;
  draft: HookDraftControls;
  compile: { state: CompileState; compile: () => Promise<void> };
}

/** A hook that changes nothing, typed by the tool's declarations, to start from. */
const STARTER = `export default defineToolAdapter({
  apiVersion: "rayrun.hooks/v1",
  before({ arguments: args, context }) {
    context.log.info("before", { args });
    return { action: "continue", arguments: args };
  },
  after({ result }) {
    return { action: "return", result };
  },
});
`;

const CONFIG_ERROR_CODES = new Set(["config_too_large", "invalid_request"]);

export function DraftEditor({ monaco, toolUid, draft, compile }: DraftEditorProps) {
  const { state } = draft;
  const [note, setNote] = useState("");
  const [typeProblems, setTypeProblems] = useState<Problem[]>([]);
  const compileMarkers = useMemo(
    () => ({ owner: "rayrun-compile", problems: compile.state.status === "failed" ? compile.state.diagnostics : [] }),
    [compile.state],
  );
  // A config the API refused (too large, too deep) is shown beside the config editor.
  const configServerError =
    state.saveError instanceof ApiRequestError &&
    CONFIG_ERROR_CODES.has(state.saveError.code) &&
    /config/i.test(`${state.saveError.message} ${JSON.stringify(state.saveError.details ?? {})}`)
      ? state.saveError
      : undefined;

  const save = async () => {
    await draft.save(note);
    setNote("");
  };

  return (
    <section class="panel hook-draft" aria-labelledby="hook-draft-title">
      <h3 id="hook-draft-title">Draft</h3>
      <p class="muted" role="status">
        {state.server?.versionId ? `Saved version ${state.server.versionId}` : "No draft saved yet"}
        {state.dirty ? " · unsaved changes" : ""}
        {state.lastSave && !state.dirty
          ? state.lastSave.created
            ? state.lastSave.formatted
              ? " · saved and formatted"
              : ` · saved as sent (${state.lastSave.formatSkipped ?? "not formatted"})`
            : " · identical to the saved draft, nothing new stored"
          : ""}
      </p>

      {!state.server?.versionId && state.text.source === "" && (
        <p>
          <button type="button" class="secondary" onClick={() => draft.replace({ source: STARTER })}>
            Start from a template
          </button>
        </p>
      )}
      <p class="muted small">
        Keyboard: in an editor Tab indents; press Ctrl+M (Ctrl+Shift+M on macOS) to make Tab move focus out of it. F8 goes to the next
        problem.
      </p>
      <div class="hook-editors">
        <div class="hook-source">
          <span class="editor-label" id="hook-source-label">
            Hook source (TypeScript)
          </span>
          <CodeEditor
            monaco={monaco}
            uri={`file:///rayrun/${toolUid}/hook.ts`}
            language="typescript"
            value={state.text.source}
            generation={state.textGeneration}
            onChange={(source) => draft.edit({ source })}
            label="Hook source (TypeScript)"
            markers={compileMarkers}
            onProblems={setTypeProblems}
            height="26rem"
          />
          <ProblemList problems={typeProblems} />
        </div>
        <div class="hook-config">
          <span class="editor-label" id="hook-config-label">
            Config (JSON object, at most 16 KiB)
          </span>
          <CodeEditor
            monaco={monaco}
            uri={`file:///rayrun/${toolUid}/config.json`}
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
          <input value={note} maxLength={1000} onInput={(e) => setNote(e.currentTarget.value)} />
        </label>
        <button type="button" onClick={save} disabled={state.saving || !state.server || Boolean(state.conflict)}>
          {state.saving ? "Saving…" : "Save draft"}
        </button>
        <button
          type="button"
          class="secondary"
          onClick={compile.compile}
          disabled={compile.state.status === "running" || !state.server?.versionId}
        >
          {compile.state.status === "running" ? "Compiling…" : "Compile saved draft"}
        </button>
        <button type="button" class="secondary" onClick={draft.reload} disabled={state.saving}>
          Reload
        </button>
      </div>
      {state.saveError !== undefined && !configServerError && (
        <p class="error" role="alert">
          {hookErrorMessage(state.saveError)}
        </p>
      )}
      <CompileSummary state={compile.state} />
      {state.conflict && <ConflictView monaco={monaco} draft={draft} note={note} />}
      {state.setAside && (
        <details class="panel set-aside">
          <summary>Your text from before you loaded the newer draft (kept until your next save)</summary>
          <pre aria-label="Your set-aside source">{state.setAside.source}</pre>
          <pre aria-label="Your set-aside config">{state.setAside.configText}</pre>
        </details>
      )}
    </section>
  );
}

function ProblemList({ problems }: { problems: Problem[] }) {
  const errors = problems.filter((problem) => problem.source === "typescript");
  return (
    <div class="problems" aria-live="polite">
      {errors.length === 0 ? (
        <p class="ok small">No type errors.</p>
      ) : (
        <>
          <p class="error small">
            {errors.length} type {errors.length === 1 ? "error" : "errors"} (underlined in the editor):
          </p>
          <ul class="small type-problems">
            {errors.map((problem) => (
              <li key={`${problem.line}:${problem.column}:${problem.message}`}>
                Line {problem.line}, column {problem.column}: {problem.message}
              </li>
            ))}
          </ul>
        </>
      )}
    </div>
  );
}

function CompileSummary({ state }: { state: CompileState }) {
  if (state.status === "idle" || state.status === "running") return null;
  if (state.status === "ok") {
    const { result } = state;
    const replaced = Object.entries(result.replaces)
      .filter(([, replaces]) => replaces)
      .map(([part]) => part);
    return (
      <p class="ok" role="status">
        Compiles: stages {result.stages.join(" and ")}, {result.compiledBytes.toLocaleString()} bytes
        {replaced.length > 0 ? `; its public contract replaces the upstream ${replaced.join(", ")}` : ""}.
      </p>
    );
  }
  return (
    <div role="alert" class="compile-failed">
      <p class="error">{hookErrorMessage(state.error)}</p>
      {state.diagnostics.length > 0 && (
        <ul class="small compile-diagnostics">
          {state.diagnostics.map((problem) => (
            <li key={`${problem.line}:${problem.column}:${problem.message}`}>
              Line {problem.line}, column {problem.column}: {problem.message}
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
      <h4 id="conflict-title">Someone saved a newer draft (version {theirs.versionId ?? "none"}) while you were editing</h4>
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
