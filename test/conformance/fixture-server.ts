// The upstream the conformance suite's server scenarios expect (the npm package does not ship its
// reference server): every tool, resource, prompt and completion the scenarios call, by the names
// and with the content their checks read (see node_modules/@modelcontextprotocol/conformance/dist).
import { createServer, type IncomingMessage, type Server as HttpServer, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { InMemoryTaskMessageQueue, InMemoryTaskStore } from "@modelcontextprotocol/sdk/experimental/tasks";
import { McpServer, ResourceTemplate } from "@modelcontextprotocol/sdk/server/mcp.js";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { completable } from "@modelcontextprotocol/sdk/server/completable.js";
import {
  CallToolRequestSchema,
  ElicitResultSchema,
  ListToolsRequestSchema,
  type CallToolResult,
  type ElicitRequest,
  type ElicitResult,
} from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import { MemoryEventStore } from "../../demo/upstream/resilience.ts";

/** A 1×1 red PNG and a 44-byte silent WAV: the smallest valid media the checks accept. */
const PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==";
const WAV = "UklGRiQAAABXQVZFZm10IBAAAAABAAEAQB8AAIA+AAACABAAZGF0YQAAAAA=";

// Unreferenced: a scenario's long background job (slow_compute for a minute) must not keep the run's process alive.
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms).unref());
const text = (value: string): CallToolResult => ({ content: [{ type: "text", text: value }] });

/** Answers at once when the client (the gateway, until it relays them) lacks a capability, as the scenarios ask. */
const lacking = (capability: string): CallToolResult => ({
  isError: true,
  content: [{ type: "text", text: `The client did not declare the ${capability} capability` }],
});

/** Asks the task's requester (through the gateway) for the answers to `asked`, all at once, as `input_required`. */
type AskDuringTask = (asked: ElicitRequest["params"][]) => Promise<ElicitResult[]>;

/**
 * The tools the 2026-07-28 suite's task scenarios call (greet, slow_compute, failing_job, protocol_error_job,
 * confirm_delete, multi_input), as a 2025-11-25 server with experimental tasks offers them: the gateway passes their
 * tasks on to a client of the tasks extension. Each runs in the background and keeps its outcome in the SDK's task
 * store; the last two ask for input mid-task, the 2025-11-25 way (`input_required`, the requests related to the task
 * and delivered on tasks/result).
 */
function registerTaskTools(mcp: McpServer): void {
  mcp.registerTool("greet", { description: "Greets by name", inputSchema: { name: z.string() } }, ({ name }) => text(`Hello, ${name}!`));
  const inBackground = (
    name: string,
    description: string,
    taskSupport: "optional" | "required",
    inputSchema: z.ZodRawShape,
    run: (args: Record<string, unknown>, ask: AskDuringTask) => Promise<{ status: "completed" | "failed"; result: CallToolResult }>,
  ) =>
    mcp.experimental.tasks.registerToolTask(
      name,
      { description, inputSchema, execution: { taskSupport } },
      {
        createTask: async (args, extra) => {
          const task = await extra.taskStore.createTask({ ttl: 60_000, pollInterval: 200 });
          const ask: AskDuringTask = async (asked) => {
            await extra.taskStore.updateTaskStatus(task.taskId, "input_required");
            const answers = await Promise.all(
              asked.map((params) =>
                mcp.server.request({ method: "elicitation/create", params }, ElicitResultSchema, { relatedTask: { taskId: task.taskId } }),
              ),
            );
            await extra.taskStore.updateTaskStatus(task.taskId, "working");
            return answers;
          };
          void run(args as Record<string, unknown>, ask)
            .then(({ status, result }) => extra.taskStore.storeTaskResult(task.taskId, status, result))
            // A task cancelled meanwhile keeps its cancelled status: the store refuses a result for it.
            .catch(() => {});
          return { task };
        },
        getTask: async (_args, extra) => (await extra.taskStore.getTask(extra.taskId))!,
        getTaskResult: async (_args, extra) => (await extra.taskStore.getTaskResult(extra.taskId)) as CallToolResult,
      },
    );
  inBackground(
    "slow_compute",
    "Sleeps `seconds`, then reports the label",
    "optional",
    { seconds: z.number(), label: z.string().optional() },
    async ({ seconds, label }) => {
      await sleep(Number(seconds) * 1000);
      return { status: "completed", result: text(`computed ${String(label ?? "")} after ${String(seconds)} s`) };
    },
  );
  inBackground("failing_job", "Fails as a tool after about a second", "required", {}, async () => {
    await sleep(1000);
    return { status: "completed", result: { isError: true, content: [{ type: "text", text: "the job failed" }] } };
  });
  inBackground("protocol_error_job", "Fails as a request after about a second", "required", {}, async () => {
    await sleep(1000);
    return { status: "failed", result: text("internal failure") };
  });
  const confirmSchema = { type: "object" as const, properties: { confirm: { type: "boolean" as const } }, required: ["confirm"] };
  inBackground(
    "confirm_delete",
    "Asks the user to confirm deleting `filename`, then deletes it",
    "required",
    { filename: z.string() },
    async ({ filename }, ask) => {
      const [answer] = await ask([{ message: `Delete ${String(filename)}?`, requestedSchema: confirmSchema }]);
      const confirmed = answer?.action === "accept" && answer.content?.confirm === true;
      return { status: "completed", result: text(confirmed ? `deleted ${String(filename)}` : `kept ${String(filename)}`) };
    },
  );
  inBackground("multi_input", "Asks two questions at once, then reports both answers", "required", {}, async (_args, ask) => {
    const answers = await ask([
      { message: "Your name?", requestedSchema: { type: "object", properties: { name: { type: "string" } }, required: ["name"] } },
      { message: "Confirm?", requestedSchema: confirmSchema },
    ]);
    return { status: "completed", result: text(answers.map((answer) => JSON.stringify(answer.content ?? {})).join(" ")) };
  });
}

function referenceServer(taskStore: InMemoryTaskStore): McpServer {
  const mcp = new McpServer(
    { name: "conformance-fixture", version: "1.0.0" },
    {
      capabilities: {
        logging: {},
        completions: {},
        resources: { subscribe: true },
        prompts: {},
        tools: {},
        tasks: { cancel: {}, requests: { tools: { call: {} } } },
      },
      taskStore,
      // Where a task's requests wait for the requester's tasks/result.
      taskMessageQueue: new InMemoryTaskMessageQueue(),
    },
  );
  registerTaskTools(mcp);
  const capabilities = () => mcp.server.getClientCapabilities() ?? {};

  mcp.registerTool("test_simple_text", { description: "Returns simple text" }, () => text("This is a simple text response for testing."));
  mcp.registerTool("test_image_content", { description: "Returns an image" }, () => ({
    content: [{ type: "image", data: PNG, mimeType: "image/png" }],
  }));
  mcp.registerTool("test_audio_content", { description: "Returns audio" }, () => ({
    content: [{ type: "audio", data: WAV, mimeType: "audio/wav" }],
  }));
  mcp.registerTool("test_embedded_resource", { description: "Returns an embedded resource" }, () => ({
    content: [
      {
        type: "resource",
        resource: { uri: "test://embedded-resource", mimeType: "text/plain", text: "This is an embedded resource content." },
      },
    ],
  }));
  mcp.registerTool("test_multiple_content_types", { description: "Returns text, an image and a resource" }, () => ({
    content: [
      { type: "text", text: "Multiple content types test:" },
      { type: "image", data: PNG, mimeType: "image/png" },
      {
        type: "resource",
        resource: { uri: "test://mixed-content-resource", mimeType: "application/json", text: '{"test":"data","value":123}' },
      },
    ],
  }));
  mcp.registerTool("test_tool_with_logging", { description: "Logs three messages while it runs" }, async (extra) => {
    const log = (data: string) => extra.sendNotification({ method: "notifications/message", params: { level: "info", data } });
    await log("Tool execution started");
    await sleep(50);
    await log("Tool processing data");
    await sleep(50);
    await log("Tool execution completed");
    return text("Logging test completed");
  });
  mcp.registerTool("test_error_handling", { description: "Always fails" }, () => ({
    isError: true,
    content: [{ type: "text", text: "This tool intentionally returns an error for testing" }],
  }));
  mcp.registerTool("test_tool_with_progress", { description: "Reports progress 0, 50, 100" }, async (extra) => {
    const progressToken = extra._meta?.progressToken;
    for (const progress of [0, 50, 100]) {
      if (progressToken !== undefined) {
        await extra.sendNotification({ method: "notifications/progress", params: { progressToken, progress, total: 100 } });
      }
      if (progress < 100) await sleep(50);
    }
    return text("Progress test completed");
  });
  mcp.registerTool(
    "test_sampling",
    { description: "Asks the client's model", inputSchema: { prompt: z.string() } },
    async ({ prompt }, extra) => {
      if (!capabilities().sampling) return lacking("sampling");
      const answer = await mcp.server.createMessage(
        { messages: [{ role: "user", content: { type: "text", text: prompt } }], maxTokens: 100 },
        { signal: extra.signal },
      );
      return text(`LLM response: ${answer.content.type === "text" ? answer.content.text : JSON.stringify(answer.content)}`);
    },
  );

  const elicit = async (params: ElicitRequest["params"], signal: AbortSignal): Promise<CallToolResult> => {
    if (!capabilities().elicitation) return lacking("elicitation");
    const answer = await mcp.server.elicitInput(params, { signal });
    return text(`Elicitation completed: action=${answer.action}, content=${JSON.stringify(answer.content ?? {})}`);
  };
  mcp.registerTool("test_elicitation", { description: "Asks the user", inputSchema: { message: z.string() } }, ({ message }, extra) =>
    elicit(
      {
        message,
        requestedSchema: {
          type: "object",
          properties: {
            username: { type: "string", description: "User's response" },
            email: { type: "string", description: "User's email address" },
          },
          required: ["username", "email"],
        },
      },
      extra.signal,
    ),
  );
  mcp.registerTool("test_elicitation_sep1034_defaults", { description: "Asks with defaults (SEP-1034)" }, (extra) =>
    elicit(
      {
        message: "Please review and update the form fields with defaults",
        requestedSchema: {
          type: "object",
          properties: {
            name: { type: "string", description: "User name", default: "John Doe" },
            age: { type: "integer", description: "User age", default: 30 },
            score: { type: "number", description: "User score", default: 95.5 },
            status: { type: "string", description: "User status", enum: ["active", "inactive", "pending"], default: "active" },
            verified: { type: "boolean", description: "Verification status", default: true },
          },
        },
      },
      extra.signal,
    ),
  );
  mcp.registerTool("test_elicitation_sep1330_enums", { description: "Asks with every enum form (SEP-1330)" }, (extra) =>
    elicit(
      {
        message: "Please select options from the enum fields",
        requestedSchema: {
          type: "object",
          properties: {
            untitledSingle: { type: "string", description: "Select one option", enum: ["option1", "option2", "option3"] },
            titledSingle: {
              type: "string",
              description: "Select one option with titles",
              oneOf: [
                { const: "value1", title: "First Option" },
                { const: "value2", title: "Second Option" },
                { const: "value3", title: "Third Option" },
              ],
            },
            legacyEnum: {
              type: "string",
              description: "Select one option (legacy)",
              enum: ["opt1", "opt2", "opt3"],
              enumNames: ["Option One", "Option Two", "Option Three"],
            },
            untitledMulti: {
              type: "array",
              description: "Select multiple options",
              items: { type: "string", enum: ["option1", "option2", "option3"] },
            },
            titledMulti: {
              type: "array",
              description: "Select multiple options with titles",
              items: {
                anyOf: [
                  { const: "value1", title: "First Choice" },
                  { const: "value2", title: "Second Choice" },
                  { const: "value3", title: "Third Choice" },
                ],
              },
            },
          },
        },
      },
      extra.signal,
    ),
  );
  mcp.registerTool(
    "test_reconnection",
    { description: "Closes its SSE stream and answers on the reconnection (SEP-1699)" },
    async (extra) => {
      extra.closeSSEStream?.();
      await sleep(200);
      return text("Reconnection test completed");
    },
  );

  mcp.registerResource("static-text", "test://static-text", { description: "A static text resource", mimeType: "text/plain" }, (uri) => ({
    contents: [{ uri: uri.href, mimeType: "text/plain", text: "This is the content of the static text resource." }],
  }));
  mcp.registerResource(
    "static-binary",
    "test://static-binary",
    { description: "A static binary resource", mimeType: "image/png" },
    (uri) => ({ contents: [{ uri: uri.href, mimeType: "image/png", blob: PNG }] }),
  );
  mcp.registerResource(
    "watched-resource",
    "test://watched-resource",
    { description: "A resource to subscribe to", mimeType: "text/plain" },
    (uri) => ({ contents: [{ uri: uri.href, mimeType: "text/plain", text: "Watched resource content" }] }),
  );
  mcp.registerResource(
    "template",
    new ResourceTemplate("test://template/{id}/data", { list: undefined }),
    { description: "A resource template", mimeType: "application/json" },
    (uri, { id }) => ({
      contents: [
        { uri: uri.href, mimeType: "application/json", text: JSON.stringify({ id, templateTest: true, data: `Data for ID: ${id}` }) },
      ],
    }),
  );
  // Subscriptions are accepted and answered {}: the scenarios check the answer, not later updates.
  mcp.server.setRequestHandler(z.object({ method: z.literal("resources/subscribe"), params: z.object({ uri: z.string() }) }), () => ({}));
  mcp.server.setRequestHandler(z.object({ method: z.literal("resources/unsubscribe"), params: z.object({ uri: z.string() }) }), () => ({}));

  mcp.registerPrompt("test_simple_prompt", { description: "A simple prompt" }, () => ({
    messages: [{ role: "user", content: { type: "text", text: "This is a simple prompt for testing." } }],
  }));
  mcp.registerPrompt(
    "test_prompt_with_arguments",
    {
      description: "A prompt with arguments",
      argsSchema: {
        arg1: completable(z.string(), (value) => ["paris", "park", "party"].filter((v) => v.startsWith(value))),
        arg2: z.string(),
      },
    },
    ({ arg1, arg2 }) => ({
      messages: [{ role: "user", content: { type: "text", text: `Prompt with arguments: arg1='${arg1}', arg2='${arg2}'` } }],
    }),
  );
  mcp.registerPrompt(
    "test_prompt_with_embedded_resource",
    { description: "A prompt with an embedded resource", argsSchema: { resourceUri: z.string() } },
    ({ resourceUri }) => ({
      messages: [
        {
          role: "user",
          content: {
            type: "resource",
            resource: { uri: resourceUri, mimeType: "text/plain", text: "Embedded resource content for testing." },
          },
        },
        { role: "user", content: { type: "text", text: "Please process the embedded resource above." } },
      ],
    }),
  );
  // The 2026-07-28 suite's input-required prompt: asked the 2025-era way, and bridged into rounds by the gateway.
  mcp.registerPrompt("test_input_required_result_prompt", { description: "Asks the user for context, then writes a prompt" }, async () => {
    if (!capabilities().elicitation)
      return { messages: [{ role: "user", content: { type: "text", text: "No context: elicitation not declared" } }] };
    const answer = await mcp.server.elicitInput({
      message: "What context should the prompt use?",
      requestedSchema: { type: "object", properties: { context: { type: "string" } }, required: ["context"] },
    });
    return { messages: [{ role: "user", content: { type: "text", text: `Context: ${String(answer.content?.context ?? "none")}` } }] };
  });
  mcp.registerPrompt("test_prompt_with_image", { description: "A prompt with an image" }, () => ({
    messages: [
      { role: "user", content: { type: "image", data: PNG, mimeType: "image/png" } },
      { role: "user", content: { type: "text", text: "Please analyze the image above." } },
    ],
  }));
  return mcp;
}

/**
 * The one tool whose input schema the suite checks keyword by keyword (JSON
 * Schema 2020-12, SEP-1613). McpServer derives schemas from zod, so this one is
 * served by a low-level Server with the schema written out.
 */
function rawSchemaServer(): Server {
  const server = new Server({ name: "conformance-fixture-schemas", version: "1.0.0" }, { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, () => ({
    tools: [
      {
        name: "json_schema_2020_12_tool",
        description: "Tool with JSON Schema 2020-12 features",
        inputSchema: {
          $schema: "https://json-schema.org/draft/2020-12/schema",
          type: "object",
          $defs: { address: { type: "object", properties: { street: { type: "string" }, city: { type: "string" } } } },
          properties: { name: { type: "string" }, address: { $ref: "#/$defs/address" } },
          additionalProperties: false,
        },
      },
    ],
  }));
  server.setRequestHandler(CallToolRequestSchema, (request) => text(JSON.stringify(request.params.arguments ?? {})));
  return server;
}

export interface FixtureServer {
  /** The reference upstream (sessionful, resumable SSE) at `${origin}/mcp`, the schema tool at `${origin}/schemas/mcp`. */
  origin: string;
  close(): Promise<void>;
}

export async function startFixtureServer(port = 0): Promise<FixtureServer> {
  const sessions = new Map<string, StreamableHTTPServerTransport>();
  // Closed with the fixture: a task's store keeps a 60 s timer per task (its ttl), and a request a scenario's
  // server sent and never had answered another; they kept the run's process alive a minute after its results.
  const referenceServers = new Set<McpServer>();

  async function serveReference(req: IncomingMessage, res: ServerResponse, body: unknown): Promise<void> {
    const sessionId = req.headers["mcp-session-id"];
    if (typeof sessionId === "string") {
      const transport = sessions.get(sessionId);
      if (transport) return transport.handleRequest(req, res, body);
      res.writeHead(404, { "content-type": "application/json" });
      res.end(JSON.stringify({ jsonrpc: "2.0", error: { code: -32001, message: "Session not found" }, id: null }));
      return;
    }
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => crypto.randomUUID(),
      eventStore: new MemoryEventStore(),
      retryInterval: 100,
      onsessioninitialized: (id) => void sessions.set(id, transport),
      onsessionclosed: (id) => void sessions.delete(id),
    });
    const taskStore = new InMemoryTaskStore();
    const reference = referenceServer(taskStore);
    referenceServers.add(reference);
    reference.server.onclose = () => {
      referenceServers.delete(reference);
      taskStore.cleanup();
    };
    await reference.connect(transport);
    await transport.handleRequest(req, res, body);
  }

  async function serveSchemas(req: IncomingMessage, res: ServerResponse, body: unknown): Promise<void> {
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    const server = rawSchemaServer();
    res.on("close", () => void server.close());
    await server.connect(transport);
    await transport.handleRequest(req, res, body);
  }

  const server = createServer((req, res) => {
    void (async () => {
      const body = await readJson(req);
      const path = new URL(req.url ?? "/", "http://fixture.local").pathname;
      if (path === "/mcp") return serveReference(req, res, body);
      if (path === "/schemas/mcp") return serveSchemas(req, res, body);
      res.writeHead(404).end();
    })().catch((error: unknown) => {
      if (!res.headersSent) res.writeHead(500, { "content-type": "text/plain" }).end(String(error));
    });
  });
  await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve));
  const { port: bound } = server.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${bound}`,
    close: async () => {
      await Promise.all([...referenceServers].map((reference) => reference.close()));
      await closeServer(server);
    },
  };
}

async function readJson(req: IncomingMessage): Promise<unknown> {
  if (req.method !== "POST") return undefined;
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const body = Buffer.concat(chunks).toString("utf8");
  try {
    return body ? (JSON.parse(body) as unknown) : undefined;
  } catch {
    return undefined;
  }
}

function closeServer(server: HttpServer): Promise<void> {
  server.closeAllConnections();
  return new Promise((resolve, reject) => server.close((error) => (error ? reject(error) : resolve())));
}

// `node test/conformance/fixture-server.ts [port]`: the fixture alone, e.g. to run the suite against it directly.
if (process.argv[1] === import.meta.filename) {
  const fixture = await startFixtureServer(Number(process.argv[2] ?? 0));
  console.log(`conformance fixture on ${fixture.origin}/mcp and ${fixture.origin}/schemas/mcp`);
}
