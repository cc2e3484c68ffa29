// Compiling the saved draft on the server: its stages and size, or the
// compiler's diagnostics, which the editor marks at their line and column.
import { useState } from "preact/hooks";
import { api, ApiRequestError, call, type Schemas } from "../api.ts";
import type { Problem } from "./CodeEditor.tsx";

export type CompileState =
  | { status: "idle" }
  | { status: "running" }
  | { status: "ok"; result: Schemas["CompiledHook"] }
  | { status: "failed"; error: unknown; diagnostics: Problem[] };

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

export function useCompile(ws: string, toolUid: string) {
  const [state, setState] = useState<CompileState>({ status: "idle" });
  const compile = async () => {
    setState({ status: "running" });
    try {
      const result = await call(
        api.POST("/v1/workspaces/{ws}/tools/{toolUid}/hook/compile", { params: { path: { ws, toolUid } }, body: {} }),
      );
      setState({ status: "ok", result });
    } catch (error) {
      setState({ status: "failed", error, diagnostics: toProblems(error) });
    }
  };
  return { state, compile, clear: () => setState({ status: "idle" }) };
}
