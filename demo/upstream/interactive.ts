import type { IncomingMessage, ServerResponse } from "node:http";
import { McpServer, ResourceTemplate } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { RequestHandlerExtra } from "@modelcontextprotocol/sdk/shared/protocol.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import {
  CreateMessageResultSchema,
  ElicitResultSchema,
  ListRootsResultSchema,
  type ServerNotification,
  type ServerRequest,
} from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import type { ReceivedCall } from "./tools.ts";

const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener("abort", () => (clearTimeout(timer), resolve()), { once: true });
  });

/**
 * An upstream that talks during a call, as long-running MCP servers do: it
 * keeps sessions (so a cancellation, sent in its own POST, reaches the running
 * call), answers tools/call as an SSE stream, reports progress, and asks the
 * client for sampling, elicitation and roots. Every call, and every call that
 * saw its cancellation, is recorded.
 */
export function createInteractiveServer(record: (call: ReceivedCall) => void): McpServer {
  const server = new McpServer({ name: "fixture-interactive", version: "1.0.0" }, { capabilities: { logging: {} } });
  const received = (tool: string, args: unknown) => record({ tool, arguments: args, at: new Date().toISOString() });

  server.registerTool(
    "slow_count",
    {
      description: "Counts for `seconds`, reporting progress every `every` seconds.",
      inputSchema: { seconds: z.number(), every: z.number() },
    },
    async (args, extra) => {
      received("slow_count", args);
      const steps = Math.ceil(args.seconds / args.every);
      for (let step = 1; step <= steps; step++) {
        await sleep(args.every * 1000, extra.signal);
        if (extra.signal.aborted) {
          received("slow_count:cancelled", { step, reason: String(extra.signal.reason) });
          return { content: [{ type: "text", text: "cancelled" }] };
        }
        const progressToken = extra._meta?.progressToken;
        if (progressToken !== undefined) {
          await extra.sendNotification({
            method: "notifications/progress",
            params: { progressToken, progress: step, total: steps, message: `step ${step} of ${steps}` },
          });
        }
      }
      return { content: [{ type: "text", text: `counted ${steps} steps` }] };
    },
  );

  server.registerTool(
    "go_quiet",
    { description: "Says nothing for `seconds`, then answers.", inputSchema: { seconds: z.number() } },
    async (args, extra) => {
      received("go_quiet", args);
      await sleep(args.seconds * 1000, extra.signal);
      if (extra.signal.aborted) received("go_quiet:cancelled", {});
      return { content: [{ type: "text", text: "finally" }] };
    },
  );

  server.registerTool(
    "ask_user",
    { description: "Asks the user (elicitation) for a name.", inputSchema: { question: z.string() } },
    async (args, extra) => {
      received("ask_user", args);
      try {
        const answer = await extra.sendRequest(
          {
            method: "elicitation/create",
            params: {
              mode: "form",
              message: args.question,
              requestedSchema: { type: "object", properties: { name: { type: "string" } }, required: ["name"] },
            },
          },
          ElicitResultSchema,
        );
        return { content: [{ type: "text", text: `${answer.action}: ${JSON.stringify(answer.content ?? {})}` }] };
      } catch (error) {
        return { isError: true, content: [{ type: "text", text: `elicitation failed: ${(error as Error).message}` }] };
      }
    },
  );

  server.registerTool(
    "ask_then_count",
    {
      description: "Reports progress 1, asks the user (elicitation) for a name, then reports progress 2 and 3 and greets them.",
      inputSchema: { question: z.string() },
    },
    async (args, extra) => {
      received("ask_then_count", args);
      const progressToken = extra._meta?.progressToken;
      const progress = async (step: number) => {
        if (progressToken === undefined) return;
        await extra.sendNotification({
          method: "notifications/progress",
          params: { progressToken, progress: step, total: 3, message: `step ${step} of 3` },
        });
      };
      await progress(1);
      const answer = await extra.sendRequest(
        {
          method: "elicitation/create",
          params: {
            mode: "form",
            message: args.question,
            requestedSchema: { type: "object", properties: { name: { type: "string" } }, required: ["name"] },
          },
        },
        ElicitResultSchema,
      );
      await progress(2);
      await progress(3);
      return { content: [{ type: "text", text: `hello, ${String(answer.content?.name ?? "nobody")}` }] };
    },
  );

  server.registerTool(
    "ask_then_wait",
    {
      description: "Asks the user (elicitation) for a name, then says nothing for `seconds` before greeting them.",
      inputSchema: { seconds: z.number() },
    },
    async (args, extra) => {
      received("ask_then_wait", args);
      const answer = await extra.sendRequest(
        { method: "elicitation/create", params: { mode: "form", message: "Name?", requestedSchema: { type: "object", properties: {} } } },
        ElicitResultSchema,
      );
      await sleep(args.seconds * 1000, extra.signal);
      if (extra.signal.aborted) received("ask_then_wait:cancelled", { reason: String(extra.signal.reason) });
      return { content: [{ type: "text", text: `${answer.action}, after ${args.seconds} s` }] };
    },
  );

  server.registerTool(
    "ask_model",
    { description: "Asks the client's model (sampling) to complete a prompt.", inputSchema: { prompt: z.string() } },
    async (args, extra) => {
      received("ask_model", args);
      try {
        // Sent as a server that does not check the client's capabilities would: the client's answer decides.
        const answer = await extra.sendRequest(
          {
            method: "sampling/createMessage",
            params: { messages: [{ role: "user", content: { type: "text", text: args.prompt } }], maxTokens: 50 },
          },
          CreateMessageResultSchema,
        );
        return { content: [{ type: "text", text: `model said: ${answer.content.type === "text" ? answer.content.text : "?"}` }] };
      } catch (error) {
        return { isError: true, content: [{ type: "text", text: `sampling failed: ${(error as Error).message}` }] };
      }
    },
  );

  server.registerTool(
    "ask_model_on_session",
    {
      description: "Asks the client's model without naming the call, so the request goes on the session's standalone stream.",
      inputSchema: { prompt: z.string() },
    },
    async (args) => {
      received("ask_model_on_session", args);
      // As the conformance suite's reference server does: no related request id.
      const answer = await server.server.createMessage({
        messages: [{ role: "user", content: { type: "text", text: args.prompt } }],
        maxTokens: 50,
      });
      return { content: [{ type: "text", text: `model said: ${answer.content.type === "text" ? answer.content.text : "?"}` }] };
    },
  );

  server.registerTool(
    "log_steps",
    {
      description: "Logs each of `steps` steps (notifications/message) while it runs, at debug, info, warning, error, debug, …",
      inputSchema: { steps: z.number() },
    },
    async (args, extra) => {
      received("log_steps", args);
      for (let step = 1; step <= args.steps; step++) {
        const level = STEP_LEVELS[(step - 1) % STEP_LEVELS.length]!;
        await extra.sendNotification({ method: "notifications/message", params: { level, logger: "steps", data: `step ${step}` } });
      }
      return { content: [{ type: "text", text: `logged ${args.steps} steps` }] };
    },
  );

  server.registerTool(
    "big_result",
    {
      description: "Reports one progress step, then answers with `bytes` characters of text (the streamed-result benchmark).",
      inputSchema: { bytes: z.number() },
    },
    async (args, extra) => {
      const progressToken = extra._meta?.progressToken;
      if (progressToken !== undefined) {
        await extra.sendNotification({ method: "notifications/progress", params: { progressToken, progress: 1, total: 1 } });
      }
      return { content: [{ type: "text", text: "x".repeat(args.bytes) }] };
    },
  );

  // Listed, and callable, only on a session whose client declared elicitation, as servers that need it register it.
  const confirm = server.registerTool(
    "confirm_with_user",
    {
      description: "Asks the user (elicitation) to confirm `action`; offered only to clients that declare elicitation.",
      inputSchema: { action: z.string() },
    },
    async (args, extra) => {
      received("confirm_with_user", args);
      const answer = await extra.sendRequest(
        {
          method: "elicitation/create",
          params: {
            mode: "form",
            message: `Confirm: ${args.action}?`,
            requestedSchema: { type: "object", properties: { confirmed: { type: "boolean" } }, required: ["confirmed"] },
          },
        },
        ElicitResultSchema,
      );
      return {
        content: [
          {
            type: "text",
            text: `${args.action}: ${answer.action === "accept" && answer.content?.confirmed === true ? "confirmed" : "not confirmed"}`,
          },
        ],
      };
    },
  );
  confirm.disable();
  server.server.oninitialized = () => {
    if (server.server.getClientCapabilities()?.elicitation) confirm.enable();
  };

  // A prompt and a resource that ask for input as they are read: `kind` picks an elicitation or a sampling request.
  server.registerPrompt(
    "ask",
    {
      description: "Asks the user (kind elicit) or the client's model (kind sample) about `topic`, then writes the prompt.",
      argsSchema: { kind: z.string(), topic: z.string() },
    },
    async (args, extra) => {
      received("prompt:ask", args);
      return { messages: [{ role: "user", content: { type: "text", text: await askClient(extra, args.kind, args.topic) } }] };
    },
  );
  server.registerResource(
    "ask",
    new ResourceTemplate("interactive://ask/{kind}", { list: undefined }),
    { description: "A note read after asking the user (kind elicit) or the client's model (kind sample)." },
    async (uri, variables, extra) => {
      received("resource:ask", { uri: uri.href });
      return { contents: [{ uri: uri.href, text: await askClient(extra, String(variables.kind), uri.href) }] };
    },
  );

  server.registerTool("list_roots", { description: "Lists the client's roots.", inputSchema: {} }, async (_args, extra) => {
    received("list_roots", {});
    const { roots } = await extra.sendRequest({ method: "roots/list" }, ListRootsResultSchema);
    return { content: [{ type: "text", text: roots.map((root) => root.uri).join(",") }] };
  });

  return server;
}

/** What a prompt or resource read learns from the client: its answer, or why it got none (the request refused). */
async function askClient(extra: RequestHandlerExtra<ServerRequest, ServerNotification>, kind: string, about: string): Promise<string> {
  try {
    if (kind === "sample") {
      const answer = await extra.sendRequest(
        {
          method: "sampling/createMessage",
          params: { messages: [{ role: "user", content: { type: "text", text: `About ${about}?` } }], maxTokens: 50 },
        },
        CreateMessageResultSchema,
      );
      return `model said: ${answer.content.type === "text" ? answer.content.text : "?"}`;
    }
    const answer = await extra.sendRequest(
      {
        method: "elicitation/create",
        params: {
          mode: "form",
          message: `Who asks about ${about}?`,
          requestedSchema: { type: "object", properties: { name: { type: "string" } }, required: ["name"] },
        },
      },
      ElicitResultSchema,
    );
    return `${answer.action}: ${String(answer.content?.name ?? "nobody")} on ${about}`;
  } catch (error) {
    return `refused: ${(error as Error).message}`;
  }
}

/** The levels `log_steps` logs its steps at, in turn. */
export const STEP_LEVELS = ["debug", "info", "warning", "error"] as const;

/** Sessions of the interactive fixture, per tag. */
export function interactiveSessions(record: (tag: string, call: ReceivedCall) => void) {
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
    await createInteractiveServer((call) => record(tag, call)).connect(transport);
    await transport.handleRequest(req, res, body);
  };
}
