/**
 * The ranking side of a response comparison: per pair, NDCG@k, Kendall tau
 * and overlap@k of treatment against control (or against labels recorded
 * with the request), the same of control′ against control (what "no change"
 * looks like), and empty lists (the no-result rate).
 */
import type { Json, RequestOutcome, WorkloadConfig } from '../../core/index.js';
import { kendallTau, ndcgAtK, ndcgAtKWithLabels, overlapAtK } from './ranking-metrics.js';
import { decodeJson } from './response-diff.js';

type RankingConfig = NonNullable<NonNullable<WorkloadConfig['harness']['responses']>['ranking']>;

export interface RankingComparison {
  readonly pairs: number;
  readonly k: number;
  /** Against control's ranking, or against the record's labels when configured. */
  readonly reference: 'control' | 'labels';
  readonly ndcg: { readonly mean: number; readonly min: number };
  readonly kendallTau: { readonly mean: number; readonly min: number };
  readonly overlap: { readonly mean: number; readonly min: number };
  /** The same figures for control′ against control: what "no change" looks like. */
  readonly noise?: { readonly ndcg: number; readonly kendallTau: number; readonly overlap: number };
  /** Share of compared responses whose ranked list was empty (the no-result rate), per arm. */
  readonly noResultShare: { readonly control: number; readonly treatment: number };
  /** Mean NDCG of each trial. */
  readonly perTrialNdcg: readonly { readonly trial: number; readonly mean: number }[];
}

function at(value: Json | undefined, dotted: string): Json | undefined {
  let current: Json | undefined = value;
  for (const key of dotted.split('.')) {
    if (current === null || typeof current !== 'object' || Array.isArray(current)) return undefined;
    current = current[key];
  }
  return current;
}

function rankedIds(body: Json | undefined, ranking: RankingConfig): string[] | undefined {
  const list = at(body, ranking.path);
  if (!Array.isArray(list)) return undefined;
  return list.map((entry) => {
    const id = ranking.id !== undefined && entry !== null && typeof entry === 'object' && !Array.isArray(entry) ? entry[ranking.id] : entry;
    return typeof id === 'string' ? id : JSON.stringify(id);
  });
}

const summarize = (values: readonly number[]): { mean: number; min: number } => {
  const finite = values.filter(Number.isFinite);
  return finite.length === 0
    ? { mean: Number.NaN, min: Number.NaN }
    : { mean: finite.reduce((a, b) => a + b, 0) / finite.length, min: finite.reduce((a, b) => Math.min(a, b), Number.POSITIVE_INFINITY) };
};

export class RankingTally {
  readonly #config: RankingConfig;
  readonly #requestBodies: ReadonlyMap<string, string> | undefined;
  readonly #ndcg: number[] = [];
  readonly #tau: number[] = [];
  readonly #overlap: number[] = [];
  readonly #noise = { ndcg: [] as number[], tau: [] as number[], overlap: [] as number[] };
  readonly #perTrial = new Map<number, number[]>();
  #emptyControl = 0;
  #emptyTreatment = 0;

  constructor(config: RankingConfig, requestBodies?: ReadonlyMap<string, string>) {
    this.#config = config;
    this.#requestBodies = requestBodies;
  }

  get pairs(): number {
    return this.#ndcg.length;
  }

  /** One pair (and control′ of the same record when there is one); a pair without two ranked lists is not counted. */
  add(control: RequestOutcome, treatment: RequestOutcome, prime: RequestOutcome | undefined): void {
    const { k } = this.#config;
    const controlIds = rankedIds(decodeJson(control.body), this.#config);
    const treatmentIds = rankedIds(decodeJson(treatment.body), this.#config);
    if (!controlIds || !treatmentIds) return;
    if (controlIds.length === 0) this.#emptyControl++;
    if (treatmentIds.length === 0) this.#emptyTreatment++;
    const labels = this.#labelsOf(control.recordId);
    const value = labels ? ndcgAtKWithLabels(treatmentIds, labels, k) : ndcgAtK(treatmentIds, controlIds, k);
    this.#ndcg.push(value);
    this.#perTrial.set(control.trial, [...(this.#perTrial.get(control.trial) ?? []), value]);
    this.#tau.push(kendallTau(controlIds, treatmentIds));
    this.#overlap.push(overlapAtK(controlIds, treatmentIds, k));
    const primeIds = rankedIds(decodeJson(prime?.body), this.#config);
    if (primeIds) {
      this.#noise.ndcg.push(ndcgAtK(primeIds, controlIds, k));
      this.#noise.tau.push(kendallTau(controlIds, primeIds));
      this.#noise.overlap.push(overlapAtK(controlIds, primeIds, k));
    }
  }

  summary(): RankingComparison {
    const pairs = this.#ndcg.length;
    return {
      pairs,
      k: this.#config.k,
      reference: this.#config.labelsPath !== undefined ? 'labels' : 'control',
      ndcg: summarize(this.#ndcg),
      kendallTau: summarize(this.#tau),
      overlap: summarize(this.#overlap),
      ...(this.#noise.ndcg.length > 0
        ? { noise: { ndcg: summarize(this.#noise.ndcg).mean, kendallTau: summarize(this.#noise.tau).mean, overlap: summarize(this.#noise.overlap).mean } }
        : {}),
      noResultShare: { control: this.#emptyControl / pairs, treatment: this.#emptyTreatment / pairs },
      perTrialNdcg: [...this.#perTrial.entries()].sort((a, b) => a[0] - b[0]).map(([trial, values]) => ({ trial, mean: summarize(values).mean })),
    };
  }

  /** Graded labels recorded with the request (`labelsPath` in its body), when configured. */
  #labelsOf(recordId: string): Map<string, number> | undefined {
    if (this.#config.labelsPath === undefined) return undefined;
    const raw = this.#requestBodies?.get(recordId);
    const found = raw !== undefined ? at(decodeJson(raw), this.#config.labelsPath) : undefined;
    if (found === null || typeof found !== 'object' || Array.isArray(found)) return undefined;
    return new Map(Object.entries(found).filter((e): e is [string, number] => typeof e[1] === 'number'));
  }
}
