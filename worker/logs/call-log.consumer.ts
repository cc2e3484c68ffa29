import { z } from "zod";
import { CALL_KINDS, CALL_OUTCOMES } from "../../schema/api/logs.ts";
import type { CallLogMessage } from "./call-log.ts";
import { PACKET_CALLS } from "./call-log.send.ts";
import { writeCallLogs } from "./log-store.ts";
import { exportCallTraces, otlpConfigured } from "./otel-export.ts";

const text = z.string().max(4096);
const ms = z.number().finite().min(0);

const StageRowSchema = z.object({
  toolUid: text,
  requestId: text,
  stage: z.enum(["before", "after", "pre_dispatch", "upstream"]),
  channel: z.enum(["active", "shadow"]),
  outcome: text,
  code: text.nullable(),
  durationMs: ms,
  revisionId: text.nullable(),
  shadowDiffered: z.boolean().nullable(),
  callIndex: z.number().int().nullable().optional(),
  offsetMs: ms.optional(),
  details: z.record(z.string(), z.unknown()).optional(),
});

const CallLogMessageSchema = z.object({
  v: z.literal(1),
  call: z.object({
    workspaceId: text,
    requestId: text,
    kind: z.enum(CALL_KINDS),
    callIndex: z.number().int().min(0).nullable(),
    startedAt: z.iso.datetime(),
    actor: text,
    keyId: text,
    grantedBy: text.nullable(),
    profileId: text.nullable(),
    serviceId: text.nullable(),
    toolUid: text.nullable(),
    name: text,
    item: text.nullable(),
    outcome: z.enum(CALL_OUTCOMES),
    code: text.nullable(),
    durationMs: ms,
    gatewayMs: ms,
    hooksMs: ms,
    upstreamMs: ms,
    upstreamOffsetMs: ms.nullable(),
    bytesIn: z.number().int().min(0),
    bytesOut: z.number().int().min(0),
    revisionId: text.nullable(),
    shadow: z.enum(["same", "differed", "not_run"]).nullable(),
    innerCalls: z.number().int().min(0).nullable(),
    program: z.object({ sha256: text, bytes: z.number().int().min(0) }).nullable(),
  }),
  stages: z.array(StageRowSchema).max(64),
});

/** A packet's envelope; its calls are checked one by one. */
const PacketSchema = z.object({ v: z.literal(1), packet: z.array(z.unknown()).max(PACKET_CALLS) });

/** How long a failed batch waits before its next delivery: 1 s, 2 s, 4 s, … at most a minute. */
export const retryDelaySeconds = (attempts: number) => Math.min(60, 2 ** Math.max(0, attempts - 1));

/** The key a call's message is idempotent on: request id and row kind (a Code Mode inner call's index included). */
const messageKey = ({ call }: CallLogMessage) => `${call.workspaceId} ${call.requestId} ${call.kind} ${call.callIndex ?? -1}`;

/**
 * The queue consumer (wrangler.toml `[[queues.consumers]]`). A message is a packet of up to PACKET_CALLS calls or
 * a single call's message, as the call path sent them before packets. Delivery is at least once: a batch is
 * written in one D1 transaction per database, then exported to OpenTelemetry when configured, then acknowledged.
 * Any failure retries the whole batch; rows already written are skipped on the retry (their rollups and detail
 * bytes too), so a redelivered batch adds nothing and a failed one loses nothing. A call that is not a call-log
 * message (a version this code does not know), alone or in a packet, is acknowledged and dropped with an error in
 * the log: retrying cannot fix it, and it must not hold up the other workspaces' rows in its batch.
 */
export async function consumeCallLogs(batch: MessageBatch<unknown>, env: Env): Promise<void> {
  const messages = new Map<string, CallLogMessage>();
  for (const message of batch.messages) {
    // A packet (call-log.send.ts) carries several calls; each is checked on its own, so one bad call drops alone.
    const packet = PacketSchema.safeParse(message.body);
    const calls = packet.success ? packet.data.packet : [message.body];
    for (const call of calls) {
      const parsed = CallLogMessageSchema.safeParse(call);
      if (!parsed.success) {
        console.error(`call log message ${message.id} dropped: ${parsed.error.issues[0]?.message ?? "invalid"}`);
        continue;
      }
      const body = parsed.data as CallLogMessage;
      messages.set(messageKey(body), body);
    }
  }
  const attempts = Math.max(1, ...batch.messages.map((message) => message.attempts));
  try {
    await writeCallLogs(env, [...messages.values()]);
    if (otlpConfigured(env)) await exportCallTraces(env, [...messages.values()]);
  } catch (error) {
    console.error(`call log batch of ${batch.messages.length} failed (attempt ${attempts}), retrying`, error);
    batch.retryAll({ delaySeconds: retryDelaySeconds(attempts) });
    return;
  }
  batch.ackAll();
}
