// The test console: runs the saved draft's `before` or `after` on arguments
// (and, for `after`, a mock upstream result) in the real isolate, never
// calling the upstream, and shows everything the run produced.
import type { HookTool } from "./tool.ts";
import { useState } from "preact/hooks";
import { api, call, type Schemas } from "../api.ts";
import { hookErrorMessage } from "./errors.ts";
import { parseJson, parseJsonObject, pretty } from "./json.ts";

type Stage = "before" | "after";
type TestResult = Schemas["HookTestResult"];

interface TestConsoleProps {
  ws: string;
  tool: HookTool;
  /** The editor has changes not saved yet: the test runs the saved draft. */
  dirty: boolean;
  hasDraft: boolean;
  onTested: () => void;
}

/**
 * A starting value for a JSON schema that the schema accepts where it can tell: each required property,
 * with the schema's `default`, `const` or first `enum` value, else an empty value of its type long or large
 * enough for its bounds. A fresh skeleton hook then tests green with no edits.
 */
function sample(schema: unknown): unknown {
  if (typeof schema !== "object" || schema === null) return {};
  const s = schema as {
    type?: unknown;
    properties?: Record<string, unknown>;
    required?: unknown;
    default?: unknown;
    const?: unknown;
    enum?: unknown;
    minLength?: unknown;
    minimum?: unknown;
    minItems?: unknown;
    items?: unknown;
  };
  if (s.default !== undefined) return s.default;
  if (s.const !== undefined) return s.const;
  if (Array.isArray(s.enum) && s.enum.length > 0) return s.enum[0];
  const type = Array.isArray(s.type) ? s.type.find((t) => t !== "null") : s.type;
  if (type === "string") return "x".repeat(typeof s.minLength === "number" ? Math.min(s.minLength, 64) : 0);
  if (type === "number" || type === "integer") return typeof s.minimum === "number" ? s.minimum : 0;
  if (type === "boolean") return false;
  if (type === "null") return null;
  if (type === "array") return Array.from({ length: typeof s.minItems === "number" ? Math.min(s.minItems, 8) : 0 }, () => sample(s.items));
  const out: Record<string, unknown> = {};
  if (s.properties && Array.isArray(s.required)) {
    for (const name of s.required) if (typeof name === "string") out[name] = sample(s.properties[name]);
  }
  return out;
}

const CHECK_LABELS: Record<TestResult["validation"]["checks"][number]["target"], string> = {
  publicArguments: "Client's arguments",
  upstreamArguments: "Arguments sent upstream",
  upstreamResult: "Mock upstream result",
  publicResult: "Result returned to the client",
};

export function TestConsole({ ws, tool, dirty, hasDraft, onTested }: TestConsoleProps) {
  const [stage, setStage] = useState<Stage>("before");
  const [argsText, setArgsText] = useState(() => pretty(sample(tool.definition.inputSchema)));
  const [resultText, setResultText] = useState(() =>
    pretty(tool.definition.outputSchema ? sample(tool.definition.outputSchema) : { content: [] }),
  );
  const [problem, setProblem] = useState<string>();
  const [running, setRunning] = useState(false);
  const [outcome, setOutcome] = useState<{ stage: Stage; result: TestResult } | { stage: Stage; error: unknown }>();

  const run = async () => {
    const args = parseJsonObject(argsText, "The arguments");
    if (!args.ok) return setProblem(args.message);
    const result = stage === "after" ? parseJson(resultText, "The mock result") : undefined;
    if (result && !result.ok) return setProblem(result.message);
    setProblem(undefined);
    setRunning(true);
    try {
      const tested = await call(
        api.POST("/v1/workspaces/{ws}/tools/{toolUid}/hook/test", {
          params: { path: { ws, toolUid: tool.uid } },
          body: { stage, arguments: args.value, ...(result ? { result: result.value } : {}) },
        }),
      );
      setOutcome({ stage, result: tested });
      onTested();
    } catch (error) {
      setOutcome({ stage, error });
    } finally {
      setRunning(false);
    }
  };

  return (
    <section aria-labelledby="test-console-title" class="test-console">
      <h3 id="test-console-title">Test console</h3>
      <p class="muted">
        Runs the saved draft in the hook isolate; the upstream is never called. A revision needs a passing test of each stage.
      </p>
      {dirty && (
        <p class="highlight" role="status">
          You have unsaved changes: tests run the saved draft.
        </p>
      )}
      <fieldset class="stage-picker">
        <legend>Stage</legend>
        {(["before", "after"] as const).map((option) => (
          <label key={option} class="radio">
            <input type="radio" name="test-stage" value={option} checked={stage === option} onChange={() => setStage(option)} />
            {option}
          </label>
        ))}
      </fieldset>
      <div class={stage === "after" ? "side-by-side" : undefined}>
        <label class="block">
          Arguments (the client's, JSON object)
          <textarea rows={8} spellcheck={false} value={argsText} onInput={(e) => setArgsText(e.currentTarget.value)} />
        </label>
        {stage === "after" && (
          <label class="block">
            Mock upstream result (JSON{tool.definition.outputSchema ? ", the structured content" : ", a CallToolResult"})
            <textarea rows={8} spellcheck={false} value={resultText} onInput={(e) => setResultText(e.currentTarget.value)} />
          </label>
        )}
      </div>
      {problem && (
        <p class="error" role="alert">
          {problem}
        </p>
      )}
      <button type="button" onClick={run} disabled={running || !hasDraft}>
        {running ? "Running…" : `Run ${stage}`}
      </button>
      {!hasDraft && <p class="empty">Save a draft to test it.</p>}
      {outcome && "error" in outcome && (
        <p class="error" role="alert">
          {hookErrorMessage(outcome.error)}
        </p>
      )}
      {outcome && "result" in outcome && <TestOutcome stage={outcome.stage} result={outcome.result} />}
    </section>
  );
}

function TestOutcome({ stage, result }: { stage: Stage; result: TestResult }) {
  return (
    <div class="test-outcome" aria-live="polite">
      <h4>
        Result of {stage}:{" "}
        <span class={result.passed ? "ok" : "error"} data-testid="test-verdict">
          {result.passed ? "passed" : "failed"}
        </span>
        , outcome <code data-testid="test-outcome">{result.outcome}</code>
      </h4>
      {result.error && (
        <p class="error">
          {result.error.message} ({result.error.code})
        </p>
      )}
      {result.value !== undefined && (
        <>
          <h5>Transformed value</h5>
          <pre aria-label="Transformed value">{pretty(result.value)}</pre>
        </>
      )}
      <h5>Schema checks</h5>
      {result.validation.checks.length === 0 ? (
        <p class="empty">No schema checks ran.</p>
      ) : (
        <table class="checks">
          <thead>
            <tr>
              <th scope="col">What</th>
              <th scope="col">Against</th>
              <th scope="col">Valid</th>
              <th scope="col">Errors</th>
            </tr>
          </thead>
          <tbody>
            {result.validation.checks.map((check) => (
              <tr key={check.target}>
                <td>{CHECK_LABELS[check.target]}</td>
                <td>{check.schema} schema</td>
                <td class={check.valid ? "ok" : "error"}>{check.valid ? "yes" : "no"}</td>
                <td>{check.errors.map((error) => `${error.pointer || "/"}: ${error.message}`).join("; ") || "—"}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <h5>Hook logs</h5>
      {result.logs.length === 0 ? (
        <p class="empty">The hook logged nothing.</p>
      ) : (
        <ul class="hook-logs">
          {result.logs.map((log, index) => (
            <li key={index}>
              <strong>{log.level}</strong> {log.message}
              {log.data !== undefined && <code> {JSON.stringify(log.data)}</code>}
            </li>
          ))}
        </ul>
      )}
      <h5>Usage</h5>
      <dl class="usage">
        <dt>Duration</dt>
        <dd>{result.usage.durationMs} ms</dd>
        <dt>Work budget used</dt>
        <dd>{result.usage.polls} of 1,000 interrupt polls</dd>
        <dt>Isolate memory</dt>
        <dd>{result.usage.wasmBytes.toLocaleString()} bytes</dd>
        <dt>Output</dt>
        <dd>{result.usage.outputBytes.toLocaleString()} bytes</dd>
      </dl>
    </div>
  );
}
