/**
 * Which queue a call's row travels on (docs/logs.md, "One workspace's flood"). Every workspace shares one lane,
 * `CALL_LOGS`, within a fair share; what a workspace sends past its share goes to the overflow lane,
 * `CALL_LOGS_OVERFLOW`, which the same consumer drains beside it. So a flood waits behind itself: the shared lane
 * holds at most each workspace's share, and a workspace within its share is never queued behind another's flood,
 * however large. The share counts calls, not queue messages: calls travel in packets (call-log.send.ts), each
 * lane's apart, so a packet on the shared lane holds only calls within their workspaces' shares.
 *
 * The share is a token bucket per workspace, kept in each Worker isolate (the call path makes no round trip for it):
 * a burst of FAIR_LANE_BURST calls, refilled at FAIR_LANE_PER_SECOND. Across isolates a flood can put that much
 * in the shared lane per isolate it reaches, which is still a bound set by the share, not by the flood.
 */

export const FAIR_LANE_BURST = 200;
export const FAIR_LANE_PER_SECOND = 50;
/** Workspaces whose buckets one isolate keeps; past it, the full ones (worth nothing kept) are let go. */
const TRACKED_WORKSPACES = 10_000;

interface Bucket {
  tokens: number;
  at: number;
}

const buckets = new Map<string, Bucket>();

export type Lane = "shared" | "overflow";

/** Takes one call's place for `workspaceId`: in the shared lane while its share lasts, else in the overflow lane. */
export function laneFor(workspaceId: string, now = Date.now()): Lane {
  let bucket = buckets.get(workspaceId);
  if (!bucket) {
    if (buckets.size >= TRACKED_WORKSPACES) forgetFull(now);
    bucket = { tokens: FAIR_LANE_BURST, at: now };
    buckets.set(workspaceId, bucket);
  } else refill(bucket, now);
  if (bucket.tokens < 1) return "overflow";
  bucket.tokens -= 1;
  return "shared";
}

function refill(bucket: Bucket, now: number): void {
  const elapsed = Math.max(0, now - bucket.at) / 1000;
  bucket.tokens = Math.min(FAIR_LANE_BURST, bucket.tokens + elapsed * FAIR_LANE_PER_SECOND);
  bucket.at = now;
}

/**
 * A full bucket is what a workspace not seen yet gets: dropping it changes nothing. When every tracked workspace is
 * sending, the one tracked longest goes (its next message starts a fresh share), so the map stays bounded.
 */
function forgetFull(now: number): void {
  for (const [workspaceId, bucket] of buckets) {
    refill(bucket, now);
    if (bucket.tokens >= FAIR_LANE_BURST) buckets.delete(workspaceId);
  }
  if (buckets.size >= TRACKED_WORKSPACES) buckets.delete(buckets.keys().next().value!);
}
