/**
 * Response differences per endpoint, as Diffy shows them: for each method and
 * inferred route, how many pairs differ (a status mismatch or a counted field
 * difference), which fields, and one example pair side by side with the
 * fields that differ only as noise (or by configured ignore) marked.
 */
import type { RequestOutcome } from '../../core/index.js';
import { inferEndpoints, requestShape } from './endpoints.js';
import { bodyText } from './response-diff.js';

/** One compared (or skipped) pair and the generalized paths where it differed. */
export interface PairRecord {
  readonly control: RequestOutcome;
  readonly treatment: RequestOutcome;
  readonly compared: boolean;
  readonly paths: readonly string[];
}

export interface EndpointExample {
  readonly recordId: string;
  readonly request: { readonly method: string; readonly path: string; readonly body?: string };
  readonly control: { readonly status: number; readonly body: string };
  readonly treatment: { readonly status: number; readonly body: string };
  /** Fields of this pair that count as differences. */
  readonly differingFields: readonly string[];
  /** Fields of this pair that differ but are noise (control′) or ignored by the config. */
  readonly noiseFields: readonly string[];
}

export interface EndpointDifference {
  /** `GET /posts/:id/comments`; "(endpoint not recorded)" for outcomes stored without their request. */
  readonly endpoint: string;
  readonly pairs: number;
  /** Pairs with a status mismatch or a counted field difference. */
  readonly differing: number;
  readonly share: number;
  readonly statusMismatches: number;
  /** Pairs whose bodies could not be compared (see the comparison's `skipped`). */
  readonly notCompared: number;
  /** Fields differing in this endpoint's pairs, counted ones first, with the share of its compared pairs. */
  readonly fields: readonly { readonly path: string; readonly share: number; readonly counted: boolean }[];
  readonly example?: EndpointExample;
}

const UNKNOWN = '(endpoint not recorded)';

/** A gRPC method is its own endpoint (`gRPC tandem.test.Catalog/Lookup`): its path has no parameters to infer. */
const grpcEndpoint = (o: RequestOutcome): string | undefined => (o.response?.grpc !== undefined ? `gRPC ${o.response.path.slice(1)}` : undefined);
/** The status a person compares: a gRPC call's own, else HTTP's. */
export const statusOf = (o: RequestOutcome): number => o.grpcStatus ?? o.status;
const EXAMPLE_BODY_CHARS = 2_000;

/** Pairs of one request shape that differed the same way, counted once. */
interface Signature {
  readonly statusMismatch: boolean;
  readonly compared: boolean;
  readonly paths: readonly string[];
  count: number;
}

/** Every pair of one request shape (`requestShape`, or one gRPC method), kept as counts per signature and candidate examples. */
interface ShapeGroup {
  readonly method: string | undefined;
  readonly shape: string | undefined;
  readonly grpc: string | undefined;
  pairs: number;
  readonly signatures: Map<string, Signature>;
  /** The first pair with a status mismatch (key ''), and the first pair differing at each path: the earliest differing pair is among them. */
  readonly examples: Map<string, { readonly sequence: number; readonly pair: PairRecord }>;
}

/** Examples kept per request shape, beyond which later paths are counted but not exemplified. */
const MAX_EXAMPLE_PATHS = 64;

/**
 * The pairs of a comparison, tallied as they come: per request shape, how many pairs differed in which way
 * (status, compared, paths) and the first pair of each kind. Memory grows with the shapes and kinds of
 * difference, not with the pairs, so a report can stream a large experiment's responses trial by trial.
 */
export class EndpointTally {
  readonly #groups = new Map<string, ShapeGroup>();
  #sequence = 0;

  add(pair: PairRecord): void {
    const sequence = this.#sequence++;
    const view = pair.control.response;
    const grpc = grpcEndpoint(pair.control);
    const shape = view && grpc === undefined ? requestShape(view.path) : undefined;
    const key = grpc !== undefined ? `grpc ${grpc}` : view ? `${view.method} ${shape}` : UNKNOWN;
    let group = this.#groups.get(key);
    if (!group) this.#groups.set(key, (group = { method: view?.method, shape, grpc, pairs: 0, signatures: new Map(), examples: new Map() }));
    group.pairs++;
    const statusMismatch = statusOf(pair.control) !== statusOf(pair.treatment);
    const paths = [...pair.paths].sort();
    const signatureKey = `${Number(statusMismatch)}${Number(pair.compared)}${paths.join('\u0000')}`;
    const signature = group.signatures.get(signatureKey);
    if (signature) signature.count++;
    else group.signatures.set(signatureKey, { statusMismatch, compared: pair.compared, paths, count: 1 });
    const keep = (exampleKey: string): void => {
      if (!group.examples.has(exampleKey) && group.examples.size < MAX_EXAMPLE_PATHS) group.examples.set(exampleKey, { sequence, pair: { ...pair, paths } });
    };
    if (statusMismatch) keep('');
    for (const path of paths) keep(path);
  }

  /** Compared pairs with no difference at a counted path (status aside): the comparison's semantic agreement. */
  agreeing(counted: ReadonlySet<string>): number {
    let agreeing = 0;
    for (const group of this.#groups.values()) {
      for (const s of group.signatures.values()) if (s.compared && !s.paths.some((path) => counted.has(path))) agreeing += s.count;
    }
    return agreeing;
  }

  /** Differences per endpoint, once the fields that count are known (noise is decided over all pairs). */
  summarize(fields: readonly { readonly path: string; readonly ignored: 'config' | 'noise' | false }[]): EndpointDifference[] {
    const counted = new Set(fields.filter((f) => f.ignored === false).map((f) => f.path));
    const groups = [...this.#groups.values()];
    const patterns = inferEndpoints(
      groups.flatMap((g) => (g.shape !== undefined && g.method !== undefined ? [{ method: g.method, path: g.shape, count: g.pairs }] : [])),
    );
    const byEndpoint = new Map<string, ShapeGroup[]>();
    for (const g of groups) {
      const endpoint = g.grpc ?? (g.shape !== undefined ? (patterns.get(`${g.method} ${g.shape}`) ?? UNKNOWN) : UNKNOWN);
      byEndpoint.set(endpoint, [...(byEndpoint.get(endpoint) ?? []), g]);
    }
    return [...byEndpoint.entries()]
      .map(([endpoint, members]) => summarize(endpoint, members, counted))
      .sort((a, b) => b.differing - a.differing || b.share - a.share || a.endpoint.localeCompare(b.endpoint));
  }
}

function summarize(endpoint: string, groups: readonly ShapeGroup[], counted: ReadonlySet<string>): EndpointDifference {
  const differs = (s: { statusMismatch: boolean; paths: readonly string[] }): boolean => s.statusMismatch || s.paths.some((path) => counted.has(path));
  let pairs = 0;
  let differing = 0;
  let compared = 0;
  let statusMismatches = 0;
  const fieldCounts = new Map<string, number>();
  let first: { sequence: number; pair: PairRecord } | undefined;
  for (const g of groups) {
    pairs += g.pairs;
    for (const s of g.signatures.values()) {
      if (differs(s)) differing += s.count;
      if (s.compared) compared += s.count;
      if (s.statusMismatch) statusMismatches += s.count;
      for (const path of s.paths) fieldCounts.set(path, (fieldCounts.get(path) ?? 0) + s.count);
    }
    for (const candidate of g.examples.values()) {
      if (
        differs({ statusMismatch: statusOf(candidate.pair.control) !== statusOf(candidate.pair.treatment), paths: candidate.pair.paths }) &&
        (first === undefined || candidate.sequence < first.sequence)
      )
        first = candidate;
    }
  }
  const fieldList = [...fieldCounts.entries()]
    .map(([path, count]) => ({ path, share: compared > 0 ? count / compared : 0, counted: counted.has(path) }))
    .sort((a, b) => Number(b.counted) - Number(a.counted) || b.share - a.share || a.path.localeCompare(b.path))
    .slice(0, 20);
  return {
    endpoint,
    pairs,
    differing,
    share: pairs > 0 ? differing / pairs : 0,
    statusMismatches,
    notCompared: pairs - compared,
    fields: fieldList,
    ...(first ? { example: example(first.pair, counted) } : {}),
  };
}

function example(pair: PairRecord, counted: ReadonlySet<string>): EndpointExample {
  const view = pair.control.response;
  return {
    recordId: pair.control.recordId,
    request: { method: view?.method ?? '?', path: view?.path ?? '?', ...(view?.requestBody !== undefined ? { body: view.requestBody } : {}) },
    control: { status: statusOf(pair.control), body: bodyText(pair.control, EXAMPLE_BODY_CHARS) },
    treatment: { status: statusOf(pair.treatment), body: bodyText(pair.treatment, EXAMPLE_BODY_CHARS) },
    differingFields: pair.paths.filter((p) => counted.has(p)),
    noiseFields: pair.paths.filter((p) => !counted.has(p)),
  };
}
