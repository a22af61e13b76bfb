/**
 * Response differences per endpoint, as Diffy shows them: for each method and
 * inferred route, how many pairs differ (a status mismatch or a counted field
 * difference), which fields, and one example pair side by side with the
 * fields that differ only as noise (or by configured ignore) marked.
 */
import type { RequestOutcome } from '../core/index.js';
import { inferEndpoints } from './endpoints.js';
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

export function endpointDifferences(pairs: readonly PairRecord[], fields: readonly { readonly path: string; readonly ignored: 'config' | 'noise' | false }[]): EndpointDifference[] {
  const counted = new Set(fields.filter((f) => f.ignored === false).map((f) => f.path));
  const requests = pairs.flatMap((p) => (p.control.response && p.control.response.grpc === undefined ? [{ method: p.control.response.method, path: p.control.response.path }] : []));
  const patterns = inferEndpoints(requests);
  const groups = new Map<string, PairRecord[]>();
  for (const pair of pairs) {
    const view = pair.control.response;
    const endpoint = view ? (grpcEndpoint(pair.control) ?? patterns.get(`${view.method} ${view.path}`) ?? UNKNOWN) : UNKNOWN;
    const group = groups.get(endpoint) ?? [];
    group.push(pair);
    groups.set(endpoint, group);
  }
  return [...groups.entries()]
    .map(([endpoint, group]) => summarize(endpoint, group, counted))
    .sort((a, b) => b.differing - a.differing || b.share - a.share || a.endpoint.localeCompare(b.endpoint));
}

function summarize(endpoint: string, group: readonly PairRecord[], counted: ReadonlySet<string>): EndpointDifference {
  const differs = (p: PairRecord): boolean => statusOf(p.control) !== statusOf(p.treatment) || p.paths.some((path) => counted.has(path));
  const differingPairs = group.filter(differs);
  const compared = group.filter((p) => p.compared).length;
  const fieldCounts = new Map<string, number>();
  for (const p of group) for (const path of p.paths) fieldCounts.set(path, (fieldCounts.get(path) ?? 0) + 1);
  const fieldList = [...fieldCounts.entries()]
    .map(([path, count]) => ({ path, share: compared > 0 ? count / compared : 0, counted: counted.has(path) }))
    .sort((a, b) => Number(b.counted) - Number(a.counted) || b.share - a.share || a.path.localeCompare(b.path))
    .slice(0, 20);
  const examplePair = differingPairs[0];
  return {
    endpoint,
    pairs: group.length,
    differing: differingPairs.length,
    share: group.length > 0 ? differingPairs.length / group.length : 0,
    statusMismatches: group.filter((p) => statusOf(p.control) !== statusOf(p.treatment)).length,
    notCompared: group.length - compared,
    fields: fieldList,
    ...(examplePair ? { example: example(examplePair, counted) } : {}),
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
