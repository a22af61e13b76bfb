/**
 * Bisection over a revision range, as `git bisect` does it but with an
 * experiment as the test: each step runs the candidate revision (treatment)
 * against the known-good one (control). A revision that cannot be built or
 * deployed is skipped; an inconclusive verdict is retried once with more
 * trials, then skipped. When skips leave several candidates, all of them are
 * reported rather than a guess.
 */

export type StepVerdict = 'good' | 'bad' | 'skip';

export interface StepOutcome {
  readonly verdict: StepVerdict;
  /** Why, in words: the verdict's reason, the deploy failure, the inconclusive metric. */
  readonly reason: string;
  readonly experimentId?: string;
}

export interface BisectStep extends StepOutcome {
  readonly revision: string;
  readonly index: number;
}

export interface BisectResult {
  /** The first bad revision, when the evidence pins it down. */
  readonly firstBad?: string;
  /** When skips leave more than one: every revision that could be the first bad one, oldest first. */
  readonly candidates: readonly string[];
  readonly steps: readonly BisectStep[];
}

/**
 * `revisions`: the commits after the good one up to and including the bad one, oldest first.
 * `test` judges one revision.
 */
export async function bisectRevisions(
  revisions: readonly string[],
  test: (revision: string) => Promise<StepOutcome>,
  options: { signal?: AbortSignal } = {},
): Promise<BisectResult> {
  const steps: BisectStep[] = [];
  if (revisions.length === 0) return { candidates: [], steps };
  let good = -1; // index of the newest known-good revision (-1: the good endpoint itself)
  let bad = revisions.length - 1; // the bad endpoint is bad by definition
  const skipped = new Set<number>();
  while (bad - good > 1) {
    if (options.signal?.aborted) break;
    const mid = Math.floor((good + bad) / 2);
    // The untested revision nearest the middle (git bisect moves away from skipped ones the same way).
    let pick: number | undefined;
    for (let distance = 0; distance < bad - good; distance++) {
      for (const candidate of [mid - distance, mid + distance]) {
        if (candidate > good && candidate < bad && !skipped.has(candidate)) {
          pick = candidate;
          break;
        }
      }
      if (pick !== undefined) break;
    }
    if (pick === undefined) break; // everything between good and bad was skipped
    const outcome = await test(revisions[pick]!);
    steps.push({ ...outcome, revision: revisions[pick]!, index: pick });
    if (outcome.verdict === 'good') good = pick;
    else if (outcome.verdict === 'bad') bad = pick;
    else skipped.add(pick);
  }
  const candidates = revisions.slice(good + 1, bad + 1);
  return { ...(candidates.length === 1 ? { firstBad: candidates[0]! } : {}), candidates, steps };
}
