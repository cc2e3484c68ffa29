import { SELF } from "cloudflare:test";
import { Client, StreamableHTTPClientTransport, type ClientCapabilities } from "@modelcontextprotocol/client";
import {
  createTaskSessionFromClient,
  resultFromTaskOutcome,
  type ApplicationInputHandler,
  type ApplicationInputRequest,
  type RawClientDispatch,
  type ResolvedInputExchangeContext,
} from "@modelcontextprotocol/ext-tasks/client";
import { Client as LegacyClient } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport as LegacyTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import {
  CallToolResultSchema,
  CreateTaskResultSchema,
  ElicitRequestSchema,
  RELATED_TASK_META_KEY,
} from "@modelcontextprotocol/sdk/types.js";
import { CfWorkerJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/cfworker-provider.js";
import { describe, it } from "vitest";
import { api, createKey, eventually, ORIGIN } from "../../test/helpers.ts";
import { deployHook, everythingGateway, RESEARCH, RESEARCH_HOOK } from "./mcp.everything.fixtures.ts";

/**
 * The tasks extension of 2026-07-28 against real peers: the official requester (`@modelcontextprotocol/ext-tasks`)
 * on the v2 SDK client, through the gateway, to server-everything's task-only tool (a 2025-11-25 experimental task
 * upstream: no server that speaks the extension itself ships, see docs/mcp.md#tasks).
 */

const REVISION = "2026-07-28";
const EXTENSION = "io.modelcontextprotocol/tasks";

/** One raw 2026-07-28 request with the headers the revision requires; the JSON-RPC answer. */
async function raw(key: string, method: string, params: Record<string, unknown>, capabilities: ClientCapabilities = {}) {
  const name = method === "tools/call" ? params.name : method.startsWith("tasks/") ? params.taskId : undefined;
  const res = await SELF.fetch(`${ORIGIN}/mcp`, {
    method: "POST",
    headers: {
      authorization: `Bearer ${key}`,
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": REVISION,
      "mcp-method": method,
      ...(typeof name === "string" ? { "mcp-name": name } : {}),
    },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method,
      params: {
        ...params,
        _meta: { "io.modelcontextprotocol/protocolVersion": REVISION, "io.modelcontextprotocol/clientCapabilities": capabilities },
      },
    }),
  });
  return (await res.json()) as { result?: Record<string, any>; error?: { code: number; message: string; data?: any } };
}

const WITH_TASKS = { extensions: { [EXTENSION]: {} } } as ClientCapabilities;

/** The raw request path ext-tasks asks its host for: the SDK client's codecs refuse a `resultType: "task"`. */
function rawDispatchFor(key: string): RawClientDispatch {
  return async (request) => {
    const { method, params } = request as { method: string; params: Record<string, unknown> };
    const { _meta, ...rest } = params;
    const answer = await raw(key, method, rest, (_meta as Record<string, unknown>)["io.modelcontextprotocol/clientCapabilities"] as never);
    return answer.error ? { kind: "error", error: answer.error } : { kind: "result", result: answer.result! };
  };
}

async function connectModern(key: string): Promise<Client> {
  const client = new Client({ name: "tasks-agent", version: "1.0.0" }, { versionNegotiation: { mode: { pin: REVISION } } });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${ORIGIN}/mcp`), {
      fetch: (input, init) => SELF.fetch(input as string, init),
      requestInit: { headers: { authorization: `Bearer ${key}` } },
    }),
  );
  return client;
}

/** An ext-tasks session on a v2 client pinned to 2026-07-28 (the package's V2 generation). */
async function taskSession(key: string, input?: { capabilities: ClientCapabilities; onInputRequest: ApplicationInputHandler["handle"] }) {
  const client = await connectModern(key);
  return createTaskSessionFromClient(client, {
    endpointId: "rayrun-test",
    rawDispatch: rawDispatchFor(key),
    v2RequestFraming: {
      protocolVersion: REVISION,
      clientInfo: { name: "tasks-agent", version: "1.0.0" },
      clientCapabilities: (input?.capabilities ?? {}) as never,
    },
    ...(input ? { onInputRequest: input.onInputRequest } : {}),
  });
}

const texts = (result: unknown) => ((result as { content: { text: string }[] }).content ?? []).map((block) => block.text);

describe("the tasks extension at 2026-07-28", () => {
  it("is advertised by server/discover, and ext-tasks runs server-everything's task-only tool as a task through the gateway", async ({
    expect,
  }) => {
    const gateway = await everythingGateway();
    const discovered = await raw(gateway.key, "server/discover", {});
    expect(discovered.result!.capabilities.extensions).toEqual({ [EXTENSION]: {} });
    expect(discovered.result!.capabilities.tasks).toBeUndefined();

    const session = await taskSession(gateway.key);
    expect(session.capabilities.execution).toBe(true);
    const execution = await session.callTool(RESEARCH, { topic: "tides" });
    expect(execution.kind).toBe("task");
    expect(execution.handle?.taskId).toMatch(/^tsk_/);
    const { outcome } = await execution.settle();
    expect(outcome.status).toBe("completed");
    expect(texts(resultFromTaskOutcome(outcome)).join("\n")).toContain("Research Report: tides");
    await session.close();
  });

  it("keeps one workspace's task out of another's reach, and another key's", async ({ expect }) => {
    const gateway = await everythingGateway();
    const created = await raw(gateway.key, "tools/call", { name: RESEARCH, arguments: { topic: "reefs" } }, WITH_TASKS);
    expect(created.result).toMatchObject({ resultType: "task", status: "working", taskId: expect.stringMatching(/^tsk_/) });
    // Flat: no 2025-11-25 `task` wrapper, and nothing of a tool result.
    expect(created.result!.task).toBeUndefined();
    expect(created.result!.content).toBeUndefined();
    const taskId = created.result!.taskId as string;
    const stranger = await everythingGateway();
    const colleague = await createKey(gateway, ["tools:call"], gateway.defaultProfileId);
    for (const key of [stranger.key, colleague]) {
      for (const method of ["tasks/get", "tasks/cancel"]) {
        expect((await raw(key, method, { taskId }, WITH_TASKS)).error).toMatchObject({ code: -32602, message: "Task not found" });
      }
      const update = await raw(key, "tasks/update", { taskId, inputResponses: {} }, WITH_TASKS);
      expect(update.error).toMatchObject({ code: -32602, message: "Task not found" });
    }
    // The owner's task ran on, untouched.
    const done = await eventually(
      () => raw(gateway.key, "tasks/get", { taskId }, WITH_TASKS),
      (answer) => answer.result?.status === "completed",
      20_000,
    );
    expect(texts(done.result!.result).join("\n")).toContain("Research Report: reefs");
    // The upstream's task id stays inside the gateway: the result does not name it.
    expect(done.result!.result._meta?.["io.modelcontextprotocol/related-task"]).toBeUndefined();
  });

  it("runs the hook's before at creation and its after once on the result, which later polls answer again", async ({ expect }) => {
    const gateway = await everythingGateway();
    await deployHook(gateway, "simulate-research-query", RESEARCH_HOOK);
    const session = await taskSession(gateway.key);
    const execution = await session.callTool(RESEARCH, { topic: "tides" });
    const taskId = execution.handle!.taskId;
    const result = texts(resultFromTaskOutcome((await execution.settle()).outcome));
    expect(result[0]).toMatch(/^after saw \d+ blocks$/);
    // The upstream researched the topic `before` wrote.
    expect(result.slice(1).join("\n")).toContain("Research Report: hooked tides");
    await session.close();
    const again = await raw(gateway.key, "tasks/get", { taskId }, WITH_TASKS);
    expect(again.result).toMatchObject({ resultType: "complete", taskId, status: "completed" });
    expect(texts(again.result!.result)).toEqual(result);
    // One row for the creation, one for the result: polls do not run `after` again.
    const rows = await eventually(
      async () => (await api(`/v1/workspaces/${gateway.ws}/logs`, { key: gateway.adminKey })).body.calls as { name: string }[],
      (calls) => calls.filter((call) => call.name === RESEARCH).length >= 2,
    );
    expect(rows.filter((call) => call.name === RESEARCH)).toHaveLength(2);
  });

  it("passes tasks/cancel on and acknowledges it with an empty result, on a running and on an ended task", async ({ expect }) => {
    const gateway = await everythingGateway();
    const created = await raw(gateway.key, "tools/call", { name: RESEARCH, arguments: { topic: "moons" } }, WITH_TASKS);
    const taskId = created.result!.taskId as string;
    const cancelled = await raw(gateway.key, "tasks/cancel", { taskId }, WITH_TASKS);
    expect(cancelled.result).toMatchObject({ resultType: "complete" });
    for (const field of ["taskId", "status", "result", "error"]) expect(cancelled.result).not.toHaveProperty(field);
    const after = await raw(gateway.key, "tasks/get", { taskId }, WITH_TASKS);
    expect(after.result).toMatchObject({ taskId, status: "cancelled" });
    expect(after.result!.result).toBeUndefined();
    const again = await raw(gateway.key, "tasks/cancel", { taskId }, WITH_TASKS);
    expect(again.result).toMatchObject({ resultType: "complete" });
    expect(again.result).not.toHaveProperty("status");
  });

  it("answers what the revision refuses with its codes and one line", async ({ expect }) => {
    const gateway = await everythingGateway();
    for (const method of ["tasks/get", "tasks/update", "tasks/cancel"]) {
      const undeclared = await raw(gateway.key, method, { taskId: "tsk_x", inputResponses: {} });
      expect(undeclared.error).toMatchObject({
        code: -32021,
        message: `${method} needs the ${EXTENSION} extension in the request's client capabilities`,
        data: { requiredCapabilities: { extensions: { [EXTENSION]: {} } } },
      });
    }
    expect((await raw(gateway.key, "tasks/get", { taskId: 7 }, WITH_TASKS)).error).toMatchObject({
      code: -32602,
      message: "Invalid params: tasks/get needs params.taskId, a string",
    });
    expect((await raw(gateway.key, "tasks/update", { taskId: "tsk_x", inputResponses: [] }, WITH_TASKS)).error).toMatchObject({
      code: -32602,
      message: "Invalid params: tasks/update needs params.inputResponses, an object",
    });
    expect((await raw(gateway.key, "tasks/get", { taskId: "tsk_0000000000000000000000000000000" }, WITH_TASKS)).error).toMatchObject({
      code: -32602,
      message: "Task not found",
    });
    // Gone from this revision: the result is inlined on tasks/get, and there is no inventory.
    for (const method of ["tasks/result", "tasks/list"]) {
      expect((await raw(gateway.key, method, { taskId: "tsk_x" }, WITH_TASKS)).error).toMatchObject({ code: -32601 });
    }
  });

  it("gives a client without the extension the upstream task's request as an input-required round of its plain call", async ({
    expect,
  }) => {
    const gateway = await everythingGateway();
    const client = new Client(
      { name: "plain-agent", version: "1.0.0" },
      { capabilities: { elicitation: { form: {} } }, versionNegotiation: { mode: { pin: REVISION } } },
    );
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${ORIGIN}/mcp`), {
        fetch: (input, init) => SELF.fetch(input as string, init),
        requestInit: { headers: { authorization: `Bearer ${gateway.key}` } },
      }),
    );
    const asked: Record<string, unknown>[] = [];
    client.setRequestHandler("elicitation/create", async (request) => {
      asked.push(request.params as Record<string, unknown>);
      return { action: "accept", content: { interpretation: "comedy" } };
    });
    const result = await client.callTool({ name: RESEARCH, arguments: { topic: "python", ambiguous: true } });
    expect(texts(result).join("\n")).toContain("Research Report: python (comedy)");
    // The client asked for no task: the request names none, the upstream's least of all.
    expect(asked).toHaveLength(1);
    expect(JSON.stringify(asked[0])).not.toContain("related-task");
  });

  it("gives a client without the extension no task: a task-only tool's result, waited for", async ({ expect }) => {
    const gateway = await everythingGateway();
    const plain = await raw(gateway.key, "tools/call", { name: RESEARCH, arguments: { topic: "dunes" } });
    expect(plain.result).toMatchObject({ resultType: "complete" });
    expect(plain.result!.taskId).toBeUndefined();
    expect(texts(plain.result).join("\n")).toContain("Research Report: dunes");
  });
});

/** What the requester's user answers server-everything's clarification request with, and what each request was. */
function clarifying(interpretation: string) {
  const asked: { request: ApplicationInputRequest; context: ResolvedInputExchangeContext }[] = [];
  const onInputRequest = (async (request: ApplicationInputRequest, context: ResolvedInputExchangeContext) => {
    asked.push({ request, context });
    return { action: "accept", content: { interpretation } };
  }) as ApplicationInputHandler["handle"];
  return { asked, onInputRequest };
}

const WITH_TASKS_AND_ELICITATION = { ...WITH_TASKS, elicitation: { form: {} } } as ClientCapabilities;

describe("a task whose upstream asks for input, at 2026-07-28", () => {
  it("shows the upstream's elicitation on tasks/get and passes ext-tasks' tasks/update answer to it", async ({ expect }) => {
    const gateway = await everythingGateway();
    const user = clarifying("historical");
    const session = await taskSession(gateway.key, { capabilities: { elicitation: { form: {} } }, onInputRequest: user.onInputRequest });
    const execution = await session.callTool(RESEARCH, { topic: "tides", ambiguous: true });
    expect(execution.kind).toBe("task");
    const { outcome } = await execution.settle();
    expect(outcome.status).toBe("completed");
    expect(texts(resultFromTaskOutcome(outcome)).join("\n")).toContain("Research Report: tides (historical)");
    expect(user.asked).toHaveLength(1);
    expect(user.asked[0]!.request).toMatchObject({ kind: "elicitation", params: { message: expect.stringContaining('"tides"') } });
    expect(user.asked[0]!.context).toMatchObject({
      scope: "task",
      delivery: "task-update",
      taskId: execution.handle!.taskId,
      inputId: "r1",
    });
    await session.close();
  });

  it("answers the wire as the extension says: input_required with the request under its key, tasks/update acknowledged", async ({
    expect,
  }) => {
    const gateway = await everythingGateway();
    const created = await raw(
      gateway.key,
      "tools/call",
      { name: RESEARCH, arguments: { topic: "reefs", ambiguous: true } },
      WITH_TASKS_AND_ELICITATION,
    );
    const taskId = created.result!.taskId as string;
    const waiting = await eventually(
      () => raw(gateway.key, "tasks/get", { taskId }, WITH_TASKS_AND_ELICITATION),
      (answer) => answer.result?.status === "input_required",
    );
    expect(waiting.result).toMatchObject({
      resultType: "complete",
      taskId,
      status: "input_required",
      inputRequests: { r1: { method: "elicitation/create", params: { requestedSchema: { required: ["interpretation"] } } } },
    });
    // The upstream's own task id stays inside the gateway: the request names no task.
    expect(JSON.stringify(waiting.result!.inputRequests)).not.toContain("related-task");
    // Another credential's answer does not reach the task; an answer for a key not outstanding is ignored.
    const colleague = await createKey(gateway, ["tools:call"], gateway.defaultProfileId);
    const answer = { r1: { action: "accept", content: { interpretation: "current" } } };
    expect((await raw(colleague, "tasks/update", { taskId, inputResponses: answer }, WITH_TASKS)).error).toMatchObject({
      code: -32602,
      message: "Task not found",
    });
    const unknownKey = await raw(gateway.key, "tasks/update", { taskId, inputResponses: { r7: answer.r1 } }, WITH_TASKS);
    expect(unknownKey.result).toMatchObject({ resultType: "complete" });
    expect(unknownKey.result).not.toHaveProperty("status");
    expect((await raw(gateway.key, "tasks/get", { taskId }, WITH_TASKS_AND_ELICITATION)).result).toMatchObject({
      status: "input_required",
    });
    const updated = await raw(gateway.key, "tasks/update", { taskId, inputResponses: answer }, WITH_TASKS);
    expect(updated.result).toMatchObject({ resultType: "complete" });
    const done = await eventually(
      () => raw(gateway.key, "tasks/get", { taskId }, WITH_TASKS),
      (polled) => polled.result?.status === "completed",
    );
    expect(texts(done.result!.result).join("\n")).toContain("Research Report: reefs (current)");
  });

  it("refuses the upstream's request at once for polls that do not declare elicitation: the upstream goes on without it", async ({
    expect,
  }) => {
    const gateway = await everythingGateway();
    // The task's session declares elicitation (the creating request did), so the upstream asks; no poll can answer.
    const created = await raw(
      gateway.key,
      "tools/call",
      { name: RESEARCH, arguments: { topic: "dunes", ambiguous: true } },
      WITH_TASKS_AND_ELICITATION,
    );
    const taskId = created.result!.taskId as string;
    const statuses = new Set<string>();
    const done = await eventually(
      () => raw(gateway.key, "tasks/get", { taskId }, WITH_TASKS),
      (polled) => (statuses.add(polled.result?.status), polled.result?.status === "completed"),
    );
    expect(statuses.has("input_required")).toBe(false);
    expect(texts(done.result!.result).join("\n")).toContain("elicitation unavailable");
  });
});

describe("ext-tasks at 2025-11-25", () => {
  it("runs the same tool as a 2025-11-25 experimental task through the gateway (the package's V1 generation)", async ({ expect }) => {
    const gateway = await everythingGateway();
    const client = new Client({ name: "tasks-agent", version: "1.0.0" }, { versionNegotiation: { mode: "legacy" } });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${ORIGIN}/mcp`), {
        fetch: (input, init) => SELF.fetch(input as string, init),
        requestInit: { headers: { authorization: `Bearer ${gateway.key}` } },
      }),
    );
    const session = createTaskSessionFromClient(client, { endpointId: "rayrun-test-v1" });
    const execution = await session.callTool(RESEARCH, { topic: "kelp" }, { task: { preference: "require" } });
    expect(execution.kind).toBe("task");
    const { outcome } = await execution.settle();
    expect(texts(resultFromTaskOutcome(outcome)).join("\n")).toContain("Research Report: kelp");
    await session.close();
  });

  it("relays the upstream task's elicitation on ext-tasks' poll, as a request related to the gateway's task", async ({ expect }) => {
    const gateway = await everythingGateway();
    const client = new Client(
      { name: "tasks-agent", version: "1.0.0" },
      { capabilities: { elicitation: { form: {} } }, versionNegotiation: { mode: "legacy" } },
    );
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${ORIGIN}/mcp`), {
        fetch: (input, init) => SELF.fetch(input as string, init),
        requestInit: { headers: { authorization: `Bearer ${gateway.key}` } },
      }),
    );
    const user = clarifying("programming");
    const session = createTaskSessionFromClient(client, { endpointId: "rayrun-test-v1", onInputRequest: user.onInputRequest });
    const execution = await session.callTool(RESEARCH, { topic: "python", ambiguous: true }, { task: { preference: "require" } });
    const { outcome } = await execution.settle();
    expect(texts(resultFromTaskOutcome(outcome)).join("\n")).toContain("Research Report: python (programming)");
    // ext-tasks matched the request to its task by the related-task id: the gateway's, never the upstream's.
    expect(user.asked).toHaveLength(1);
    expect(user.asked[0]!.context).toMatchObject({ scope: "task", taskId: execution.handle!.taskId });
    expect(execution.handle!.taskId).toMatch(/^tsk_/);
    await session.close();
  });

  it("relays it on tasks/result too, for a requester that waits there as the spec suggests (the v1 SDK client)", async ({ expect }) => {
    const gateway = await everythingGateway();
    const client = new LegacyClient(
      { name: "legacy-agent", version: "1.0.0" },
      { capabilities: { elicitation: {} }, jsonSchemaValidator: new CfWorkerJsonSchemaValidator() },
    );
    await client.connect(
      new LegacyTransport(new URL(`${ORIGIN}/mcp`), {
        fetch: (input, init) => SELF.fetch(input as string, init),
        requestInit: { headers: { authorization: `Bearer ${gateway.key}` } },
      }),
    );
    const related: unknown[] = [];
    client.setRequestHandler(ElicitRequestSchema, async (request) => {
      related.push(request.params._meta?.[RELATED_TASK_META_KEY]);
      return { action: "accept", content: { interpretation: "snake" } };
    });
    const created = await client.request(
      { method: "tools/call", params: { name: RESEARCH, arguments: { topic: "python", ambiguous: true }, task: {} } },
      CreateTaskResultSchema,
    );
    const taskId = created.task.taskId;
    const result = await client.request({ method: "tasks/result", params: { taskId } }, CallToolResultSchema, { timeout: 25_000 });
    expect(texts(result).join("\n")).toContain("Research Report: python (snake)");
    expect(related).toEqual([{ taskId }]);
    expect(taskId).toMatch(/^tsk_/);
    await client.close();
  });
});
