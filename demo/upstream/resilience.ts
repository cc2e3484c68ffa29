import type { IncomingMessage, ServerResponse } from "node:http";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import type { EventStore } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";

/**
 * Events of every stream, kept so a client that reconnects with Last-Event-ID
 * gets what it missed. The priming event (empty message) is stored for its id
 * but never replayed.
 */
export class MemoryEventStore implements EventStore {
  private readonly events: { id: string; streamId: string; message: JSONRPCMessage }[] = [];

  async storeEvent(streamId: string, message: JSONRPCMessage): Promise<string> {
    const id = `${streamId}:${this.events.length}`;
    this.events.push({ id, streamId, message });
    return id;
  }

  async getStreamIdForEventId(eventId: string): Promise<string | undefined> {
    return this.events.find((event) => event.id === eventId)?.streamId;
  }

  async replayEventsAfter(lastEventId: string, { send }: { send: (id: string, message: JSONRPCMessage) => Promise<void> }) {
    const index = this.events.findIndex((event) => event.id === lastEventId);
    const streamId = this.events[index]?.streamId ?? "";
    for (const event of this.events.slice(index + 1)) {
      if (event.streamId === streamId && Object.keys(event.message).length) await send(event.id, event.message);
    }
    return streamId;
  }
}

/** How long the polling upstream asks clients to wait before reconnecting (the SSE `retry` field). */
export const POLLING_RETRY_MS = 50;

/**
 * An upstream that uses SSE polling (2025-11-25): it answers a call on an SSE
 * stream, sends a priming event with an id and `retry`, closes the stream at
 * once, and sends the result only on the GET a client makes with Last-Event-ID.
 * Every request is noted (a GET with its headers) so a test can see the resumption.
 */
export function pollingUpstream(note: (method: string, req: IncomingMessage) => void) {
  const transports = new Map<string, StreamableHTTPServerTransport>();

  return async function serve(req: IncomingMessage, res: ServerResponse, body: unknown): Promise<void> {
    if (req.method === "GET") note("GET", req);
    const sessionId = req.headers["mcp-session-id"];
    if (typeof sessionId === "string") {
      const transport = transports.get(sessionId);
      if (!transport) {
        res.writeHead(404, { "content-type": "application/json" });
        res.end(JSON.stringify({ jsonrpc: "2.0", error: { code: -32001, message: "Session not found" }, id: null }));
        return;
      }
      return transport.handleRequest(req, res, body);
    }
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => crypto.randomUUID(),
      eventStore: new MemoryEventStore(),
      retryInterval: POLLING_RETRY_MS,
      onsessioninitialized: (id) => void transports.set(id, transport),
    });
    const mcp = new McpServer({ name: "fixture-polling", version: "1.0.0" });
    mcp.registerTool("slow_report", { description: "Answers only after the client reconnects to its stream." }, async (extra) => {
      extra.closeSSEStream?.();
      // Later than the client's reconnect: the result goes out on the resumed stream, not from the store.
      await new Promise((resolve) => setTimeout(resolve, POLLING_RETRY_MS * 4));
      return { content: [{ type: "text", text: "report ready" }] };
    });
    await mcp.connect(transport);
    await transport.handleRequest(req, res, body);
  };
}
