import type { LoggingLevel } from "@modelcontextprotocol/sdk/types.js";

/** RFC 5424 severities, least to most severe, as MCP orders them. */
const SEVERITY: readonly LoggingLevel[] = ["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"];

/** Whether a message at `level` passes a client's `logging/setLevel` minimum (none set: everything passes). */
export function passesLogLevel(level: LoggingLevel, minimum: LoggingLevel | null): boolean {
  return minimum === null || SEVERITY.indexOf(level) >= SEVERITY.indexOf(minimum);
}
