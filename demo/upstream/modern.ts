import type { IncomingMessage, ServerResponse } from "node:http";
import { Readable } from "node:stream";
import { acceptedContent, createMcpHandler, inputRequired, inputResponse, McpServer, ResourceTemplate } from "@modelcontextprotocol/server";
import { z } from "zod";
import type { ReceivedCall } from "./tools.ts";

/**
 * A 2026-07-28 upstream on the v2 SDK's `McpServer` and its HTTP entry, with
 * no 2025-era leg (`legacy: "reject"`): a client that tries `initialize` is
 * refused, so a call that works went out in 2026-07-28. Its tools ask for
 * input the 2026-07-28 way, with an input-required result and a retry.
 */
export function modernUpstream(record: (call: ReceivedCall & { round: number }) => void) {
  const handler = createMcpHandler(() => modernServer(record), { legacy: "reject" });
  return async (req: IncomingMessage, res: ServerResponse, body: unknown): Promise<void> => {
    const headers = new Headers();
    for (const [name, value] of Object.entries(req.headers)) {
      if (typeof value === "string") headers.set(name, value);
      else if (Array.isArray(value)) headers.set(name, value.join(", "));
    }
    const request = new Request(`http://${req.headers.host ?? "127.0.0.1"}${req.url ?? "/"}`, {
      method: req.method,
      headers,
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
    const response = await handler.fetch(request);
    res.writeHead(response.status, Object.fromEntries(response.headers));
    if (!response.body) return void res.end();
    Readable.fromWeb(response.body as never).pipe(res);
  };
}

function modernServer(record: (call: ReceivedCall & { round: number }) => void): McpServer {
  const server = new McpServer({ name: "rayrun-modern-upstream", version: "2.0.0" }, { instructions: "A 2026-07-28 test upstream." });
  const received = (tool: string, args: unknown, retried: boolean) =>
    record({ tool, arguments: args, at: new Date().toISOString(), round: retried ? 2 : 1 });

  server.registerTool(
    "echo",
    { description: "Echoes the text back", inputSchema: z.object({ text: z.string() }) },
    async ({ text }, ctx) => {
      received("echo", { text }, false);
      const progressToken = ctx.mcpReq._meta?.progressToken;
      if (progressToken !== undefined) {
        await ctx.mcpReq.notify({ method: "notifications/progress", params: { progressToken, progress: 1, total: 1 } });
      }
      return { content: [{ type: "text", text: `echo: ${text}` }] };
    },
  );

  server.registerTool(
    "ask_user",
    {
      description: "Asks the user a question (form-mode elicitation) and reports the answer",
      inputSchema: z.object({ question: z.string() }),
    },
    async ({ question }, ctx) => {
      const answer = inputResponse(ctx.mcpReq.inputResponses, "answer");
      received("ask_user", { question }, answer.kind !== "missing");
      if (answer.kind !== "elicit") {
        return inputRequired({
          inputRequests: {
            answer: inputRequired.elicit({
              message: question,
              requestedSchema: { type: "object", properties: { name: { type: "string" } }, required: ["name"] },
            }),
          },
        });
      }
      const content = acceptedContent(ctx.mcpReq.inputResponses, "answer");
      return { content: [{ type: "text", text: `${answer.action}: ${JSON.stringify(content ?? {})}` }] };
    },
  );

  server.registerTool(
    "ask_model",
    { description: "Asks the client's model (sampling) and reports its answer", inputSchema: z.object({ prompt: z.string() }) },
    async ({ prompt }, ctx) => {
      const answer = inputResponse(ctx.mcpReq.inputResponses, "completion");
      received("ask_model", { prompt }, answer.kind !== "missing");
      if (answer.kind !== "sampling") {
        return inputRequired({
          inputRequests: {
            completion: inputRequired.createMessage({
              messages: [{ role: "user", content: { type: "text", text: prompt } }],
              maxTokens: 100,
            }),
          },
        });
      }
      const content = answer.result.content;
      const text = !Array.isArray(content) && content.type === "text" ? content.text : JSON.stringify(content);
      return { content: [{ type: "text", text: `model said: ${text}` }] };
    },
  );
  // A prompt and a resource that ask for input the 2026-07-28 way: `kind` picks an elicitation or a sampling request.
  server.registerPrompt(
    "ask",
    {
      description: "Asks the user (kind elicit) or the client's model (kind sample) about `topic`, then writes the prompt.",
      argsSchema: z.object({ kind: z.string(), topic: z.string() }),
    },
    async ({ kind, topic }, ctx) => {
      const asked = askedClient(ctx.mcpReq.inputResponses, kind, topic);
      received("prompt:ask", { kind, topic }, asked.answered);
      if (!asked.answered) return asked.inputRequired;
      return { messages: [{ role: "user", content: { type: "text", text: asked.text } }] };
    },
  );
  server.registerResource(
    "ask",
    new ResourceTemplate("modern://ask/{kind}", { list: undefined }),
    { description: "A note read after asking the user (kind elicit) or the client's model (kind sample)." },
    async (uri, variables, ctx) => {
      const asked = askedClient(ctx.mcpReq.inputResponses, String(variables.kind), uri.href);
      received("resource:ask", { uri: uri.href }, asked.answered);
      if (!asked.answered) return asked.inputRequired as never;
      return { contents: [{ uri: uri.href, text: asked.text }] };
    },
  );
  return server;
}

type InputResponses = Parameters<typeof inputResponse>[0];

/** The client's answer to the one input request of a prompt or resource read, or the input-required result asking it. */
function askedClient(
  responses: InputResponses,
  kind: string,
  about: string,
): { answered: true; text: string } | { answered: false; inputRequired: ReturnType<typeof inputRequired> } {
  const answer = inputResponse(responses, "ask");
  if (kind === "sample") {
    if (answer.kind === "sampling") {
      const content = answer.result.content;
      return { answered: true, text: `model said: ${!Array.isArray(content) && content.type === "text" ? content.text : "?"}` };
    }
    const request = inputRequired.createMessage({
      messages: [{ role: "user", content: { type: "text", text: `About ${about}?` } }],
      maxTokens: 50,
    });
    return { answered: false, inputRequired: inputRequired({ inputRequests: { ask: request } }) };
  }
  if (answer.kind === "elicit") {
    const name = acceptedContent(responses, "ask")?.name;
    return { answered: true, text: `${answer.action}: ${String(name ?? "nobody")} on ${about}` };
  }
  const request = inputRequired.elicit({
    message: `Who asks about ${about}?`,
    requestedSchema: { type: "object", properties: { name: { type: "string" } }, required: ["name"] },
  });
  return { answered: false, inputRequired: inputRequired({ inputRequests: { ask: request } }) };
}
