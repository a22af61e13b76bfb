/**
 * A mergeable latency sketch: counts per logarithmic bucket (the mapping of
 * DDSketch, Masson, Rim & Lee, VLDB 2019). Bucket i holds latencies in
 * [γ^i, γ^(i+1)); with γ = 1.02 any quantile read from the sketch is within
 * 1% (relative) of an order statistic next to it, whatever the
 * distribution's tail. Sketches of trials and arms add bucket by bucket, so a
 * store computes them where the data lives (ClickHouse in SQL with the same
 * mapping: `LATENCY_BUCKET_SQL`) and a report merges a few hundred numbers
 * per trial instead of holding every latency. Written here rather than taken
 * from a library because both stores must compute bit-identical bucket
 * indexes, and the SQL side can only share a one-line mapping.
 */

/** Bucket growth factor γ. */
export const LATENCY_SKETCH_GAMMA = 1.02;
/** Worst relative error of a quantile read from the sketch: (γ − 1) / (γ + 1). */
export const LATENCY_SKETCH_RELATIVE_ERROR = (LATENCY_SKETCH_GAMMA - 1) / (LATENCY_SKETCH_GAMMA + 1);
/** Where latencies of 0 (no response timed) and non-finite values go. */
export const ZERO_LATENCY_BUCKET = -1_000_000;

const LOG_GAMMA = Math.log(LATENCY_SKETCH_GAMMA);

/** The bucket of one latency, in ms. */
export function latencyBucket(latencyMs: number): number {
  if (!(latencyMs > 0) || !Number.isFinite(latencyMs)) return ZERO_LATENCY_BUCKET;
  return Math.floor(Math.log(latencyMs) / LOG_GAMMA);
}

/** The same mapping as a ClickHouse expression over column `column` (the divisor printed exactly as JavaScript holds it). */
export function latencyBucketSql(column: string): string {
  return `if(${column} > 0 AND isFinite(${column}), toInt32(floor(log(${column}) / ${LOG_GAMMA.toPrecision(17)})), ${ZERO_LATENCY_BUCKET})`;
}

/** Counts per bucket index. */
export type LatencyBuckets = Readonly<Record<string, number>>;

/** A bucket's representative latency: the value with the smallest worst relative error over [γ^i, γ^(i+1)). */
function bucketValue(bucket: number): number {
  if (bucket === ZERO_LATENCY_BUCKET) return 0;
  return (2 * LATENCY_SKETCH_GAMMA ** (bucket + 1)) / (LATENCY_SKETCH_GAMMA + 1);
}

/** Buckets sorted by index with their counts, for reading several quantiles. */
export function sortedBuckets(buckets: LatencyBuckets): { readonly index: number; readonly count: number }[] {
  return Object.entries(buckets)
    .map(([bucket, count]) => ({ index: Number(bucket), count }))
    .filter((b) => Number.isInteger(b.index) && b.count > 0)
    .sort((a, b) => a.index - b.index);
}

/**
 * The q-quantile (0..1) of the sketched latencies: the bucket holding the order statistic of rank
 * round(q·(n − 1)), clamped to the exact minimum and maximum (so q = 0 and q = 1 are exact). NaN when empty.
 */
export function sketchQuantile(
  sorted: readonly { readonly index: number; readonly count: number }[],
  q: number,
  bounds: { readonly min: number; readonly max: number },
): number {
  const total = sorted.reduce((sum, b) => sum + b.count, 0);
  if (total === 0) return Number.NaN;
  const rank = Math.round(Math.min(1, Math.max(0, q)) * (total - 1));
  if (rank === 0) return bounds.min;
  if (rank === total - 1) return bounds.max;
  let seen = 0;
  for (const b of sorted) {
    seen += b.count;
    if (seen > rank) return Math.min(bounds.max, Math.max(bounds.min, bucketValue(b.index)));
  }
  return bounds.max;
}
