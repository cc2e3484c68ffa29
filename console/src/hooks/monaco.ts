// Monaco for the Hooks tab, imported only through `loadMonaco()` so that the
// editor, its TypeScript language service and their workers are a chunk of their
// own, fetched when the Hooks tab first opens and never part of the console's
// initial JavaScript. Only what the tab uses is imported (not every language).
import * as monaco from "monaco-editor/editor/editor.api.js";
import "monaco-editor/editor/browser/widget/diffEditor/diffEditor.contribution.js";
import "monaco-editor/editor/contrib/hover/browser/hoverContribution.js";
import "monaco-editor/editor/contrib/suggest/browser/suggestController.js";
import "monaco-editor/editor/contrib/gotoError/browser/gotoError.js";
import "monaco-editor/editor/contrib/find/browser/findController.js";
import "monaco-editor/editor/contrib/bracketMatching/browser/bracketMatching.js";
import "monaco-editor/editor/contrib/parameterHints/browser/parameterHints.js";
// Ctrl+M (Ctrl+Shift+M on macOS): Tab moves focus out of the editor instead of indenting, for keyboard users.
import "monaco-editor/editor/contrib/toggleTabFocusMode/browser/toggleTabFocusMode.js";
import "monaco-editor/languages/definitions/typescript/register.js";
import { typescriptDefaults, ScriptTarget, ModuleKind } from "monaco-editor/languages/features/typescript/register.js";
import "monaco-editor/languages/features/json/register.js";
import EditorWorker from "monaco-editor/editor/editor.worker.js?worker";
import JsonWorker from "monaco-editor/language/json/json.worker.js?worker";
import TypeScriptWorker from "monaco-editor/language/typescript/ts.worker.js?worker";
import { currentTheme, onThemeChange, type Theme } from "../ui/theme.ts";

export type Monaco = typeof monaco;
export type CodeEditor = monaco.editor.IStandaloneCodeEditor;
export type DiffEditor = monaco.editor.IStandaloneDiffEditor;

self.MonacoEnvironment = {
  getWorker(_workerId: string, label: string) {
    if (label === "typescript" || label === "javascript") return new TypeScriptWorker();
    if (label === "json") return new JsonWorker();
    return new EditorWorker();
  },
};

// A hook runs in a QuickJS isolate: ES2022 globals, no DOM, no imports. The
// generated declarations are a global script declaring `defineToolAdapter`.
typescriptDefaults.setCompilerOptions({
  target: ScriptTarget.ES2020,
  module: ModuleKind.ESNext,
  lib: ["es2022"],
  strict: true,
  noEmit: true,
  allowNonTsExtensions: true,
});
typescriptDefaults.setDiagnosticsOptions({ noSemanticValidation: false, noSyntaxValidation: false });
typescriptDefaults.setEagerModelSync(true);

// The default themes' line numbers are too faint for WCAG AA contrast (axe checks them).
monaco.editor.defineTheme("rayrun-light", {
  base: "vs",
  inherit: true,
  rules: [],
  colors: {
    "editorLineNumber.foreground": "#4b5563",
    "editorLineNumber.dimmedForeground": "#4b5563",
    "editorLineNumber.activeForeground": "#1b1f24",
  },
});
monaco.editor.defineTheme("rayrun-dark", {
  base: "vs-dark",
  inherit: true,
  rules: [],
  colors: {
    "editor.background": "#0d1117",
    "editorLineNumber.foreground": "#a5b0bc",
    "editorLineNumber.dimmedForeground": "#a5b0bc",
    "editorLineNumber.activeForeground": "#e6edf3",
  },
});
// Monaco follows the console's theme (the system's, or the toggle's).
const monacoTheme = (theme: Theme) => (theme === "dark" ? "rayrun-dark" : "rayrun-light");
monaco.editor.setTheme(monacoTheme(currentTheme()));
onThemeChange((theme) => monaco.editor.setTheme(monacoTheme(theme)));

/** The URI every editor's declarations live at: one tool's declarations at a time. */
const DECLARATIONS_URI = "file:///rayrun/tool-hook.d.ts";
let declarations: monaco.IDisposable | undefined;

/** Replaces the tool declarations the TypeScript service checks hook sources against. */
export function setToolDeclarations(text: string): void {
  declarations?.dispose();
  declarations = typescriptDefaults.addExtraLib(text, DECLARATIONS_URI);
}

export { monaco };
