/**
 * The example stack's "world": a deterministic catalog, feature vectors,
 * query rewrites and a small multi-layer scoring model. Everything is a pure
 * function of its inputs and fixed seeds, so a ranked list depends only on the
 * request and the service levels, and control and treatment can be compared
 * exactly.
 */

// Leaf import: see faults.ts.
import { fnv1a, seededRandom } from '../../core/random.js';

/** Documents in the catalog. */
export const CATALOG_SIZE = 5_000;
/** Width of a feature vector and of the model input. */
export const FEATURES = 16;
/** Width of the model's hidden layers. */
export const HIDDEN = 16;
/** Layers of the full model (prediction level 0). */
export const FULL_LAYERS = 4;

/** Stable hash of a string (FNV-1a). */
export const hashString = (text: string): number => fnv1a(text);

/** A seeded PRNG for weights and candidate sets. */
export const prng = seededRandom;

/** Values in [-1, 1) from a seed. */
function vector(seed: number, length: number): number[] {
  const next = prng(seed);
  return Array.from({ length }, () => next() * 2 - 1);
}

/** Feature vector of a document for a viewer (what the feature service returns), rounded to 4 decimals. */
export function documentFeatures(doc: number, viewer: number): number[] {
  const base = vector(hashString(`doc:${doc}`), FEATURES);
  const affinity = vector(hashString(`viewer:${viewer}`), FEATURES);
  return base.map((value, i) => Math.round((value * 0.8 + value * affinity[i]! * 0.2) * 10_000) / 10_000);
}

/**
 * The query and its rewrites ("multi-queries"): variant 0 is the query itself
 * and carries most weight, so dropping later variants costs little quality.
 */
export const MULTI_QUERY_WEIGHTS = [1, 0.25, 0.1] as const;

export function queryVector(surface: string, query: string, variant: number): number[] {
  return vector(hashString(`q:${surface}:${query}:${variant}`), FEATURES);
}

/**
 * Candidate documents for a request, best prior first (the order the query
 * service assembles them in). Deterministic per (surface, query, viewer).
 */
export function candidateSet(surface: string, query: string, viewer: number, size: number): number[] {
  const next = prng(hashString(`cand:${surface}:${query}:${viewer % 97}`));
  const seen = new Set<number>();
  const out: number[] = [];
  while (out.length < size) {
    const doc = Math.floor(next() * CATALOG_SIZE);
    if (!seen.has(doc)) {
      seen.add(doc);
      out.push(doc);
    }
  }
  return out
    .map((doc) => [doc, priorScore(doc)] as const)
    .sort((a, b) => b[1] - a[1] || a[0] - b[0])
    .map(([doc]) => doc);
}

interface ModelWeights {
  /** Layer 0 maps FEATURES→HIDDEN; later layers are residual HIDDEN→HIDDEN blocks. */
  readonly layers: readonly (readonly number[])[];
  readonly head: readonly number[];
}

/**
 * Residual blocks contribute less the deeper they sit, so a model evaluated
 * with fewer layers (HiLO's model layer reduction) scores nearly the same.
 */
export const RESIDUAL_SCALE = [1, 0.35, 0.2, 0.1] as const;

/** How much of a score the document's own quality explains; the rest is the model. */
export const QUALITY_WEIGHT = 0.5;

/** Direction in feature space of a document's intrinsic quality. */
export const QUALITY_DIRECTION = vector(hashString('quality'), FEATURES);

const weightsCache = new Map<string, ModelWeights>();

export function modelWeights(model: string): ModelWeights {
  let weights = weightsCache.get(model);
  if (!weights) {
    const layers: number[][] = [];
    for (let layer = 0; layer < FULL_LAYERS; layer++) {
      const inputs = layer === 0 ? FEATURES : HIDDEN;
      layers.push(vector(hashString(`w:${model}:${layer}`), inputs * HIDDEN).map((w) => w / Math.sqrt(inputs)));
    }
    weights = { layers, head: vector(hashString(`h:${model}`), HIDDEN).map((w) => w / Math.sqrt(HIDDEN)) };
    weightsCache.set(model, weights);
  }
  return weights;
}

/**
 * A document's prior: its intrinsic quality, cheap to compute without the
 * viewer or the model. The query service orders candidates by it (first-stage
 * retrieval), so scoring only the top share of candidates loses little.
 */
export function priorScore(doc: number): number {
  const base = vector(hashString(`doc:${doc}`), FEATURES);
  // Only half of the quality signal is visible this early: the prior is informative, not exact.
  let score = 0;
  for (let i = 0; i < FEATURES / 2; i++) score += base[i]! * QUALITY_DIRECTION[i]!;
  return score;
}

/**
 * Score each row of `input` ([batch, FEATURES], row-major) with the first
 * `depth` layers. Returns scores and the multiply-adds performed (work units).
 */
export function scoreBatch(model: string, input: Float32Array, batch: number, depth: number): { scores: number[]; work: number } {
  const { layers, head } = modelWeights(model);
  const scores: number[] = [];
  const activation = new Float64Array(HIDDEN);
  const update = new Float64Array(HIDDEN);
  let work = 0;
  for (let row = 0; row < batch; row++) {
    const offset = row * FEATURES;
    for (let layer = 0; layer < depth; layer++) {
      const weights = layers[layer]!;
      const inputs = layer === 0 ? FEATURES : HIDDEN;
      for (let h = 0; h < HIDDEN; h++) {
        let sum = 0;
        for (let i = 0; i < inputs; i++) sum += (layer === 0 ? input[offset + i]! : activation[i]!) * weights[i * HIDDEN + h]!;
        update[h] = Math.tanh(sum);
      }
      for (let h = 0; h < HIDDEN; h++) activation[h] = layer === 0 ? update[h]! : activation[h]! + RESIDUAL_SCALE[layer]! * update[h]!;
      work += inputs * HIDDEN;
    }
    let learned = 0;
    for (let h = 0; h < HIDDEN; h++) learned += activation[h]! * head[h]!;
    let quality = 0;
    for (let i = 0; i < FEATURES; i++) quality += input[offset + i]! * QUALITY_DIRECTION[i]!;
    work += HIDDEN + FEATURES;
    scores.push(Math.round(((1 - QUALITY_WEIGHT) * learned + QUALITY_WEIGHT * quality * 0.25) * 1e9) / 1e9);
  }
  return { scores, work };
}

/**
 * Rounds of feature crossing per document and variant, by default: ranking's own CPU cost. At 24 the crossing was
 * about 40% of a request's CPU (HTTP, JSON, the features and inference calls, garbage collection made the rest), so
 * the demo's +5% work step cost +1.7–1.8% CPU per request on 2026-12-03's machine: at its 2% threshold, a change
 * no number of trials could decide (32 trials: +1.8% [+1.0%, +2.6%]). At 48 the crossing is 52–58% of a request's
 * CPU on a later host and the step about +2.6–2.9%. A deployment may set its own (`STACK_CROSS_ROUNDS`), as
 * `npm run bench -- paired-noise --cross-rounds N` does to measure what a step costs at another share (docs/demo.md).
 */
export const CROSS_ROUNDS = 48;

/** The most rounds a deployment may ask for: about 0.15–0.17 ms of CPU per round for a typical request (2026-12-03), so about a sixth of a second at 1024. */
export const MAX_CROSS_ROUNDS = 1024;

/**
 * Ranking's own work for one query variant: crossing each document's
 * features with the query vector. Writes row r of the model input into `out`
 * at `offset + r * stride` and returns the multiply-adds performed, `rounds`
 * rounds per row and feature.
 *
 * All loops live in this one function, which nothing inlines: when the row
 * loop called a per-row function, V8's inlining decision (taken from timing
 * samples) differed between processes, and one fresh process in five spent
 * 20% more CPU per request for its whole life — noise that an A/A comparison
 * of two freshly started arms measures as a change. The inner loop reads each
 * row from a Float64Array copy, never from the JSON-parsed array itself: while
 * it read the array, about 40% of fresh processes ran it 12% faster than the
 * rest for their whole life, and half of all A/A trials were 10–13% off
 * (`npm run bench -- paired-noise`: between-process sd 9.4% before the copy,
 * 1.1% after; docs/harness.md).
 */
export function crossFeatureRows(
  rows: readonly (readonly number[])[],
  query: readonly number[],
  out: Float32Array,
  offset: number,
  rounds: number = CROSS_ROUNDS,
  stride: number = FEATURES,
): number {
  // The query twice over, as doubles: position i + j + round of the rotation is read without a modulo.
  const rotated = new Float64Array(3 * FEATURES + rounds);
  for (let k = 0; k < rotated.length; k++) rotated[k] = query[k % FEATURES]!;
  // One typed row the hot loop reads (see above); the copy is FEATURES loads against FEATURES² · rounds multiply-adds.
  const features = new Float64Array(FEATURES);
  for (let r = 0; r < rows.length; r++) {
    const row = rows[r]!;
    for (let j = 0; j < FEATURES; j++) features[j] = row[j]!;
    const base = offset + r * stride;
    for (let i = 0; i < FEATURES; i++) {
      let sum = 0;
      for (let round = 0; round < rounds; round++) {
        for (let j = 0; j < FEATURES; j++) sum += features[j]! * rotated[i + j + round]!;
      }
      out[base + i] = Math.round((sum / rounds + features[i]!) * 10_000) / 10_000;
    }
  }
  return rows.length * rounds * FEATURES * FEATURES;
}

/**
 * The rows the `latency` fault crosses on top of the real ones: `count` of the request's own rows, in turn, in a
 * packed array like the JSON-parsed rows. `new Array(count).fill(row)` made a holey one: the hot function then
 * saw two kinds of array, V8 compiled it for both, and the treatment ran other machine code than control for
 * every request, not just 5% more of the same. On 2026-12-03's machine the +5% treatment measured −0.7% CPU per
 * request against control with it (one process in four faster by 5–15%) and +1.6% with a packed array, in the
 * same trials. The fault crosses them in the same loop, through the same call, as the real rows (ranking-service.ts).
 */
export function burnRows(rows: readonly (readonly number[])[], count: number): (readonly number[])[] {
  return rows.length === 0 ? [] : Array.from({ length: count }, (_, k) => rows[k % rows.length]!);
}

/**
 * Tensors travel as base64 of little-endian float32 values: an order of
 * magnitude cheaper to encode and parse than JSON numbers, and exact.
 */
export function encodeTensor(values: Float32Array): string {
  return Buffer.from(values.buffer, values.byteOffset, values.byteLength).toString('base64');
}

/** Decode a tensor; undefined when the text is not whole float32 values. */
export function decodeTensor(text: string): Float32Array | undefined {
  const bytes = Buffer.from(text, 'base64');
  if (bytes.length % 4 !== 0) return undefined;
  const copy = new Uint8Array(bytes.length);
  copy.set(bytes);
  return new Float32Array(copy.buffer);
}
