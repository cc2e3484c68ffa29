import type { CallToolResult, ClientCapabilities, Tool } from "@modelcontextprotocol/sdk/types.js";
import type { JsonObject } from "../../schema/hooks/contract.ts";
import type { ApprovalLinks } from "../approvals/approval-links.ts";
import { decideAccess } from "../calls/access.ts";
import type { Catalog, CatalogTool } from "../calls/catalog.ts";
import { isDiscoverable, listedTools } from "../calls/discovery.ts";
import { jsonBytes, recordToolCall, stageRow, type RecordedToolCall } from "../calls/call-rows.ts";
import type { ToolCallRun } from "../calls/outcome.ts";
import { runToolCall } from "../calls/pipeline.ts";
import { DeclarationsTooLargeError } from "../hooks/compiler/index.ts";
import { checkAgainstSchema } from "../lib/json-schema.ts";
import { refusal } from "../mcp/mcp.results.ts";
import type { Discovery } from "../policy/profiles.store.ts";
import { CODE_DECLARATIONS_MAX_CHARS, generateCodeDeclarations } from "./codemode.declarations.ts";
import type { CodeModeError } from "./codemode.errors.ts";
import { CODE_MODE_LIMITS } from "./codemode.limits.ts";
import type { ToolAnswer } from "./codemode.run.ts";
import { busyError } from "./codemode.failures.ts";
import { allowanceMeter, busyMessage, computeWait, runProgram } from "./codemode.sandbox.ts";

export const DESCRIBE_TOOLS = "describe_tools";

/**
 * An inner call relays nothing to the client (no sampling, elicitation or roots), so a tool the upstream offers only
 * to clients with such a capability is neither declared nor callable in a program.
 */
const INNER_CALL_CAPABILITIES: ClientCapabilities | undefined = undefined;
export const RUN_CODE = "run_code";

const FILTER_MAX_CHARS = 200;

const DESCRIBE_INPUT: Tool["inputSchema"] = {
  type: "object",
  properties: {
    filter: {
      type: "string",
      maxLength: FILTER_MAX_CHARS,
      description: "Only tools whose name contains this text (case-insensitive)",
    },
  },
  additionalProperties: false,
};

const RUN_INPUT: Tool["inputSchema"] = {
  type: "object",
  properties: {
    code: {
      type: "string",
      description:
        "The body of an async function in TypeScript or JavaScript. It may `await tools.<name>(args)` (see describe_tools) and " +
        "`console.log(...)`, and returns a JSON value. No imports, timers, network or other globals.",
    },
  },
  required: ["code"],
  additionalProperties: false,
};

const CALL_RECORD = {
  type: "object",
  properties: {
    index: { type: "integer" },
    tool: { type: "string" },
    outcome: { enum: ["ok", "error"] },
    code: { type: ["string", "null"] },
    durationMs: { type: "number" },
  },
  required: ["index", "tool", "outcome", "code", "durationMs"],
};

/** The two tools Code Mode adds to `tools/list`. */
export const CODE_MODE_TOOLS: Tool[] = [
  {
    name: DESCRIBE_TOOLS,
    description:
      "TypeScript declarations of the `tools` object available to run_code: one async function per tool you may call, " +
      "with its arguments and result types. Read it before writing a program.",
    inputSchema: DESCRIBE_INPUT,
    annotations: { readOnlyHint: true, openWorldHint: false },
  },
  {
    name: RUN_CODE,
    description:
      "Runs a program (the body of an async function) that calls tools with `await tools.<name>(args)` and returns a JSON " +
      "value. Each call is checked exactly like a direct one; a refused call rejects with an error carrying `code`, `message` " +
      `and \`details\`, which the program may catch. Per run: at most ${CODE_MODE_LIMITS.toolCalls} tool calls, ` +
      `${CODE_MODE_LIMITS.callsInFlight} at once, ${CODE_MODE_LIMITS.wallTimeMs / 1000} s, a 1 MiB result and ` +
      `${CODE_MODE_LIMITS.logLines} console lines.`,
    inputSchema: RUN_INPUT,
    outputSchema: {
      type: "object",
      properties: {
        result: { description: "The program's return value" },
        logs: { type: "array", items: { type: "string" } },
        calls: { type: "array", items: CALL_RECORD },
      },
      required: ["result", "logs", "calls"],
    },
  },
];

const offersCode = (discovery: Discovery) => discovery !== "direct";

/** How the caller's profile discovers tools; no profile sees nothing either way. */
export function discoveryOf(catalog: Catalog, profileId: string | null): Discovery {
  return (profileId ? catalog.profiles.get(profileId)?.discovery : undefined) ?? "direct";
}

/** What `tools/list` shows: the direct tools, Code Mode's two, or both. */
export function toolsForDiscovery(catalog: Catalog, profileId: string | null, capabilities: ClientCapabilities | undefined): Tool[] {
  const discovery = discoveryOf(catalog, profileId);
  const direct = discovery === "code" ? [] : listedTools(catalog, profileId, capabilities);
  return offersCode(discovery) ? [...CODE_MODE_TOOLS, ...direct] : direct;
}

export const isCodeModeCall = (catalog: Catalog, profileId: string | null, name: string) =>
  (name === DESCRIBE_TOOLS || name === RUN_CODE) && offersCode(discoveryOf(catalog, profileId));

export const isDirectCallOffered = (catalog: Catalog, profileId: string | null) => discoveryOf(catalog, profileId) !== "code";

/** One inner call, as the run reports it and as its log rows are written. */
export interface InnerCall {
  index: number;
  tool: string;
  outcome: "ok" | "error";
  code: string | null;
  durationMs: number;
  /** When the call started (epoch ms). */
  startedAt: number;
  /**
   * The call as its rows need it: sizes and verdict, the stage rows and any shadow work, never the program's
   * arguments or what it got back (see RecordedToolCall). Only sizes when the pipeline never ran: no tool by that
   * name, or the caller's key went.
   */
  recorded: RecordedToolCall | { bytesIn: number; bytesOut: number };
}

export interface CodeModeCaller {
  env: Env;
  /** The catalog the call started with (discovery, the run's start). */
  catalog: Catalog;
  /**
   * The current catalog, read again by every inner call: a run lasts up to 60 s, and a change is in force
   * for its next inner call once the change's API has answered, as for the next direct call.
   */
  loadCatalog: () => Promise<Catalog>;
  workspaceId: string;
  keyId: string;
  profileId: string | null;
  /** Whose upstream grants inner calls use on services authorized per user. */
  grantSubject: string;
  /** Whether the caller's key or grant still holds, with the same profile; asked before every inner call. */
  stillAuthorized: () => Promise<boolean>;
  /** The run's request id: every inner call is logged under it, with its index. */
  requestId: string;
  approvalLinks: ApprovalLinks;
  signal?: AbortSignal;
}

/** `tools/call` of a Code Mode tool: the wire result, and the inner calls whose rows and shadow work follow the response. */
export async function callCodeModeTool(
  caller: CodeModeCaller,
  name: string,
  args: JsonObject,
): Promise<{ result: CallToolResult; inner: InnerCall[] }> {
  if (name === DESCRIBE_TOOLS) return { result: describeTools(caller, args), inner: [] };
  return runCode(caller, args);
}

function invalidArguments(schema: Record<string, unknown>, args: JsonObject, tool: string): CallToolResult | null {
  const check = checkAgainstSchema(schema, args);
  if ("breach" in check) {
    const { bound, limit, message } = check.breach;
    return refusal(
      "schema_too_complex",
      "Checking the arguments against the tool's schema would exceed a validation bound, so the call was stopped",
      { tool, bound, ...(limit !== undefined ? { limit } : {}), reason: message },
    );
  }
  if (check.valid) return null;
  return refusal("invalid_arguments", "The arguments do not match the tool's input schema", { tool, violations: check.violations });
}

function describeTools(caller: CodeModeCaller, args: JsonObject): CallToolResult {
  const invalid = invalidArguments(DESCRIBE_INPUT, args, DESCRIBE_TOOLS);
  if (invalid) return invalid;
  const filter = typeof args.filter === "string" ? args.filter.toLowerCase() : "";
  const tools = listedTools(caller.catalog, caller.profileId, INNER_CALL_CAPABILITIES).filter((tool) =>
    tool.name.toLowerCase().includes(filter),
  );
  try {
    return { content: [{ type: "text", text: generateCodeDeclarations(tools) }] };
  } catch (error) {
    if (!(error instanceof DeclarationsTooLargeError)) throw error;
    return refusal(
      "declarations_too_large",
      `The declarations of ${tools.length} tools are over ${CODE_DECLARATIONS_MAX_CHARS} characters; narrow them with \`filter\``,
      { tool: DESCRIBE_TOOLS, tools: tools.length, limit: CODE_DECLARATIONS_MAX_CHARS },
    );
  }
}

async function runCode(caller: CodeModeCaller, args: JsonObject): Promise<{ result: CallToolResult; inner: InnerCall[] }> {
  const invalid = invalidArguments(RUN_INPUT, args, RUN_CODE);
  if (invalid) return { result: invalid, inner: [] };
  const inner: InnerCall[] = [];
  const pending: Promise<ToolAnswer>[] = [];
  const run = await runProgram({
    source: args.code as string,
    requestId: caller.requestId,
    workspaceId: caller.workspaceId,
    signal: caller.signal,
    host: {
      callTool: (call, signal) => {
        const answer = innerCall(caller, call, signal).then(({ record, answer }) => {
          inner.push(record);
          return answer;
        });
        pending.push(answer);
        return answer;
      },
    },
  });
  // Calls the run's end cancelled still finish (quickly): their records and rows belong to the run.
  await Promise.allSettled(pending);
  inner.sort((a, b) => a.index - b.index);
  const calls = inner.map(({ index, tool, outcome, code, durationMs }) => ({ index, tool, outcome, code, durationMs }));
  // One entry a line; an entry's own line breaks go on indented, so entries stay apart (structuredContent has them exact).
  const logLines = run.logs.map((entry) => entry.replaceAll("\n", "\n  ")).join("\n");
  const logText = run.logs.length ? [{ type: "text" as const, text: `console.log:\n${logLines}` }] : [];
  if (!run.ok) {
    // A run refused before the program ran (it does not compile, its workspace is busy) has no logs or calls to tell.
    if (!run.ran) return { result: refusal(run.error.code, run.error.message, run.error.details), inner };
    const failed = refusal(run.error.code, run.error.message, { ...run.error.details, logs: run.logs, calls });
    return { result: { ...failed, content: [...failed.content, ...logText] }, inner };
  }
  return {
    result: {
      content: [{ type: "text", text: JSON.stringify(run.value) }, ...logText],
      structuredContent: { result: run.value, logs: run.logs, calls },
    },
    inner,
  };
}

/** How much of a program-supplied name an error repeats. */
const ECHOED_NAME_CHARS = 128;
const echoed = (name: string) => (name.length <= ECHOED_NAME_CHARS ? name : `${name.slice(0, ECHOED_NAME_CHARS)}…`);

/**
 * One `tools.<name>(args)`: the full pipeline for the same caller, under the
 * run's request id. A tool discovery does not show (blocked, in review,
 * unknown, another workspace's) is an unknown tool, whatever the reason; a
 * blocked or hidden tool that exists still gets its refusal row, as on /mcp.
 */
async function innerCall(
  caller: CodeModeCaller,
  call: { index: number; name: string; arguments: Record<string, unknown> },
  signal: AbortSignal,
): Promise<{ record: InnerCall; answer: ToolAnswer }> {
  const started = Date.now();
  const catalog = await caller.loadCatalog();
  const record = (run: ToolCallRun | null, answer: ToolAnswer): { record: InnerCall; answer: ToolAnswer } => {
    const tool = echoed(call.name);
    return {
      record: {
        index: call.index,
        tool,
        outcome: answer.ok ? "ok" : "error",
        code: answer.ok ? null : answer.error.code,
        durationMs: Date.now() - started,
        startedAt: started,
        recorded: run
          ? recordToolCall({ requestId: caller.requestId, callIndex: call.index, name: tool, arguments: call.arguments, answer }, run)
          : { bytesIn: jsonBytes(call.arguments), bytesOut: jsonBytes(answer) },
      },
      answer,
    };
  };
  const unknown: ToolAnswer = {
    ok: false,
    error: { code: "unknown_tool", message: `Unknown tool: ${echoed(call.name)}`, details: { tool: echoed(call.name) } },
  };
  // A run lasts up to a minute: a key revoked (or moved to another profile) meanwhile stops its next call.
  if (!(await caller.stillAuthorized())) {
    return record(null, {
      ok: false,
      error: { code: "unauthorized", message: "The credentials are invalid, expired or revoked, or their access profile changed" },
    });
  }
  // What describe_tools declares is exactly what the program may call; anything else is an unknown tool.
  const tool = catalog.tools.get(call.name);
  if (!tool || !isDiscoverable(catalog, caller.profileId, tool, INNER_CALL_CAPABILITIES)) {
    return record(hiddenRun(caller, catalog, call.name), unknown);
  }

  // A hook's stages are the workspace's compute too: once they have spent its allowance, no further call runs them.
  const wait = computeWait(caller.workspaceId);
  if (wait > 0) return record(null, { ok: false, error: busyError(busyMessage(wait), wait) });
  const run = await runToolCall({
    env: caller.env,
    catalog,
    publicName: call.name,
    workspaceId: caller.workspaceId,
    keyId: caller.keyId,
    profileId: caller.profileId,
    arguments: call.arguments as JsonObject,
    requestId: caller.requestId,
    approvalLinks: caller.approvalLinks,
    upstream: { signal },
    // The program computes between its calls with no I/O, so the clock cannot be trusted at dispatch.
    confirmLeaseBeforeDispatch: true,
    grantSubject: caller.grantSubject,
    stillAuthorized: caller.stillAuthorized,
    stageMeter: allowanceMeter(caller.workspaceId),
  });
  const outcome = run.outcome;
  switch (outcome.kind) {
    case "hidden":
      return record(run, unknown);
    case "refused":
      return record(run, { ok: false, error: { code: outcome.code, message: outcome.message, details: outcome.details } });
    case "upstream_rpc_error":
      return record(run, {
        ok: false,
        error: {
          code: "upstream_error",
          message: outcome.error.message.replace(/^MCP error -?\d+: /, ""),
          details: { tool: call.name, upstream: true, rpcCode: outcome.error.code },
        },
      });
    case "result":
      return record(run, resultAnswer(call.name, hasOutputSchema(catalog, tool), outcome.result));
    case "raw_result":
      // One plain tool result (no output schema, nothing to change), as parsed when it qualified.
      return record(run, resultAnswer(call.name, false, outcome.raw.parse()));
    case "task":
      // A program's calls are never task-augmented.
      throw new Error("a Code Mode call became a task");
  }
}

/** Whether discovery declares an output schema for the tool (the active hook's, else the upstream's). */
function hasOutputSchema(catalog: Catalog, tool: CatalogTool): boolean {
  return Boolean(catalog.deployments.get(tool.uid)?.active?.contract?.outputSchema ?? tool.definition.outputSchema);
}

/** What the program receives: the structured result where the tool declares an output schema, else the content. */
function resultAnswer(name: string, structured: boolean, result: CallToolResult): ToolAnswer {
  if (result.isError) {
    const text = result.content
      .map((item) => (item.type === "text" ? item.text : ""))
      .join("\n")
      .slice(0, 2000);
    const error: CodeModeError = {
      code: "upstream_error",
      message: text || "The upstream tool failed",
      details: { tool: name, upstream: true },
    };
    return { ok: false, error };
  }
  if (structured) return { ok: true, value: result.structuredContent ?? null };
  return {
    ok: true,
    value: { content: result.content, ...(result.structuredContent ? { structuredContent: result.structuredContent } : {}) },
  };
}

/** The refusal row a tool the caller cannot see still gets (tool blocked, in review, …); none for a name that matches no tool. */
function hiddenRun(caller: CodeModeCaller, catalog: Catalog, name: string): ToolCallRun | null {
  const tool = catalog.tools.get(name);
  if (!tool) return null;
  const access = decideAccess(catalog, caller.profileId, tool);
  const code = access.allowed ? "hook_outdated" : access.code;
  return {
    outcome: { kind: "hidden" },
    tool: { uid: tool.uid, serviceId: tool.serviceId },
    logs: [stageRow({ toolUid: tool.uid, requestId: caller.requestId }, { stage: "pre_dispatch", outcome: "refused", code })],
    shadow: null,
    captureDetails: false,
    timing: { startedAt: Date.now(), durationMs: 0, hooksMs: 0, upstreamMs: 0, upstreamOffsetMs: null },
    hookPolls: 0,
    revisionId: null,
    approved: false,
  };
}
