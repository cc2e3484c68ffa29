// A Monaco editor bound to one model, for Preact: the text lives in the model
// (keyed by `uri`) and the parent hears every edit. The parent's `value` is
// pushed into the model only when `generation` changes (a reload, a restore):
// echoing every render back would race fast typing, since a render can carry
// a value a keystroke or two old, and overwrite what was just typed.
import { useEffect, useRef, useState } from "preact/hooks";
import type { CodeEditor as MonacoCodeEditor, Monaco } from "./monaco.ts";
import type { Problem } from "./problem.ts";

export interface CodeEditorProps {
  monaco: Monaco;
  uri: string;
  language: "typescript" | "json";
  value: string;
  /** Changes when `value` is new text from outside the editor, to be put into it. */
  generation: number;
  onChange: (value: string) => void;
  /** The accessible name of the editor. */
  label: string;
  /** Problems to mark in the text besides the language service's own (e.g. compile diagnostics), under this owner. */
  markers?: { owner: string; problems: Problem[] };
  /** A second set, under its own owner (the shape rules beside the compiler's diagnostics). */
  extraMarkers?: { owner: string; problems: Problem[] };
  /** Every error marker on the model, whatever its owner, as it changes. */
  onProblems?: (problems: Problem[]) => void;
  height?: string;
  readOnly?: boolean;
}

export function CodeEditor(props: CodeEditorProps) {
  const { monaco, uri, language, value, generation, label, height = "22rem", readOnly = false } = props;
  const host = useRef<HTMLDivElement>(null);
  const [editor, setEditor] = useState<MonacoCodeEditor>();
  // The latest callbacks, without re-creating the editor when they change.
  const latest = useRef(props);
  latest.current = props;

  useEffect(() => {
    const modelUri = monaco.Uri.parse(uri);
    const model = monaco.editor.getModel(modelUri) ?? monaco.editor.createModel(value, language, modelUri);
    if (model.getValue() !== value) model.setValue(value);
    const created = monaco.editor.create(host.current!, {
      model,
      ariaLabel: label,
      readOnly,
      automaticLayout: true,
      minimap: { enabled: false },
      scrollBeyondLastLine: false,
      tabSize: 2,
      fontSize: 13,
      fixedOverflowWidgets: true,
    });
    const edits = model.onDidChangeContent(() => latest.current.onChange(model.getValue()));
    // Errors only: the TypeScript service also marks hints (an unused name is faded, not a problem).
    const reportProblems = () =>
      latest.current.onProblems?.(
        monaco.editor
          .getModelMarkers({ resource: modelUri })
          .filter((marker) => marker.severity === monaco.MarkerSeverity.Error)
          .map((marker) => ({ line: marker.startLineNumber, column: marker.startColumn, message: marker.message, source: marker.owner })),
      );
    const markerChanges = monaco.editor.onDidChangeMarkers((uris) => {
      if (uris.some((changed) => changed.toString() === modelUri.toString())) reportProblems();
    });
    reportProblems();
    setEditor(created);
    return () => {
      edits.dispose();
      markerChanges.dispose();
      created.dispose();
      model.dispose();
    };
  }, [monaco, uri, language]);

  useEffect(() => {
    const model = editor?.getModel();
    if (model && model.getValue() !== value) model.setValue(value);
  }, [editor, generation]);

  useEffect(() => editor?.updateOptions({ readOnly }), [editor, readOnly]);

  const { markers, extraMarkers } = props;
  useEffect(() => setMarkers(monaco, editor, markers), [editor, markers]);
  useEffect(() => setMarkers(monaco, editor, extraMarkers), [editor, extraMarkers]);

  return <div ref={host} class="code-editor" style={{ height }} data-uri={uri} />;
}

/** Marks `markers.problems` in the editor's model under `markers.owner`, replacing what that owner marked before. */
function setMarkers(
  monaco: Monaco,
  editor: MonacoCodeEditor | undefined,
  markers: { owner: string; problems: Problem[] } | undefined,
): void {
  const model = editor?.getModel();
  if (!model || !markers) return;
  monaco.editor.setModelMarkers(
    model,
    markers.owner,
    markers.problems.map((problem) => {
      const line = Math.min(Math.max(problem.line, 1), model.getLineCount());
      const column = Math.max(problem.column, 1);
      // Underline from the column to the end of the word there (at least one character).
      const word = model.getWordAtPosition({ lineNumber: line, column });
      return {
        severity: monaco.MarkerSeverity.Error,
        message: problem.message,
        source: problem.source,
        startLineNumber: line,
        startColumn: column,
        endLineNumber: line,
        endColumn: word && word.startColumn <= column ? word.endColumn : column + 1,
      };
    }),
  );
}
