/**
 * The duration histogram behind p50/p99 in the rollups. A call row stores its bucket; the rollups count calls per
 * bucket; a percentile is read back from the summed buckets, interpolated inside the bucket it falls in, so its
 * error is at most that bucket's width (about ±25% of the value, 1–2 ms below 10 ms).
 */

/** Upper bounds (ms, inclusive) of the buckets; one more bucket takes everything above the last. */
export const DURATION_BUCKET_BOUNDS_MS = [
  0.5, 1, 2, 3, 4, 5, 7.5, 10, 15, 20, 30, 40, 50, 75, 100, 150, 200, 300, 400, 500, 750, 1000, 1500, 2000, 3000, 5000, 7500, 10_000,
  15_000, 20_000, 30_000, 60_000,
] as const;

export const DURATION_BUCKETS = DURATION_BUCKET_BOUNDS_MS.length + 1;

export function durationBucket(durationMs: number): number {
  const index = DURATION_BUCKET_BOUNDS_MS.findIndex((bound) => durationMs <= bound);
  return index === -1 ? DURATION_BUCKET_BOUNDS_MS.length : index;
}

/** The `q` quantile (0–1) of the durations counted in `counts` (one count per bucket); null for no calls. */
export function percentile(counts: readonly number[], q: number): number | null {
  const total = counts.reduce((sum, count) => sum + count, 0);
  if (!total) return null;
  const rank = q * total;
  let below = 0;
  for (let bucket = 0; bucket < counts.length; bucket++) {
    const count = counts[bucket] ?? 0;
    if (count && below + count >= rank) {
      const low = bucket === 0 ? 0 : DURATION_BUCKET_BOUNDS_MS[bucket - 1]!;
      // The open last bucket has no upper bound: its lower bound is the honest answer.
      const high = DURATION_BUCKET_BOUNDS_MS[bucket] ?? low;
      return low + (high - low) * ((rank - below) / count);
    }
    below += count;
  }
  return DURATION_BUCKET_BOUNDS_MS.at(-1)!;
}
