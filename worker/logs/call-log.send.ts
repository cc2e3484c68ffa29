import type { CallLogMessage } from "./call-log.ts";
import { laneFor } from "./call-log.lanes.ts";

/** Queues takes at most 100 messages and 256 KB in one sendBatch. */
const SEND_BATCH_MESSAGES = 100;
const SEND_BATCH_BYTES = 250 * 1024;

const encoder = new TextEncoder();

/**
 * Hands call-log messages to the queue, after the response (the caller runs this under `afterResponse`). The call
 * path never writes a row to D1 itself. Each message goes to the shared lane while its workspace is within its fair
 * share, else to the overflow lane (call-log.lanes.ts). When a queue refuses or is unreachable, the messages are
 * lost: the call has been answered already and a log must never fail it. The loss is counted per workspace and
 * minute in `call_log_losses` (GET …/metrics `lost`), the only D1 write the call path makes, and only on this failure.
 */
export async function sendCallLogs(env: Env, messages: CallLogMessage[]): Promise<void> {
  if (env.CALL_LOG === "off") return;
  const shared: CallLogMessage[] = [];
  const overflow: CallLogMessage[] = [];
  for (const message of messages) (laneFor(message.call.workspaceId) === "shared" ? shared : overflow).push(message);
  await send(env, env.CALL_LOGS, shared);
  await send(env, env.CALL_LOGS_OVERFLOW, overflow);
}

async function send(env: Env, queue: Queue, messages: CallLogMessage[]): Promise<void> {
  for (const chunk of chunks(messages)) {
    try {
      await queue.sendBatch(chunk.map((body) => ({ body, contentType: "json" as const })));
    } catch (error) {
      console.error(`call log queue send failed, ${chunk.length} rows lost`, error);
      await countLost(env.DB, chunk);
    }
  }
}

function* chunks(messages: CallLogMessage[]): Generator<CallLogMessage[]> {
  let chunk: CallLogMessage[] = [];
  let bytes = 0;
  for (const message of messages) {
    const size = encoder.encode(JSON.stringify(message)).byteLength;
    if (chunk.length && (chunk.length === SEND_BATCH_MESSAGES || bytes + size > SEND_BATCH_BYTES)) {
      yield chunk;
      chunk = [];
      bytes = 0;
    }
    chunk.push(message);
    bytes += size;
  }
  if (chunk.length) yield chunk;
}

async function countLost(db: D1Database, messages: CallLogMessage[]): Promise<void> {
  const perMinute = new Map<string, { workspaceId: string; minute: number; lost: number }>();
  for (const { call } of messages) {
    const minute = Math.floor(Date.parse(call.startedAt) / 60_000);
    const key = `${call.workspaceId} ${minute}`;
    const entry = perMinute.get(key) ?? { workspaceId: call.workspaceId, minute, lost: 0 };
    entry.lost += 1;
    perMinute.set(key, entry);
  }
  try {
    await db.batch(
      [...perMinute.values()].map(({ workspaceId, minute, lost }) =>
        db
          .prepare(
            `INSERT INTO call_log_losses (workspace_id, minute, lost) VALUES (?, ?, ?)
             ON CONFLICT (workspace_id, minute) DO UPDATE SET lost = lost + excluded.lost`,
          )
          .bind(workspaceId, minute, lost),
      ),
    );
  } catch (error) {
    console.error("call log losses could not be counted", error);
  }
}
