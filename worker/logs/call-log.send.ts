import type { CallLogMessage, CallLogPacket } from "./call-log.ts";
import { laneFor } from "./call-log.lanes.ts";

/** Calls one packet holds at most; a consumer batch of 10 packets (wrangler.toml `max_batch_size`) writes at most 1,000. */
export const PACKET_CALLS = 100;
/** A queue message holds at most 128 KB; a packet stays under it with room for its envelope and commas. */
export const PACKET_BYTES = 125_000;
/** How long a packet waits, from its first call, for more calls before it is sent. */
export const PACKET_WAIT_MS = 100;

const encoder = new TextEncoder();

/** The calls gathered for one queue, and the promise of their send (kept alive by the opening request's waitUntil). */
interface Packet {
  messages: CallLogMessage[];
  bytes: number;
  sent: Promise<void>;
  /** Sends it before its timer: only ever called by the request that opened it. */
  sendNow: () => void;
}

/**
 * Each queue's open packet in this isolate, by its binding. A queue send under `wrangler dev` costs about as much
 * CPU as the rest of a call, and deployed it is a subrequest and a billed operation; one per packet, not per call.
 */
const open = new WeakMap<Queue, Packet>();

/**
 * Hands call-log messages to the queue, after the response (the caller runs this under `afterResponse`, whose
 * waitUntil keeps the request alive until the promise settles). The call path never writes a row to D1 itself.
 * Each call goes to the shared lane while its workspace is within its fair share, else to the overflow lane
 * (call-log.lanes.ts): the share counts calls, whichever packet they travel in.
 *
 * A packet belongs to the request that opened it: its timer, its send and its promise are that request's. It is
 * sent PACKET_WAIT_MS after its first call, or at once when its own request fills it; one that another request
 * fills takes no more calls and goes at its timer. Another request only adds its calls to it and waits for nothing
 * of it. workerd refuses a request whose awaited promise is settled by another request's code ("Cannot perform
 * I/O on behalf of a different request", RefcountedFulfiller): when a call closed another request's packet, or
 * waited for a send another request made, that error could surface under load. The returned promise settles once
 * the packets this call opened are sent.
 *
 * When a queue refuses or is unreachable, the packet's calls are lost: they have been answered already and a log
 * must never fail them. The loss is counted per workspace and minute in `call_log_losses` (GET …/metrics `lost`),
 * the only D1 write the call path makes, and only on this failure.
 */
export async function sendCallLogs(env: Env, messages: CallLogMessage[]): Promise<void> {
  if (env.CALL_LOG === "off") return;
  const opened = new Set<Packet>();
  for (const message of messages) {
    const queue = laneFor(message.call.workspaceId) === "shared" ? env.CALL_LOGS : env.CALL_LOGS_OVERFLOW;
    add(env, queue, message, opened);
  }
  await Promise.all([...opened].map((packet) => packet.sent));
}

/** Puts one call in its queue's open packet, opening one (noted in `opened`) when there is none with room. */
function add(env: Env, queue: Queue, message: CallLogMessage, opened: Set<Packet>): void {
  // One call's message is at most CALL_LOG_MESSAGE_BYTES (120 KiB), so it always fits a packet of its own.
  const bytes = encoder.encode(JSON.stringify(message)).byteLength;
  let packet = open.get(queue);
  if (packet && packet.bytes + bytes > PACKET_BYTES) {
    close(queue, packet, opened);
    packet = undefined;
  }
  if (!packet) {
    packet = openPacket(env, queue);
    opened.add(packet);
  }
  packet.messages.push(message);
  packet.bytes += bytes;
  if (packet.messages.length >= PACKET_CALLS) close(queue, packet, opened);
}

/** The packet takes no more calls: one this request opened is sent at once, another request's at its own timer. */
function close(queue: Queue, packet: Packet, opened: Set<Packet>): void {
  if (open.get(queue) === packet) open.delete(queue);
  if (opened.has(packet)) packet.sendNow();
}

function openPacket(env: Env, queue: Queue): Packet {
  let due!: () => void;
  const closing = new Promise<void>((resolve) => (due = resolve));
  const timer = setTimeout(due, PACKET_WAIT_MS);
  const packet: Packet = {
    messages: [],
    bytes: 0,
    sent: closing.then(() => {
      if (open.get(queue) === packet) open.delete(queue);
      return deliver(env, queue, packet.messages);
    }),
    sendNow: () => {
      clearTimeout(timer);
      due();
    },
  };
  open.set(queue, packet);
  return packet;
}

async function deliver(env: Env, queue: Queue, messages: CallLogMessage[]): Promise<void> {
  const packet: CallLogPacket = { v: 1, packet: messages };
  try {
    await queue.send(packet, { contentType: "json" });
  } catch (error) {
    console.error(`call log queue send failed, ${messages.length} rows lost`, error);
    await countLost(env.DB, messages);
  }
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
