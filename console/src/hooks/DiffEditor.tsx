// Two texts side by side in Monaco's diff editor, read-only: the newer draft on
// the left, this user's on the right (or any two versions).
import { useEffect, useRef } from "preact/hooks";
import type { Monaco } from "./monaco.ts";

export interface DiffEditorProps {
  monaco: Monaco;
  original: string;
  modified: string;
  language: "typescript" | "json";
  label: string;
  height?: string;
}

export function DiffEditor({ monaco, original, modified, language, label, height = "20rem" }: DiffEditorProps) {
  const host = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const originalModel = monaco.editor.createModel(original, language);
    const modifiedModel = monaco.editor.createModel(modified, language);
    const editor = monaco.editor.createDiffEditor(host.current!, {
      readOnly: true,
      originalEditable: false,
      automaticLayout: true,
      renderSideBySide: true,
      useInlineViewWhenSpaceIsLimited: true,
      minimap: { enabled: false },
      scrollBeyondLastLine: false,
      fontSize: 13,
      ariaLabel: label,
      originalAriaLabel: `${label}: left`,
      modifiedAriaLabel: `${label}: right`,
    });
    editor.setModel({ original: originalModel, modified: modifiedModel });
    return () => {
      editor.dispose();
      originalModel.dispose();
      modifiedModel.dispose();
    };
  }, [monaco, original, modified, language]);
  return <div ref={host} class="code-editor" style={{ height }} />;
}
