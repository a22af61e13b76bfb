/**
 * Ranking quality of a list against a reference ranking, when the reference
 * has no labels: the reference's order defines graded relevance (its first
 * item most relevant), and NDCG@k measures how much of that the list keeps.
 */

/**
 * NDCG@k of `list` against `reference`: an item at reference position r (0-based)
 * has gain k - r when r < k, else 0; DCG uses log2(position + 2) discounts.
 * 1 when the top k agree in order; 0 when no top-k reference item appears.
 */
export function ndcgAtK<T>(list: readonly T[], reference: readonly T[], k: number): number {
  if (k <= 0) throw new RangeError(`k must be >= 1, got ${k}`);
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
