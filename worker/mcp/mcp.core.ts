import {
  ErrorCode,
  UrlElicitationRequiredError,
  type CallToolResult,
  type ClientCapabilities,
  type Tool,
} from "@modelcontextprotocol/sdk/types.js";
import type { JsonObject } from "../../schema/hooks/contract.ts";
import { loadCatalog, type Catalog } from "../calls/catalog.ts";
import type { CallOutcome, ToolCallRun } from "../calls/outcome.ts";
import { runToolCall } from "../calls/pipeline.ts";
import { runShadow } from "../calls/shadow.ts";
import { codeRunEntry } from "../codemode/codemode.record.ts";
import { callCodeModeTool, isCodeModeCall, isDirectCallOffered, RUN_CODE, toolsForDiscovery } from "../codemode/codemode.tools.ts";
import { afterResponse, type WaitUntil } from "../lib/after-response.ts";
import { newId } from "../lib/ids.ts";
import { writeCodeRun } from "../logs/code-runs.store.ts";
import { insertLogStatements, type CallLogEntry } from "../logs/logs.store.ts";
import type { UpstreamCallOptions } from "../services/upstream.call.ts";
import { withGatewayLinks } from "./mcp.content.ts";
import { echoedName, UpstreamRpcError } from "./mcp.errors.ts";
import { ProtocolError } from "./mcp.hygiene.ts";
import type { PassThroughs } from "./mcp.passthrough.ts";
import { refusal } from "./mcp.results.ts";

/**
 * The request core: what a tools/list or tools/call does, whatever protocol
 * revision asked. Each revision's layer (mcp.legacy.ts for 2025-era traffic,
 * mcp.modern.ts for 2026-07-28) parses its wire format, builds the upstream
 * call options its transport allows, and calls these; the pipeline, its
 * policy, hooks, approvals, logs and bounds run here the same for every one.
 */

/** Who is calling /mcp: an API key with tools:call or an OAuth grant, bound to one workspace and profile. */
export interface Caller {
  workspaceId: string;
  keyId: string;
  /** Who made the call, as its log rows record it: `key:<key id>` or `oauth:<client_id>`. */
  actor: string;
  profileId: string | null;
  /** Whose upstream grants the caller's calls use on services authorized per user (mcp-caller.ts). */
  grantSubject: string;
  origin: string;
  /**
   * Whether the request's credentials still authenticate this same caller (not revoked, same profile): a Code
   * Mode run asks before each inner call, since a run outlives the key cache's 2 s by up to a minute.
   */
  stillAuthorized: () => Promise<boolean>;
}

/** One request's caller with what every handler needs to reach the workspace. */
export interface GatewayCore {
  env: Env;
  caller: Caller;
  waitUntil: WaitUntil;
}

export const coreCatalog = (core: GatewayCore): Promise<Catalog> => loadCatalog(core.env, core.caller.workspaceId, core.waitUntil);

/** `tools/list`: what the caller's profile shows a client that declares `capabilities`. */
export async function listTools(core: GatewayCore, capabilities: ClientCapabilities | undefined): Promise<Tool[]> {
  return toolsForDiscovery(await coreCatalog(core), core.caller.profileId, capabilities);
}

/** What one revision's layer hands a tools/call besides its name and arguments. */
export interface ToolCallRequest {
  name: string;
  arguments: JsonObject;
  /** Progress, cancellation and relayed requests, as this revision's transport carries them. */
  upstream: UpstreamCallOptions;
  /** What the client declared: in its session (2025 era) or in this request's `_meta` (2026-07-28). */
  clientCapabilities: ClientCapabilities | undefined;
  /** Results this answer carries as the upstream's bytes. */
  passThroughs: PassThroughs;
  /**
   * Whether the revision lets a tools/call answer with the URL-mode elicitation error (-32042), 2025-11-25's
   * way of sending the user to a URL; 2026-07-28 asks for URLs in an input-required result instead.
   */
  urlElicitationError: boolean;
}

/** `tools/call`: a Code Mode tool or one direct call through the pipeline, as the MCP result the client gets. */
export async function callTool(core: GatewayCore, call: ToolCallRequest): Promise<CallToolResult> {
  const { env, caller, waitUntil } = core;
  const catalog = await coreCatalog(core);
  const { name, arguments: args } = call;
  const approvalsUrl = `${caller.origin}/v1/workspaces/${caller.workspaceId}/approvals`;
  if (isCodeModeCall(catalog, caller.profileId, name)) {
    const requestId = newId("req");
    const started = Date.now();
    const { result, inner } = await callCodeModeTool(
      { env, catalog, loadCatalog: () => coreCatalog(core), ...caller, requestId, approvalsUrl, signal: call.upstream.signal },
      name,
      args,
    );
    for (const innerCall of inner) if (innerCall.run) scheduleAfterResponse(env, waitUntil, caller, innerCall.run, innerCall.index);
    if (name === RUN_CODE) {
      const run = { keyId: caller.keyId, actor: caller.actor, requestId };
      const durationMs = Date.now() - started;
      afterResponse(waitUntil, "code run log write", async () =>
        writeCodeRun(env.DB, caller.workspaceId, await codeRunEntry(run, args, result, inner.length, durationMs)),
      );
    }
    return result;
  }
  // A profile in Code Mode only reaches tools through run_code.
  if (!isDirectCallOffered(catalog, caller.profileId)) return toWire({ kind: "hidden" }, name, call);
  const run = await runToolCall({
    env,
    catalog,
    publicName: name,
    workspaceId: caller.workspaceId,
    keyId: caller.keyId,
    profileId: caller.profileId,
    arguments: args,
    requestId: newId("req"),
    approvalsUrl,
    upstream: call.upstream,
    clientCapabilities: call.clientCapabilities,
    grantSubject: caller.grantSubject,
  });
  scheduleAfterResponse(env, waitUntil, caller, run);
  return withGatewayLinks(toWire(run.outcome, name, call), name);
}

/**
 * The one place a call's deferred work starts: its log rows, and the shadow
 * revision's run with its own rows. Both wait for the response to go out,
 * because a local D1 write or a QuickJS run would otherwise hold the thread.
 */
function scheduleAfterResponse(env: Env, waitUntil: WaitUntil, caller: Caller, run: ToolCallRun, callIndex?: number): void {
  const write = (entries: CallLogEntry[]) => writeLogs(env, caller, run.captureDetails, entries);
  if (run.logs.length) afterResponse(waitUntil, "call log write", () => write(run.logs));
  const shadow = run.shadow;
  if (shadow) {
    // A Code Mode inner call's shadow rows carry its index, like its live rows.
    afterResponse(waitUntil, "shadow run", async () => write((await runShadow(shadow)).map((entry) => ({ ...entry, callIndex }))));
  }
}

/** A call's outcome as MCP puts it on the wire. */
function toWire(outcome: CallOutcome, publicName: string, call: ToolCallRequest): CallToolResult {
  switch (outcome.kind) {
    case "result":
      return outcome.result;
    case "raw_result":
      return call.passThroughs.hold(outcome.raw.bytes);
    case "refused":
      if (outcome.code === "upstream_authorization_required" && call.urlElicitationError) urlElicitation(outcome, call.clientCapabilities);
      return refusal(outcome.code, outcome.message, outcome.details);
    case "hidden":
      // Unknown and blocked look the same, so a client learns nothing about tools its profile may not use.
      throw new ProtocolError(ErrorCode.InvalidParams, `Unknown tool: ${echoedName(publicName)}`);
    case "upstream_rpc_error":
      throw new UpstreamRpcError(outcome.error);
  }
}

/**
 * A caller who must authorize their own upstream grant, through a client that
 * declared URL-mode elicitation: the MCP spec's URLElicitationRequiredError
 * (-32042), whose URL the client shows the user. Other clients get the
 * refusal as an `isError` result with the URL in its details.
 */
function urlElicitation(outcome: Extract<CallOutcome, { kind: "refused" }>, capabilities: ClientCapabilities | undefined): void {
  const url = outcome.details.authorizationUrl;
  if (typeof url !== "string" || !capabilities?.elicitation?.url) return;
  throw new UrlElicitationRequiredError([{ mode: "url", elicitationId: newId("eli"), url, message: outcome.message }], outcome.message);
}

async function writeLogs(env: Env, caller: Caller, captureDetails: boolean, entries: CallLogEntry[]): Promise<void> {
  if (!entries.length) return;
  await env.DB.batch(insertLogStatements(env.DB, caller.workspaceId, caller.actor, entries, captureDetails, new Date().toISOString()));
}
