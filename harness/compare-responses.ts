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
import type { RequestOutcome, WorkloadConfig } from '../core/index.js';
import { RankingTally, type RankingComparison } from './ranking-tally.js';
import { diffResponses, type Difference } from './response-diff.js';
import { endpointDifferences, statusOf, type EndpointDifference, type PairRecord } from './endpoint-differences.js';
import { decodedGrpcOutcome } from './grpc-decode.js';
import type { GrpcSchema } from '../core/index.js';

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
export function compareResponses(outcomes: readonly RequestOutcome[], options: CompareOptions): ResponseComparison {
  // An arm of several processes answers each record once per process: lane i pairs the arms' i-th processes.
  const key = (o: RequestOutcome): string => `${o.trial}/${o.recordId}/${o.process ?? 0}`;
  const byArm = new Map<string, Map<string, RequestOutcome>>();
  for (const raw of outcomes) {
    const o = raw.response?.grpc !== undefined ? decodedGrpcOutcome(raw, options.grpcSchema) : raw;
    const arm = byArm.get(o.arm) ?? new Map<string, RequestOutcome>();
    arm.set(key(o), o);
    byArm.set(o.arm, arm);
  }
  const control = byArm.get('control') ?? new Map<string, RequestOutcome>();
  const treatment = byArm.get('treatment') ?? new Map<string, RequestOutcome>();
  const prime = byArm.get('control-prime');
  const { config } = options;

  let pairs = 0;
  let statusMismatches = 0;
  let sameHash = 0;
  const statusExamples: ResponseComparison['statusExamples'][number][] = [];
  const rawCounts = new Map<string, number>();
  const noiseCounts = new Map<string, number>();
  const examples = new Map<string, FieldDifference['example']>();
  const differingPerPair: PairRecord[] = [];
  const skipped: Record<string, number> = {};
  let primePairs = 0;
  const ranking = config.ranking ? new RankingTally(config.ranking, options.requestBodies) : undefined;

  for (const [k, c] of control) {
    const t = treatment.get(k);
    if (!t) continue;
    pairs++;
    if (statusOf(c) !== statusOf(t)) {
      statusMismatches++;
      if (statusExamples.length < 5) statusExamples.push({ recordId: c.recordId, control: statusOf(c), treatment: statusOf(t) });
    }
    if (c.bodyHash !== '' && c.bodyHash === t.bodyHash) sameHash++;
    const diff = diffResponses(c, t);
    let differing: ReadonlyMap<string, Difference> = new Map();
    if (diff.skipped !== undefined) skipped[diff.skipped] = (skipped[diff.skipped] ?? 0) + 1;
    else {
      differing = diff.differing;
      for (const [path, example] of differing) {
        rawCounts.set(path, (rawCounts.get(path) ?? 0) + 1);
        if (!examples.has(path)) examples.set(path, { recordId: c.recordId, control: cut(example.control), treatment: cut(example.treatment) });
      }
    }
    differingPerPair.push({ control: c, treatment: t, compared: diff.skipped === undefined, paths: [...differing.keys()] });
    const p = prime?.get(k);
    if (p !== undefined) {
      const noise = diffResponses(c, p);
      if (noise.skipped === undefined) {
        primePairs++;
        for (const path of noise.differing.keys()) noiseCounts.set(path, (noiseCounts.get(path) ?? 0) + 1);
      }
    }
    ranking?.add(c, t, p);
  }

  const compared = differingPerPair.filter((p) => p.compared).length;
  const fields: FieldDifference[] = [...rawCounts.entries()]
    .map(([path, count]) => {
      const rate = count / compared;
      const noiseRate = primePairs > 0 ? (noiseCounts.get(path) ?? 0) / primePairs : Number.NaN;
      const ignored: FieldDifference['ignored'] = ignoredBy(config.ignoreFields, path) ? 'config' : noiseRate > 0 && rate <= config.noiseRatio * noiseRate ? 'noise' : false;
      return { path, rate, noiseRate, ignored, example: examples.get(path)! };
    })
    .sort((a, b) => b.rate - a.rate || a.path.localeCompare(b.path));
  const counted = new Set(fields.filter((f) => f.ignored === false).map((f) => f.path));
  const agreeing = differingPerPair.filter((p) => p.compared && !p.paths.some((path) => counted.has(path))).length;

  return {
    pairs,
    comparedBodies: compared,
    skipped,
    endpoints: endpointDifferences(differingPerPair, fields),
    statusMismatches,
    statusMismatchShare: pairs > 0 ? statusMismatches / pairs : 0,
    statusExamples,
    bodyHashAgreement: pairs > 0 ? sameHash / pairs : Number.NaN,
    semanticAgreement: compared > 0 ? agreeing / compared : Number.NaN,
    noiseCancellation: primePairs > 0,
    fields,
    ...(ranking?.pairs ? { ranking: ranking.summary() } : {}),
  };
}
