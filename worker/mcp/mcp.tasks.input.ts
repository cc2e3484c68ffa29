import type { ClientCapabilities, Result, ServerRequest } from "@modelcontextprotocol/sdk/types.js";
import type { Catalog } from "../calls/catalog.ts";
import { nowIso } from "../lib/ids.ts";
import { awaitInput, deliverInput, INPUT_HOLD_MS } from "./mcp.bridge.ts";
import type { GatewayCore } from "./mcp.caller.ts";
import { relayedCapabilities } from "./mcp.capabilities.ts";
import { isRecord } from "./mcp.errors.ts";
import { fetchUpstreamTaskResult, relayForTask, type FoundTask, type TaskInputRequests, type TaskRelay } from "./mcp.tasks.ts";

/**
 * Input a 2025-11-25 upstream's task asks for, surfaced to a 2026-07-28 requester through the task. The upstream
 * sets its task `input_required` and delivers its requests (`elicitation/create`, `sampling/createMessage`,
 * `roots/list`) on `tasks/result` only, which waits for the task's end; the tasks extension shows them on
 * `tasks/get` under `inputRequests` and takes the answers in `tasks/update`. So the first poll that sees the
 * upstream's task waiting claims it (one holder at a time, in the task's row), opens `tasks/result` with a relay of
 * the poll's declared capabilities, and keeps it open in its isolate (`waitUntil`) for at most TASK_INPUT_HOLD_MS:
 * each request the upstream sends is given a key (`r1`, `r2`, …, never reused over the task's life), written to the
 * row for every later poll to show, and waits there for its answer. A `tasks/update`, wherever it lands, hands each
 * answer to the holder through the task's CallRelayDO (as a call's retry does, mcp.bridge.ts), and the holder
 * passes it on. A request the poll did not declare the capability for is refused at once (the spec lets a server
 * show only what the request declares), as is one past the bounds below; one not answered in time is refused too,
 * and the hold ends. The upstream then decides what its task does, as with a call; a later poll that sees it still
 * waiting holds it again.
 */

/**
 * A 2025-11-25 client's `tasks/get` of a task whose upstream waits for input. A requester may poll on and never call
 * `tasks/result` (the spec asks it to expect the requests on any stream: ext-tasks polls), so the poll itself, on
 * its stream, carries them: the upstream's tasks/result is held while its requests are relayed (naming the
 * gateway's task) and answered, then let go once no further one comes within TASK_INPUT_QUIET_MS.
 */
export async function relayTaskInputOnPoll(core: GatewayCore, catalog: Catalog, task: FoundTask, relayed: TaskRelay): Promise<void> {
  if (!relayed.relay) return;
  const relay = relayed.relay;
  const done = new AbortController();
  let pending = 0;
  let quiet = setTimeout(() => done.abort(), FIRST_TASK_INPUT_WAIT_MS);
  const forward = async (request: ServerRequest, signal: AbortSignal): Promise<Result> => {
    pending++;
    clearTimeout(quiet);
    try {
      return await relay.forward(request, signal);
    } finally {
      if (--pending === 0) quiet = setTimeout(() => done.abort(), TASK_INPUT_QUIET_MS);
    }
  };
  const signal = relayed.signal ? AbortSignal.any([done.signal, relayed.signal]) : done.signal;
  try {
    await fetchUpstreamTaskResult(core, catalog, task, { relay: relayForTask({ ...relay, forward }, task.id), signal });
  } catch (error) {
    if (!signal.aborted) throw error;
  } finally {
    clearTimeout(quiet);
  }
}

/** How long a poll that relayed a request waits for the upstream's next one before it lets the upstream's tasks/result go. */
export const TASK_INPUT_QUIET_MS = 1_000;

/** How long one holder keeps the upstream's tasks/result open: within the 30 s Workers keeps `waitUntil` work. */
export const TASK_INPUT_HOLD_MS = INPUT_HOLD_MS;
/** How long the poll that starts a hold waits for the upstream's first request before it answers `working`. */
export const FIRST_TASK_INPUT_WAIT_MS = 3_000;
/** Requests of one task waiting for answers at once; past it the upstream's next request is refused. */
export const MAX_TASK_INPUT_REQUESTS = 8;
/** One request the row keeps for polls to show, as JSON; a larger one is refused. */
export const MAX_TASK_INPUT_REQUEST_BYTES = 64 * 1024;

/** What a tasks/get shows of a task whose upstream waits for input: the requests this poll may answer, or none yet. */
export async function taskInputRequests(
  core: GatewayCore,
  catalog: Catalog,
  task: FoundTask,
  capabilities: ClientCapabilities,
): Promise<TaskInputRequests | null> {
  const declared = relayedCapabilities(capabilities);
  if (task.input && Date.parse(task.input.until) > Date.now()) return shown(task.input.requests, declared);
  const token = crypto.randomUUID();
  const until = Date.now() + TASK_INPUT_HOLD_MS;
  // One holder at a time: a poll that loses the claim shows what the holder has written, on its next round.
  const claimed = await core.env.DB.prepare(
    `UPDATE gateway_tasks SET input_token = ?, input_until = ?, input_requests = NULL
     WHERE id = ? AND outcome IS NULL AND (input_until IS NULL OR input_until < ?)`,
  )
    .bind(token, new Date(until).toISOString(), task.id, nowIso())
    .run();
  if (!claimed.meta.changes) return null;
  let firstAsked!: () => void;
  const asked = new Promise<void>((resolve) => (firstAsked = resolve));
  core.waitUntil(holdTaskInput(core, catalog, task, { token, until, capabilities: declared }, firstAsked));
  let waited: ReturnType<typeof setTimeout> | undefined;
  await Promise.race([asked, new Promise<void>((resolve) => (waited = setTimeout(resolve, FIRST_TASK_INPUT_WAIT_MS)))]);
  clearTimeout(waited);
  const requests = await heldRequests(core, task.id, token);
  return requests ? shown(requests, declared) : null;
}

/**
 * `tasks/update`: each answer for a request the task is waiting on goes to its holder; an answer for any other key
 * (never issued, answered already, or past its hold) is ignored, as the extension asks.
 */
export async function answerTaskInput(core: GatewayCore, task: FoundTask, inputResponses: Record<string, unknown>): Promise<void> {
  const input = task.input;
  if (!input || Date.parse(input.until) <= Date.now()) return;
  const deliveries: Promise<unknown>[] = [];
  for (const [key, response] of Object.entries(inputResponses)) {
    if (!(key in input.requests) || !isRecord(response)) continue;
    deliveries.push(deliverInput(core.env, input.token, key, response), forgetRequest(core, task.id, input.token, key));
  }
  await Promise.all(deliveries);
}

/** The requests a poll declaring `declared` may see: only those of a capability it declared, as the spec says. */
function shown(requests: TaskInputRequests, declared: ClientCapabilities): TaskInputRequests | null {
  const visible = Object.entries(requests).filter(([, request]) => {
    const capability = CAPABILITY_OF[request.method];
    return capability !== undefined && declared[capability] !== undefined;
  });
  return visible.length ? Object.fromEntries(visible) : null;
}

const CAPABILITY_OF: Record<string, keyof ClientCapabilities> = {
  "elicitation/create": "elicitation",
  "sampling/createMessage": "sampling",
  "roots/list": "roots",
};

/** The holder: the upstream's tasks/result, open until the hold ends or the task does, each request it brings shown. */
async function holdTaskInput(
  core: GatewayCore,
  catalog: Catalog,
  task: FoundTask,
  hold: { token: string; until: number; capabilities: ClientCapabilities },
  firstAsked: () => void,
): Promise<void> {
  const ended = AbortSignal.timeout(Math.max(0, hold.until - Date.now()));
  const forward = async (request: ServerRequest): Promise<Result> => {
    const key = await issueKey(core, task.id, hold.token);
    const shownRequest = { method: request.method, ...(request.params ? { params: request.params as Record<string, unknown> } : {}) };
    const bytes = new TextEncoder().encode(JSON.stringify(shownRequest)).byteLength;
    if (bytes > MAX_TASK_INPUT_REQUEST_BYTES) {
      throw new Error(`The request is ${bytes} bytes, over the ${MAX_TASK_INPUT_REQUEST_BYTES} the gateway keeps for a task's requester`);
    }
    // Listening before the request is shown: an answer can never arrive before its listener.
    const answer = awaitInput(core.env, hold.token, key);
    const stored = await core.env.DB.prepare(
      `UPDATE gateway_tasks SET input_requests = json_set(COALESCE(input_requests, '{}'), '$.' || ?, json(?))
       WHERE id = ? AND input_token = ? AND (SELECT COUNT(*) FROM json_each(COALESCE(input_requests, '{}'))) < ?`,
    )
      .bind(key, JSON.stringify(shownRequest), task.id, hold.token, MAX_TASK_INPUT_REQUESTS)
      .run();
    if (!stored.meta.changes) throw new Error(`The task already waits on ${MAX_TASK_INPUT_REQUESTS} requests, or its hold has ended`);
    firstAsked();
    try {
      const response = await Promise.race([answer, new Promise<null>((resolve) => ended.addEventListener("abort", () => resolve(null)))]);
      if (!response) throw new Error("The requester did not answer the task's request in time");
      return response as Result;
    } finally {
      await forgetRequest(core, task.id, hold.token, key);
    }
  };
  const relay = relayForTask({ capabilities: hold.capabilities, forward, log: () => {} }, null);
  try {
    // Its result is not kept here: the poll that sees the task end fetches it, and runs it through `after`, once.
    await fetchUpstreamTaskResult(core, catalog, task, { relay, signal: ended });
  } catch (error) {
    if (!ended.aborted) console.error("a task's input hold ended early", error);
  } finally {
    // A task that ended before it asked anything: the poll waiting for a first request need not wait longer.
    firstAsked();
    await core.env.DB.prepare(
      "UPDATE gateway_tasks SET input_token = NULL, input_until = NULL, input_requests = NULL WHERE id = ? AND input_token = ?",
    )
      .bind(task.id, hold.token)
      .run();
  }
}

/** The next key of the task's input requests, unique over its life: `r<n>`. */
async function issueKey(core: GatewayCore, taskId: string, token: string): Promise<string> {
  const row = await core.env.DB.prepare(
    "UPDATE gateway_tasks SET input_rounds = input_rounds + 1 WHERE id = ? AND input_token = ? RETURNING input_rounds",
  )
    .bind(taskId, token)
    .first<{ input_rounds: number }>();
  if (!row) throw new Error("The task's input hold has ended");
  return `r${row.input_rounds}`;
}

async function heldRequests(core: GatewayCore, taskId: string, token: string): Promise<TaskInputRequests | null> {
  const row = await core.env.DB.prepare("SELECT input_requests FROM gateway_tasks WHERE id = ? AND input_token = ?")
    .bind(taskId, token)
    .first<{ input_requests: string | null }>();
  return row?.input_requests ? (JSON.parse(row.input_requests) as TaskInputRequests) : null;
}

function forgetRequest(core: GatewayCore, taskId: string, token: string, key: string) {
  return core.env.DB.prepare(
    "UPDATE gateway_tasks SET input_requests = json_remove(input_requests, '$.' || ?) WHERE id = ? AND input_token = ?",
  )
    .bind(key, taskId, token)
    .run();
}
