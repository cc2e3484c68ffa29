// Compiling the saved draft on the server: its stages and size, or the
// compiler's diagnostics, which the editor marks at their line and column. Each
// result remembers the text it was for, so it is shown only while the editors
// still hold that text: an edit clears it (markers too) until the next compile.
import { useState } from "preact/hooks";
import { api, ApiRequestError, call, type Schemas } from "../api.ts";
import type { Problem } from "./problem.ts";
import type { DraftText } from "./draft.ts";

export type CompileState =
  | { status: "idle" }
  | { status: "running"; text: DraftText }
  | { status: "ok"; text: DraftText; result: Schemas["CompiledHook"] }
  | { status: "failed"; text: DraftText; error: unknown; diagnostics: Problem[] };

interface ServerDiagnostic {
  code: string;
  message: string;
  line?: number;
  column?: number;
  pointer?: string;
}

const isDiagnostic = (value: unknown): value is ServerDiagnostic =>
  typeof value === "object" && value !== null && "code" in value && "message" in value;

/** Diagnostics without a position (e.g. "no stages") are placed on line 1, where the reader starts. */
function toProblems(error: unknown): Problem[] {
  if (!(error instanceof ApiRequestError)) return [];
  const diagnostics = error.details?.diagnostics;
  if (!Array.isArray(diagnostics)) return [];
  return diagnostics.filter(isDiagnostic).map((diagnostic) => ({
    line: diagnostic.line ?? 1,
    column: diagnostic.column ?? 1,
    message: `${diagnostic.message}${diagnostic.pointer ? ` (at ${diagnostic.pointer})` : ""} [${diagnostic.code}]`,
    source: "compile",
  }));
}

/** Whether a compile result speaks about the text now in the editors. */
export const compiledFor = (state: CompileState, text: DraftText) =>
  state.status !== "idle" && state.text.source === text.source && state.text.configText === text.configText;

export function useCompile(ws: string, toolUid: string) {
  const [state, setState] = useState<CompileState>({ status: "idle" });
  /** Compiles the saved draft, whose text is `text`. */
  const compile = async (text: DraftText) => {
    setState({ status: "running", text });
    try {
      const result = await call(
        api.POST("/v1/workspaces/{ws}/tools/{toolUid}/hook/compile", { params: { path: { ws, toolUid } }, body: {} }),
      );
      setState({ status: "ok", text, result });
    } catch (error) {
      setState({ status: "failed", text, error, diagnostics: toProblems(error) });
    }
  };
  return { state, compile, clear: () => setState({ status: "idle" }) };
}
