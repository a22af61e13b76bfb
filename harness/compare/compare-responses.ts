/**
 * Response comparison of the same records answered by control and treatment:
 * coverage (what was compared, what was skipped and why), status mismatches,
 * a structural diff of decoded bodies (see response-diff.ts), the differences
 * grouped by endpoint with an example pair each (Diffy's view), and for
 * ranked lists NDCG@k, Kendall tau and overlap@k. With a second control
 * (control′) a field that differs between the two controls about as often as
 * between control and treatment is noise (Diffy's noise cancellation) and
 * is left out of the differences that count.
 */
import type { RequestOutcome, WorkloadConfig } from '../../core/index.js';
import { RankingTally, type RankingComparison } from './ranking-tally.js';
import { diffResponses, type Difference } from './response-diff.js';
import { EndpointTally, statusOf, type EndpointDifference } from './endpoint-differences.js';
import { decodedGrpcOutcome } from './grpc-decode.js';
import type { GrpcSchema } from '../../net/index.js';

export type { EndpointDifference } from './endpoint-differences.js';
export type { RankingComparison } from './ranking-tally.js';

export type ResponsesConfig = NonNullable<WorkloadConfig['harness']['responses']>;

export interface FieldDifference {
  /** Generalized JSON path: array indexes become `[]`. */
  readonly path: string;
  /** Share of compared pairs in which control and treatment differ here. */
  readonly rate: number;
  /** Share of control/control′ pairs differing here (NaN without control′). */
  readonly noiseRate: number;
  /** Left out: configured ignore or found to be noise. */
  readonly ignored: 'config' | 'noise' | false;
  /** A record id where it differed, with the two values (as rendered JSON, cut to 200 characters). */
  readonly example: { readonly recordId: string; readonly control: string; readonly treatment: string };
}

export interface ResponseComparison {
  readonly pairs: number;
  /** Pairs whose bodies were compared (decoded; large ones by hash and sketch). */
  readonly comparedBodies: number;
  /** Pairs not compared, by reason (no response, a body that could not be decoded…): compared + skipped = pairs. */
  readonly skipped: Readonly<Record<string, number>>;
  /** Differences by endpoint (method and inferred route), most differing first. */
  readonly endpoints: readonly EndpointDifference[];
  readonly statusMismatches: number;
  readonly statusMismatchShare: number;
  readonly statusExamples: readonly { readonly recordId: string; readonly control: number; readonly treatment: number }[];
  /** Share of pairs with identical response bodies (hash). */
  readonly bodyHashAgreement: number;
  /** Share of compared JSON pairs with no difference outside ignored and noise fields. */
  readonly semanticAgreement: number;
  readonly noiseCancellation: boolean;
  readonly fields: readonly FieldDifference[];
  readonly ranking?: RankingComparison;
}

/** `a.b[].c` is ignored by a rule `a.b[].c`, `a.b` (a prefix on a path boundary) or `a.b[2].c` written with any index. */
function ignoredBy(rules: readonly string[], general: string): boolean {
  return rules.some((rule) => {
    const normalized = rule.replace(/\[\d+\]/g, '[]');
    return general === normalized || general.startsWith(`${normalized}.`) || general.startsWith(`${normalized}[`);
  });
}

const cut = (text: string): string => (text.length > 200 ? `${text.slice(0, 197)}...` : text);

export interface CompareOptions {
  readonly config: ResponsesConfig;
  /** Recorded request bodies by record id (base64), for labels. */
  readonly requestBodies?: ReadonlyMap<string, string>;
  /** Descriptors gRPC responses are decoded with; without them gRPC responses are not compared (grpc-decode.ts). */
  readonly grpcSchema?: GrpcSchema;
}

/** Compare the responses of control, treatment and (optionally) control′ record by record, within each trial. */
export function compareResponses(outcomes: Iterable<RequestOutcome>, options: CompareOptions): ResponseComparison {
  const comparer = new ResponseComparer(options);
  for (const o of outcomes) comparer.add(o);
  return comparer.result();
}

/** The same over outcomes streamed in trial order (a store's read): one trial's responses are held at a time. */
export async function compareResponseStream(outcomes: AsyncIterable<RequestOutcome>, options: CompareOptions): Promise<ResponseComparison> {
  const comparer = new ResponseComparer(options);
  for await (const o of outcomes) comparer.add(o);
  return comparer.result();
}

/**
 * Outcomes are gathered per trial and compared when the next trial starts (or at the end): pairs never cross
 * trials, so only the current trial's bodies are in memory; what is kept of the compared pairs is counts per
 * field and per kind of difference (EndpointTally), the ranking metrics' numbers, and a few examples.
 */
class ResponseComparer {
  readonly #options: CompareOptions;
  /** trial → arm → lane key → outcome, for trials not compared yet. */
  readonly #pending = new Map<number, Map<string, Map<string, RequestOutcome>>>();
  #pairs = 0;
  #statusMismatches = 0;
  #sameHash = 0;
  #compared = 0;
  #primePairs = 0;
  readonly #statusExamples: ResponseComparison['statusExamples'][number][] = [];
  readonly #rawCounts = new Map<string, number>();
  readonly #noiseCounts = new Map<string, number>();
  readonly #examples = new Map<string, FieldDifference['example']>();
  readonly #skipped: Record<string, number> = {};
  readonly #endpoints = new EndpointTally();
  readonly #ranking: RankingTally | undefined;

  constructor(options: CompareOptions) {
    this.#options = options;
    this.#ranking = options.config.ranking ? new RankingTally(options.config.ranking, options.requestBodies) : undefined;
  }

  add(raw: RequestOutcome): void {
    // Streamed in trial order: a later trial's first outcome means the earlier ones are complete.
    for (const trial of this.#pending.keys()) if (trial < raw.trial) this.#compareTrial(trial);
    const o = raw.response?.grpc !== undefined ? decodedGrpcOutcome(raw, this.#options.grpcSchema) : raw;
    let arms = this.#pending.get(o.trial);
    if (!arms) this.#pending.set(o.trial, (arms = new Map()));
    let lane = arms.get(o.arm);
    if (!lane) arms.set(o.arm, (lane = new Map()));
    // An arm of several processes answers each record once per process: lane i pairs the arms' i-th processes.
    lane.set(`${o.recordId}/${o.process ?? 0}`, o);
  }

  #compareTrial(trial: number): void {
    const arms = this.#pending.get(trial)!;
    this.#pending.delete(trial);
    const treatment = arms.get('treatment') ?? new Map<string, RequestOutcome>();
    const prime = arms.get('control-prime');
    for (const [k, c] of arms.get('control') ?? new Map<string, RequestOutcome>()) {
      const t = treatment.get(k);
      if (t) this.#comparePair(c, t, prime?.get(k));
    }
  }

  #comparePair(c: RequestOutcome, t: RequestOutcome, p: RequestOutcome | undefined): void {
    this.#pairs++;
    if (statusOf(c) !== statusOf(t)) {
      this.#statusMismatches++;
      if (this.#statusExamples.length < 5) this.#statusExamples.push({ recordId: c.recordId, control: statusOf(c), treatment: statusOf(t) });
    }
    if (c.bodyHash !== '' && c.bodyHash === t.bodyHash) this.#sameHash++;
    const diff = diffResponses(c, t);
    let differing: ReadonlyMap<string, Difference> = new Map();
    if (diff.skipped !== undefined) this.#skipped[diff.skipped] = (this.#skipped[diff.skipped] ?? 0) + 1;
    else {
      this.#compared++;
      differing = diff.differing;
      for (const [path, example] of differing) {
        this.#rawCounts.set(path, (this.#rawCounts.get(path) ?? 0) + 1);
        if (!this.#examples.has(path)) this.#examples.set(path, { recordId: c.recordId, control: cut(example.control), treatment: cut(example.treatment) });
      }
    }
    this.#endpoints.add({ control: c, treatment: t, compared: diff.skipped === undefined, paths: [...differing.keys()] });
    if (p !== undefined) {
      const noise = diffResponses(c, p);
      if (noise.skipped === undefined) {
        this.#primePairs++;
        for (const path of noise.differing.keys()) this.#noiseCounts.set(path, (this.#noiseCounts.get(path) ?? 0) + 1);
      }
    }
    this.#ranking?.add(c, t, p);
  }

  result(): ResponseComparison {
    for (const trial of [...this.#pending.keys()].sort((a, b) => a - b)) this.#compareTrial(trial);
    const { config } = this.#options;
    const compared = this.#compared;
    const fields: FieldDifference[] = [...this.#rawCounts.entries()]
      .map(([path, count]) => {
        const rate = count / compared;
        const noiseRate = this.#primePairs > 0 ? (this.#noiseCounts.get(path) ?? 0) / this.#primePairs : Number.NaN;
        const ignored: FieldDifference['ignored'] = ignoredBy(config.ignoreFields, path)
          ? 'config'
          : noiseRate > 0 && rate <= config.noiseRatio * noiseRate
            ? 'noise'
            : false;
        return { path, rate, noiseRate, ignored, example: this.#examples.get(path)! };
      })
      .sort((a, b) => b.rate - a.rate || a.path.localeCompare(b.path));
    const counted = new Set(fields.filter((f) => f.ignored === false).map((f) => f.path));
    // Which pairs agree is known only once noise is: the tally kept each compared pair's differing paths.
    const agreeing = this.#endpoints.agreeing(counted);
    const pairs = this.#pairs;
    return {
      pairs,
      comparedBodies: compared,
      skipped: this.#skipped,
      endpoints: this.#endpoints.summarize(fields),
      statusMismatches: this.#statusMismatches,
      statusMismatchShare: pairs > 0 ? this.#statusMismatches / pairs : 0,
      statusExamples: this.#statusExamples,
      bodyHashAgreement: pairs > 0 ? this.#sameHash / pairs : Number.NaN,
      semanticAgreement: compared > 0 ? agreeing / compared : Number.NaN,
      noiseCancellation: this.#primePairs > 0,
      fields,
      ...(this.#ranking?.pairs ? { ranking: this.#ranking.summary() } : {}),
    };
  }
}
