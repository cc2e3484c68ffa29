import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { SetLevelRequestSchema, type LoggingLevel } from "@modelcontextprotocol/sdk/types.js";
import type { CallStreaming } from "./mcp.streaming.ts";

/** RFC 5424 severities, least to most severe, as MCP orders them. */
const SEVERITY: readonly LoggingLevel[] = ["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"];

/** Whether a message at `level` passes a client's `logging/setLevel` minimum (none set: everything passes). */
export function passesLogLevel(level: LoggingLevel, minimum: LoggingLevel | null): boolean {
  return minimum === null || SEVERITY.indexOf(level) >= SEVERITY.indexOf(minimum);
}

/**
 * `logging/setLevel` is kept for the client's session: the gateway is stateless,
 * so the level goes to the session's call relay object, where a call that
 * relays upstream log messages reads it. Without a session there is nothing to
 * keep it for (each POST stands alone): it is answered and every level relayed.
 */
export function registerLogLevelHandler(server: Server, stream: CallStreaming): void {
  server.setRequestHandler(SetLevelRequestSchema, async (request) => {
    if (stream.session) await stream.route.setLogLevel(request.params.level);
    return {};
  });
}
