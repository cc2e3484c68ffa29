import { describe, it } from "vitest";
import { recordToolCall, toolCallRow } from "./call-rows.ts";
import type { ToolCallRun } from "./outcome.ts";

const caller = { workspaceId: "ws_1", actor: "key:k1", keyId: "k1", grantedBy: null, profileId: null };

describe("a finished call's record", () => {
  it("keeps the row's sizes and verdict, not the arguments, the answer or the result (a Code Mode run holds up to 50 at once)", ({
    expect,
  }) => {
    const big = "é".repeat(512 * 1024);
    const result = { content: [{ type: "text" as const, text: big }], structuredContent: { text: big } };
    const run: ToolCallRun = {
      outcome: { kind: "result", result },
      tool: { uid: "tool_1", serviceId: "svc_1" },
      logs: [],
      shadow: null,
      captureDetails: false,
      timing: { startedAt: Date.UTC(2026, 11, 7), durationMs: 12, hooksMs: 0, upstreamMs: 9, upstreamOffsetMs: 2 },
      hookPolls: 0,
      revisionId: null,
      approved: true,
    };
    const args = { query: big };
    const answer = { ok: true, value: result.structuredContent };
    const recorded = recordToolCall({ requestId: "req_1", callIndex: 3, name: "demo__search", arguments: args, answer }, run);

    expect(JSON.stringify(recorded).length).toBeLessThan(1024);
    const bytes = (value: unknown) => new TextEncoder().encode(JSON.stringify(value)).byteLength;
    expect(toolCallRow(caller, recorded, [])).toMatchObject({
      requestId: "req_1",
      callIndex: 3,
      name: "demo__search",
      outcome: "approved",
      code: null,
      bytesIn: bytes(args),
      bytesOut: bytes(answer),
      durationMs: 12,
      upstreamMs: 9,
      toolUid: "tool_1",
    });
  });

  it("sizes a passed-through answer by its bytes as the upstream sent them", ({ expect }) => {
    const pieces = [new Uint8Array(70_000), new Uint8Array(30_000)];
    const run: ToolCallRun = {
      outcome: { kind: "refused", source: "gateway", code: "upstream_timeout", message: "The upstream sent nothing", details: {} },
      tool: null,
      logs: [],
      shadow: null,
      captureDetails: false,
      timing: { startedAt: 0, durationMs: 1, hooksMs: 0, upstreamMs: 0, upstreamOffsetMs: null },
      hookPolls: 0,
      revisionId: null,
      approved: false,
    };
    const recorded = recordToolCall({ requestId: "req_2", callIndex: null, name: "t", arguments: {}, answer: pieces }, run);
    expect(recorded).toMatchObject({ bytesIn: 2, bytesOut: 100_000, verdict: { outcome: "timed_out", code: "upstream_timeout" } });
  });
});
