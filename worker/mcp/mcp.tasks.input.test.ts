import { SELF } from "cloudflare:test";
import { describe, it } from "vitest";
import { addService, createKey, createWorkspace, eventually, newTag, ORIGIN, upstreamOrigin } from "../../test/helpers.ts";
import { MAX_TASK_INPUT_REQUEST_BYTES, MAX_TASK_INPUT_REQUESTS } from "./mcp.tasks.input.ts";

/**
 * The bounds on what a 2025-11-25 upstream's task may ask of a 2026-07-28 requester, against a v1 `McpServer`
 * upstream whose task `ask_many` sends `count` elicitations at once, each at least `bytes` long
 * (demo/upstream/tasking.ts), and reports how each was answered or refused.
 */

const REVISION = "2026-07-28";
const TASKS = { extensions: { "io.modelcontextprotocol/tasks": {} } };
const CAPABILITIES = { ...TASKS, elicitation: { form: {} } };

async function taskingGateway() {
  const ws = await createWorkspace();
  await addService(ws, { slug: "asks", url: `${upstreamOrigin()}/fixtures/tasking/${newTag()}/mcp` });
  const key = await createKey(ws, ["tools:call"], ws.defaultProfileId);
  return { ...ws, key };
}

async function raw(key: string, method: string, params: Record<string, unknown>, capabilities: Record<string, unknown> = CAPABILITIES) {
  const name = method === "tools/call" ? params.name : params.taskId;
  const res = await SELF.fetch(`${ORIGIN}/mcp`, {
    method: "POST",
    headers: {
      authorization: `Bearer ${key}`,
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": REVISION,
      "mcp-method": method,
      "mcp-name": String(name),
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
  return (await res.json()) as { result?: Record<string, any>; error?: { code: number; message: string } };
}

const outcomes = (result: Record<string, any>) => ((result.content as { text: string }[])[0]!.text as string).split("\n");

describe("a sampling request during a task, at 2026-07-28", () => {
  it("is shown to the polls that declare sampling, and only to them, and the answer reaches the upstream", async ({ expect }) => {
    const gateway = await taskingGateway();
    const sampling = { ...TASKS, sampling: {} };
    const created = await raw(gateway.key, "tools/call", { name: "asks__ask_model", arguments: { prompt: "The answer?" } }, sampling);
    const taskId = created.result!.taskId as string;
    const waiting = await eventually(
      () => raw(gateway.key, "tasks/get", { taskId }, sampling),
      (answer) => answer.result?.status === "input_required",
    );
    expect(waiting.result!.inputRequests).toEqual({
      r1: {
        method: "sampling/createMessage",
        params: { messages: [{ role: "user", content: { type: "text", text: "The answer?" } }], maxTokens: 50 },
      },
    });
    // A poll that declares only elicitation is not shown a sampling request: to it the task is still working.
    expect((await raw(gateway.key, "tasks/get", { taskId }, CAPABILITIES)).result).toMatchObject({ status: "working" });
    expect((await raw(gateway.key, "tasks/get", { taskId }, CAPABILITIES)).result).not.toHaveProperty("inputRequests");
    const answer = { role: "assistant", content: { type: "text", text: "forty-two" }, model: "test-model" };
    await raw(gateway.key, "tasks/update", { taskId, inputResponses: { r1: answer } }, sampling);
    const done = await eventually(
      () => raw(gateway.key, "tasks/get", { taskId }, sampling),
      (polled) => polled.result?.status === "completed",
    );
    expect(outcomes(done.result!.result)).toEqual(["model said: forty-two"]);
  });
});

describe("the bounds on a task's input requests", () => {
  it(`shows at most ${MAX_TASK_INPUT_REQUESTS} waiting at once, and refuses the upstream's next at once`, async ({ expect }) => {
    const gateway = await taskingGateway();
    const created = await raw(gateway.key, "tools/call", {
      name: "asks__ask_many",
      arguments: { count: MAX_TASK_INPUT_REQUESTS + 1, bytes: 0 },
    });
    const taskId = created.result!.taskId as string;
    const waiting = await eventually(
      () => raw(gateway.key, "tasks/get", { taskId }),
      (answer) => Object.keys(answer.result?.inputRequests ?? {}).length >= MAX_TASK_INPUT_REQUESTS,
    );
    const keys = Object.keys(waiting.result!.inputRequests);
    expect(keys).toHaveLength(MAX_TASK_INPUT_REQUESTS);
    const inputResponses = Object.fromEntries(keys.map((key) => [key, { action: "accept", content: { answer: key } }]));
    expect((await raw(gateway.key, "tasks/update", { taskId, inputResponses })).result).toMatchObject({ resultType: "complete" });
    const done = await eventually(
      () => raw(gateway.key, "tasks/get", { taskId }),
      (answer) => answer.result?.status === "completed",
    );
    const reported = outcomes(done.result!.result);
    expect(reported.filter((line) => line.startsWith("accept:"))).toHaveLength(MAX_TASK_INPUT_REQUESTS);
    expect(reported.filter((line) => line.startsWith("refused:"))).toEqual([
      `refused:MCP error -32603: The task already waits on ${MAX_TASK_INPUT_REQUESTS} requests, or its hold has ended`,
    ]);
  });

  it(`refuses at once a request over ${MAX_TASK_INPUT_REQUEST_BYTES} bytes, which no poll is shown`, async ({ expect }) => {
    const gateway = await taskingGateway();
    const created = await raw(gateway.key, "tools/call", {
      name: "asks__ask_many",
      arguments: { count: 1, bytes: MAX_TASK_INPUT_REQUEST_BYTES + 1 },
    });
    const taskId = created.result!.taskId as string;
    const statuses = new Set<string>();
    const done = await eventually(
      () => raw(gateway.key, "tasks/get", { taskId }),
      (answer) => (statuses.add(answer.result?.status), answer.result?.status === "completed"),
    );
    expect(statuses.has("input_required")).toBe(false);
    expect(outcomes(done.result!.result)).toEqual([
      expect.stringMatching(new RegExp(`^refused:MCP error -32603: The request is \\d+ bytes, over the ${MAX_TASK_INPUT_REQUEST_BYTES}`)),
    ]);
  });
});
