import { context, SpanKind, SpanStatusCode, trace, TraceFlags, type Attributes, type Context } from "@opentelemetry/api";
import { JsonTraceSerializer } from "@opentelemetry/otlp-transformer";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { InMemorySpanExporter, RandomIdGenerator, SimpleSpanProcessor, TracerProvider, type IdGenerator } from "@opentelemetry/sdk-trace";
import { ATTR_ERROR_TYPE, ATTR_SERVICE_NAME } from "@opentelemetry/semantic-conventions";
import type { CallLogMessage, CallRow } from "./call-log.ts";

/**
 * OpenTelemetry export from the queue consumer: each call a trace, with a span for the call and child spans for
 * its hook stages and its upstream request. The spans are built after the fact from the call rows (start times and
 * durations measured on the call path) with the OpenTelemetry SDK, encoded by its OTLP transformer as OTLP/HTTP
 * JSON, and POSTed to `OTEL_EXPORTER_OTLP_ENDPOINT` + `/v1/traces` with the `OTEL_EXPORTER_OTLP_HEADERS` secret
 * (`name=value,…`, values percent-encoded, as the OpenTelemetry specification writes it). Code Mode inner calls
 * are children of their run_code's span: ids derive from the workspace and request id, so they meet across batches.
 */

export const otlpConfigured = (env: Env) => Boolean(env.OTEL_EXPORTER_OTLP_ENDPOINT);

/** How long one export may take before the batch counts as failed and is retried. */
const EXPORT_TIMEOUT_MS = 10_000;

export class OtlpExportError extends Error {}

/** Hands out planned span and trace ids for the next span, else random ones. */
class PlannedIds implements IdGenerator {
  private readonly random = new RandomIdGenerator();
  next: { traceId?: string; spanId?: string } = {};
  generateTraceId(): string {
    const id = this.next.traceId ?? this.random.generateTraceId();
    delete this.next.traceId;
    return id;
  }
  generateSpanId(): string {
    const id = this.next.spanId ?? this.random.generateSpanId();
    delete this.next.spanId;
    return id;
  }
}

async function hexDigest(text: string, bytes: number): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text)));
  return [...digest.slice(0, bytes)].map((byte) => byte.toString(16).padStart(2, "0")).join("");
}

const traceIdOf = (call: CallRow) => hexDigest(`${call.workspaceId}/${call.requestId}`, 16);
const runSpanIdOf = (call: CallRow) => hexDigest(`${call.workspaceId}/${call.requestId}/run_code`, 8);

/** The standard attributes (MCP and GenAI semantic conventions) and the gateway's own, under `rayrun.`. */
function callAttributes(call: CallRow): Attributes {
  return {
    "mcp.method.name": call.kind,
    ...(call.kind === "tools/call" ? { "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": call.name } : {}),
    ...(call.kind === "prompts/get" ? { "gen_ai.prompt.name": call.name } : {}),
    ...(call.kind === "resources/read" ? { "mcp.resource.uri": call.name } : {}),
    ...(call.outcome !== "ok" && call.outcome !== "approved" ? { [ATTR_ERROR_TYPE]: call.code ?? call.outcome } : {}),
    "enduser.id": call.actor,
    "rayrun.request_id": call.requestId,
    "rayrun.workspace_id": call.workspaceId,
    "rayrun.outcome": call.outcome,
    ...(call.code ? { "rayrun.code": call.code } : {}),
    ...(call.callIndex !== null ? { "rayrun.call_index": call.callIndex } : {}),
    ...(call.toolUid ? { "rayrun.tool_uid": call.toolUid } : {}),
    ...(call.serviceId ? { "rayrun.service_id": call.serviceId } : {}),
    ...(call.profileId ? { "rayrun.profile_id": call.profileId } : {}),
    ...(call.revisionId ? { "rayrun.revision_id": call.revisionId } : {}),
    ...(call.shadow ? { "rayrun.shadow": call.shadow } : {}),
    "rayrun.bytes_in": call.bytesIn,
    "rayrun.bytes_out": call.bytesOut,
    "rayrun.duration.gateway_ms": call.gatewayMs,
    "rayrun.duration.hooks_ms": call.hooksMs,
    "rayrun.duration.upstream_ms": call.upstreamMs,
  };
}

const at = (start: number, offsetMs: number) => new Date(start + offsetMs);

/** The finished spans of a batch's calls. */
async function spansOf(messages: CallLogMessage[]) {
  const exporter = new InMemorySpanExporter();
  const ids = new PlannedIds();
  const provider = new TracerProvider({
    resource: resourceFromAttributes({ [ATTR_SERVICE_NAME]: "rayrun" }),
    idGenerator: ids,
    spanProcessors: [new SimpleSpanProcessor({ exporter })],
  });
  const tracer = provider.getTracer("rayrun.call-log");
  for (const { call, stages } of messages) {
    const start = Date.parse(call.startedAt);
    const traceId = await traceIdOf(call);
    let parent: Context = context.active();
    if (call.kind === "run_code") ids.next = { traceId, spanId: await runSpanIdOf(call) };
    else if (call.callIndex !== null) {
      parent = trace.setSpanContext(parent, { traceId, spanId: await runSpanIdOf(call), traceFlags: TraceFlags.SAMPLED, isRemote: true });
    } else ids.next = { traceId };
    const span = tracer.startSpan(
      `${call.kind} ${call.name}`,
      { kind: call.callIndex === null ? SpanKind.SERVER : SpanKind.INTERNAL, startTime: at(start, 0), attributes: callAttributes(call) },
      parent,
    );
    const ok = call.outcome === "ok" || call.outcome === "approved";
    span.setStatus(ok ? { code: SpanStatusCode.OK } : { code: SpanStatusCode.ERROR, message: call.code ?? call.outcome });
    const inside = trace.setSpan(parent, span);
    for (const row of stages) {
      if (row.stage !== "before" && row.stage !== "after") continue;
      const offset = row.offsetMs ?? 0;
      const stage = tracer.startSpan(
        `hook ${row.stage}${row.channel === "shadow" ? " (shadow)" : ""}`,
        {
          kind: SpanKind.INTERNAL,
          startTime: at(start, offset),
          attributes: {
            "rayrun.request_id": call.requestId,
            "rayrun.stage": row.stage,
            "rayrun.channel": row.channel,
            "rayrun.outcome": row.outcome,
            ...(row.code ? { [ATTR_ERROR_TYPE]: row.code } : {}),
            ...(row.revisionId ? { "rayrun.revision_id": row.revisionId } : {}),
            ...(row.shadowDiffered !== null ? { "rayrun.shadow_differed": row.shadowDiffered } : {}),
          },
        },
        inside,
      );
      stage.setStatus(row.outcome === "error" ? { code: SpanStatusCode.ERROR, message: row.code ?? "error" } : { code: SpanStatusCode.OK });
      stage.end(at(start, offset + row.durationMs));
    }
    if (call.upstreamOffsetMs !== null) {
      const upstream = tracer.startSpan(
        `upstream ${call.kind}`,
        {
          kind: SpanKind.CLIENT,
          startTime: at(start, call.upstreamOffsetMs),
          attributes: {
            "mcp.method.name": call.kind,
            "rayrun.request_id": call.requestId,
            ...(call.serviceId ? { "rayrun.service_id": call.serviceId } : {}),
          },
        },
        inside,
      );
      upstream.end(at(start, call.upstreamOffsetMs + call.upstreamMs));
    }
    span.end(at(start, call.durationMs));
  }
  await provider.forceFlush();
  return exporter.getFinishedSpans();
}

/** `OTEL_EXPORTER_OTLP_HEADERS`: `name=value` pairs separated by commas, values percent-encoded. */
export function otlpHeaders(spec: string | undefined): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const pair of (spec ?? "").split(",")) {
    const at = pair.indexOf("=");
    if (at <= 0) continue;
    headers[pair.slice(0, at).trim().toLowerCase()] = decodeURIComponent(pair.slice(at + 1).trim());
  }
  return headers;
}

/** The traces endpoint: the base endpoint with `/v1/traces`, as the specification builds it. */
const tracesUrl = (endpoint: string) => `${endpoint.replace(/\/+$/, "")}/v1/traces`;

/** Exports one batch's calls; throws when the collector does not take them, so the batch is retried. */
export async function exportCallTraces(env: Env, messages: CallLogMessage[]): Promise<void> {
  if (!messages.length || !env.OTEL_EXPORTER_OTLP_ENDPOINT) return;
  const body = JsonTraceSerializer.serializeRequest(await spansOf(messages));
  if (!body) throw new OtlpExportError("the spans could not be encoded");
  const response = await fetch(tracesUrl(env.OTEL_EXPORTER_OTLP_ENDPOINT), {
    method: "POST",
    headers: { ...otlpHeaders(env.OTEL_EXPORTER_OTLP_HEADERS), "content-type": "application/json" },
    body,
    signal: AbortSignal.timeout(EXPORT_TIMEOUT_MS),
  });
  await response.body?.cancel();
  // The collector's answer is never logged: it may echo the request, headers included.
  if (!response.ok) throw new OtlpExportError(`the OTLP collector answered ${response.status}`);
}
