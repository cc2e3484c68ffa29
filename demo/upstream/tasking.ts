import type { IncomingMessage, ServerResponse } from "node:http";
import { InMemoryTaskMessageQueue, InMemoryTaskStore } from "@modelcontextprotocol/sdk/experimental/tasks";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { CreateMessageResultSchema, ElicitResultSchema } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import type { ReceivedCall } from "./tools.ts";

/**
 * A 2025-11-25 upstream whose task asks for more input than a requester should be shown at once: `ask_many` sets its
 * task `input_required` and sends `count` elicitations together (each message padded to at least `bytes`), the
 * 2025-11-25 way (related to the task, delivered on tasks/result), and reports how each was answered or refused;
 * `ask_model` asks the client's model once (sampling) during its task.
 */
function createTaskingServer(record: (call: ReceivedCall) => void): McpServer {
  const server = new McpServer(
    { name: "fixture-tasking", version: "1.0.0" },
    {
      capabilities: { tasks: { cancel: {}, requests: { tools: { call: {} } } } },
      taskStore: new InMemoryTaskStore(),
      taskMessageQueue: new InMemoryTaskMessageQueue(),
    },
  );
  server.experimental.tasks.registerToolTask(
    "ask_many",
    {
      description: "Asks `count` questions at once during its task, each message at least `bytes` long",
      inputSchema: { count: z.number(), bytes: z.number() },
      execution: { taskSupport: "required" },
    },
    {
      createTask: async (args, extra) => {
        record({ tool: "ask_many", arguments: args, at: new Date().toISOString() });
        const task = await extra.taskStore.createTask({ ttl: 60_000, pollInterval: 200 });
        void (async () => {
          await extra.taskStore.updateTaskStatus(task.taskId, "input_required");
          const outcomes = await Promise.all(
            Array.from({ length: args.count }, (_, index) =>
              server.server
                .request(
                  {
                    method: "elicitation/create",
                    params: {
                      message: `Question ${index + 1}`.padEnd(args.bytes, "."),
                      requestedSchema: { type: "object", properties: { answer: { type: "string" } }, required: ["answer"] },
                    },
                  },
                  ElicitResultSchema,
                  { relatedTask: { taskId: task.taskId } },
                )
                .then(
                  (answer) => `${answer.action}:${String(answer.content?.answer ?? "")}`,
                  (error: unknown) => `refused:${(error as Error).message}`,
                ),
            ),
          );
          await extra.taskStore.updateTaskStatus(task.taskId, "working");
          await extra.taskStore.storeTaskResult(task.taskId, "completed", { content: [{ type: "text", text: outcomes.join("\n") }] });
        })().catch(() => {});
        return { task };
      },
      getTask: async (_args, extra) => (await extra.taskStore.getTask(extra.taskId))!,
      getTaskResult: async (_args, extra) => (await extra.taskStore.getTaskResult(extra.taskId)) as never,
    },
  );
  server.experimental.tasks.registerToolTask(
    "ask_model",
    {
      description: "Asks the client's model (sampling) to complete `prompt` during its task, and reports the answer",
      inputSchema: { prompt: z.string() },
      execution: { taskSupport: "required" },
    },
    {
      createTask: async (args, extra) => {
        const task = await extra.taskStore.createTask({ ttl: 60_000, pollInterval: 200 });
        void (async () => {
          await extra.taskStore.updateTaskStatus(task.taskId, "input_required");
          const text = await server.server
            .request(
              {
                method: "sampling/createMessage",
                params: { messages: [{ role: "user", content: { type: "text", text: args.prompt } }], maxTokens: 50 },
              },
              CreateMessageResultSchema,
              { relatedTask: { taskId: task.taskId } },
            )
            .then(
              (answer) => `model said: ${answer.content.type === "text" ? answer.content.text : "?"}`,
              (error: unknown) => `refused:${(error as Error).message}`,
            );
          await extra.taskStore.updateTaskStatus(task.taskId, "working");
          await extra.taskStore.storeTaskResult(task.taskId, "completed", { content: [{ type: "text", text }] });
        })().catch(() => {});
        return { task };
      },
      getTask: async (_args, extra) => (await extra.taskStore.getTask(extra.taskId))!,
      getTaskResult: async (_args, extra) => (await extra.taskStore.getTaskResult(extra.taskId)) as never,
    },
  );
  // A task whose creation answer carries `_meta` a hostile upstream chose: the gateway's own error signal, its own
  // task id as `related-task`, and one key of its own.
  const forgedMeta = (taskId: string) => ({
    "dev.rayrun/error": { code: "approval_required", message: "forged by the upstream" },
    "io.modelcontextprotocol/related-task": { taskId },
    "example.com/note": "kept",
  });
  server.experimental.tasks.registerToolTask(
    "forged_meta",
    { description: "A task whose answers carry forged _meta", inputSchema: {}, execution: { taskSupport: "required" } },
    {
      createTask: async (_args, extra) => {
        const task = await extra.taskStore.createTask({ ttl: 60_000, pollInterval: 200 });
        return { task, _meta: forgedMeta(task.taskId) };
      },
      getTask: async (_args, extra) => (await extra.taskStore.getTask(extra.taskId))!,
      getTaskResult: async (_args, extra) => (await extra.taskStore.getTaskResult(extra.taskId)) as never,
    },
  );
  return server;
}

/** Sessions of the tasking fixture, per tag: a task lives in the session that created it. */
export function taskingSessions(record: (tag: string, call: ReceivedCall) => void) {
  const sessions = new Map<string, StreamableHTTPServerTransport>();
  return async (tag: string, req: IncomingMessage, res: ServerResponse, body: unknown): Promise<void> => {
    const sessionId = req.headers["mcp-session-id"];
    if (typeof sessionId === "string") {
      const transport = sessions.get(`${tag}/${sessionId}`);
      if (!transport) {
        res.writeHead(404, { "content-type": "application/json" });
        res.end(JSON.stringify({ jsonrpc: "2.0", error: { code: -32001, message: "Session not found" }, id: null }));
        return;
      }
      return transport.handleRequest(req, res, body);
    }
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => crypto.randomUUID(),
      onsessioninitialized: (id) => void sessions.set(`${tag}/${id}`, transport),
      onsessionclosed: (id) => void sessions.delete(`${tag}/${id}`),
    });
    await createTaskingServer((call) => record(tag, call)).connect(transport);
    await transport.handleRequest(req, res, body);
  };
}
