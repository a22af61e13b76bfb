/**
 * Ranking quality of a list against a reference ranking, when the reference
 * has no labels: the reference's order defines graded relevance (its first
 * item most relevant), and NDCG@k measures how much of that the list keeps.
 */
import { InternalError } from '../../core/index.js';

/**
 * NDCG@k of `list` against `reference`: an item at reference position r (0-based)
 * has gain k - r when r < k, else 0; DCG uses log2(position + 2) discounts.
 * 1 when the top k agree in order; 0 when no top-k reference item appears.
 */
export function ndcgAtK<T>(list: readonly T[], reference: readonly T[], k: number): number {
  if (k <= 0) throw new InternalError(`k must be >= 1, got ${k}`);
  const gain = new Map<T, number>();
  reference.slice(0, k).forEach((item, rank) => gain.set(item, k - rank));
  let dcg = 0;
  list.slice(0, k).forEach((item, position) => {
    dcg += (gain.get(item) ?? 0) / Math.log2(position + 2);
  });
  let ideal = 0;
  for (let position = 0; position < Math.min(k, reference.length); position++) ideal += (k - position) / Math.log2(position + 2);
  return ideal === 0 ? 1 : dcg / ideal;
}

/** NDCG@k of `list` against graded relevance `labels` (item → grade); items without a label have grade 0. */
export function ndcgAtKWithLabels<T>(list: readonly T[], labels: ReadonlyMap<T, number>, k: number): number {
  if (k <= 0) throw new InternalError(`k must be >= 1, got ${k}`);
  const gain = (grade: number): number => 2 ** grade - 1;
  let dcg = 0;
  list.slice(0, k).forEach((item, position) => {
    dcg += gain(labels.get(item) ?? 0) / Math.log2(position + 2);
  });
  const ideal = [...labels.values()]
    .sort((a, b) => b - a)
    .slice(0, k)
    .reduce((sum, grade, position) => sum + gain(grade) / Math.log2(position + 2), 0);
  return ideal === 0 ? 1 : dcg / ideal;
}

/**
 * Kendall's tau-a between two rankings over the items both contain: +1 same
 * order, −1 reversed. NaN with fewer than two common items.
 */
export function kendallTau<T>(a: readonly T[], b: readonly T[]): number {
  const positionInB = new Map<T, number>();
  b.forEach((item, i) => {
    if (!positionInB.has(item)) positionInB.set(item, i);
  });
  const common = a.filter((item, i) => positionInB.has(item) && a.indexOf(item) === i).map((item) => positionInB.get(item)!);
  const n = common.length;
  if (n < 2) return Number.NaN;
  let concordant = 0;
  let discordant = 0;
  for (let i = 0; i < n; i++) {
    for (let j = i + 1; j < n; j++) {
      if (common[i]! < common[j]!) concordant++;
      else if (common[i]! > common[j]!) discordant++;
    }
  }
  return (concordant - discordant) / ((n * (n - 1)) / 2);
}

/** Share of the top k of `a` that is also in the top k of `b` (1 when both are empty). */
export function overlapAtK<T>(a: readonly T[], b: readonly T[], k: number): number {
  if (k <= 0) throw new InternalError(`k must be >= 1, got ${k}`);
  const topB = new Set(b.slice(0, k));
  const topA = new Set(a.slice(0, k));
  const size = Math.max(topA.size, topB.size);
  if (size === 0) return 1;
  let shared = 0;
  for (const item of topA) if (topB.has(item)) shared++;
  return shared / size;
}
