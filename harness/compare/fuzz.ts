/**
 * Single-SUT fuzzing: corpus records mutated (types swapped, fields removed,
 * sizes blown up, hostile unicode, huge numbers, malformed JSON) and sent to
 * one instance. A 4xx is the service rejecting bad input correctly; a 5xx,
 * a dropped connection (a crash) or a violated property is a finding.
 * Bounded in requests and in time; traffic goes only to the given URL.
 */
import { Pool } from 'undici';
import { seededRandom, systemClock, type Clock, type CorpusRecord } from '../../core/index.js';

export interface FuzzRequest {
  readonly method: string;
  readonly path: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
}

export interface FuzzResponse {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
}

/** A property every response must have; returns a description of the violation, or undefined. */
export interface ResponseProperty {
  readonly name: string;
  check(request: FuzzRequest, response: FuzzResponse): string | undefined;
}

export type FindingKind = '5xx' | 'crash' | 'timeout' | 'property';

export interface FuzzFinding {
  readonly kind: FindingKind;
  readonly mutation: string;
  readonly recordId: string;
  readonly status: number;
  readonly message: string;
  /** The request that caused it, body cut to 500 characters. */
  readonly request: { readonly method: string; readonly path: string; readonly body: string };
}

export interface FuzzReport {
  readonly sent: number;
  readonly byStatus: Readonly<Record<string, number>>;
  readonly byMutation: Readonly<Record<string, number>>;
  readonly findingsByKind: Readonly<Record<FindingKind, number>>;
  /** The first `maxFindings` findings. */
  readonly findings: readonly FuzzFinding[];
  readonly stoppedBy: 'count' | 'time' | 'corpus' | 'crash' | 'cancelled';
  /** Whether the SUT still answered after the run. */
  readonly aliveAfter: boolean;
}

export interface FuzzOptions {
  readonly url: string;
  readonly records: readonly CorpusRecord[];
  readonly seed: number;
  /** @default 500 */
  readonly maxRequests?: number;
  /** @default 60000 */
  readonly maxDurationMs?: number;
  /** @default 8 */
  readonly concurrency?: number;
  /** @default 5000 */
  readonly timeoutMs?: number;
  readonly properties?: readonly ResponseProperty[];
  /** Path probed after a dropped connection to tell a crash from a reset. @default "/healthz" */
  readonly healthPath?: string;
  /** @default 100 */
  readonly maxFindings?: number;
  readonly signal?: AbortSignal;
  /** Bounds the run by `maxDurationMs`. @default systemClock */
  readonly clock?: Clock;
}

/** Hard ceiling whatever the caller asks: fuzzing is a test, not a load generator. */
const MAX_REQUESTS = 100_000;

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

const HOSTILE_STRINGS = [
  '',
  '\u0000',
  '\u202eevil',
  '💥🧨'.repeat(50),
  'e\u0301\u0301\u0301',
  '\ud800',
  '<script>alert(1)</script>',
  "'; DROP TABLE x; --",
  '../../etc/passwd',
  '%s%s%n',
];
const HUGE_NUMBERS = [1e308, -1e308, Number.MAX_SAFE_INTEGER + 2, -1, 0, 1e-320];

/** Leaf and container locations of a JSON value, as key paths. */
function locations(value: Json, path: (string | number)[] = [], out: (string | number)[][] = []): (string | number)[][] {
  if (path.length > 0) out.push(path);
  if (Array.isArray(value)) value.forEach((v, i) => locations(v, [...path, i], out));
  else if (value !== null && typeof value === 'object') for (const key of Object.keys(value)) locations(value[key]!, [...path, key], out);
  return out;
}

function getAt(value: Json, path: readonly (string | number)[]): Json {
  let current = value;
  for (const key of path) current = (current as Record<string | number, Json>)[key]!;
  return current;
}

function setAt(root: Json, path: readonly (string | number)[], replacement: Json | undefined): void {
  const parent = getAt(root, path.slice(0, -1)) as Record<string | number, Json> | Json[];
  const key = path[path.length - 1]!;
  if (replacement === undefined) {
    if (Array.isArray(parent)) parent.splice(key as number, 1);
    else delete (parent as Record<string, Json>)[key as string];
  } else (parent as Record<string | number, Json>)[key] = replacement;
}

export const MUTATIONS = [
  'type-swap',
  'missing-field',
  'huge-string',
  'huge-array',
  'huge-number',
  'unicode',
  'null',
  'malformed-json',
  'empty-body',
  'query-value',
] as const;
export type Mutation = (typeof MUTATIONS)[number];

/** One mutated copy of a record's request; deterministic for a given random stream. */
export function mutateRequest(record: CorpusRecord, mutation: Mutation, random: () => number): FuzzRequest {
  const headers = { ...record.headers };
  delete headers['content-length'];
  const text = record.body === '' ? '' : Buffer.from(record.body, 'base64').toString('utf8');
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
  const base = { method: record.method, path: record.path, headers, body: text };
  if (mutation === 'query-value' || text === '') {
    const url = new URL(record.path, 'http://sut.invalid');
    const keys = [...url.searchParams.keys()];
    if (keys.length === 0) url.searchParams.set('fuzz', pick(HOSTILE_STRINGS));
    else url.searchParams.set(pick(keys), pick([...HOSTILE_STRINGS, 'x'.repeat(100_000), '-1', 'NaN', '1e308']));
    return { ...base, path: `${url.pathname}${url.search}` };
  }
  if (mutation === 'malformed-json') return { ...base, body: text.slice(0, Math.max(1, Math.floor(text.length * random()))) };
  if (mutation === 'empty-body') return { ...base, body: '' };
  let json: Json;
  try {
    json = JSON.parse(text) as Json;
  } catch {
    return { ...base, body: `${text}\u0000${pick(HOSTILE_STRINGS)}` };
  }
  const where = locations(json);
  if (where.length === 0) return { ...base, body: JSON.stringify(mutation === 'null' ? null : [json]) };
  const path = pick(where);
  const current = getAt(json, path);
  switch (mutation) {
    case 'type-swap':
      setAt(
        json,
        path,
        typeof current === 'string'
          ? 12345
          : typeof current === 'number'
            ? String(current)
            : Array.isArray(current)
              ? { fuzz: current }
              : current !== null && typeof current === 'object'
                ? [current]
                : 'string',
      );
      break;
    case 'missing-field':
      setAt(json, path, undefined);
      break;
    case 'huge-string':
      setAt(json, path, 'A'.repeat(1_000_000));
      break;
    case 'huge-array':
      setAt(json, path, new Array<Json>(100_000).fill(typeof current === 'object' ? current : 0));
      break;
    case 'huge-number':
      setAt(json, path, pick(HUGE_NUMBERS));
      break;
    case 'unicode':
      setAt(json, path, pick(HOSTILE_STRINGS));
      break;
    case 'null':
      setAt(json, path, null);
      break;
  }
  return { ...base, body: JSON.stringify(json) };
}

/** A 2xx answer that says it is JSON must be JSON. */
export const JSON_CONTRACT: ResponseProperty = {
  name: 'json-contract',
  check: (_request, response) => {
    if (response.status < 200 || response.status >= 300 || !(response.headers['content-type'] ?? '').includes('json')) return undefined;
    try {
      JSON.parse(response.body);
      return undefined;
    } catch (error) {
      return `2xx response declared JSON but did not parse: ${(error as Error).message}`;
    }
  },
};

export async function fuzz(options: FuzzOptions): Promise<FuzzReport> {
  const usable = options.records.filter((r) => !r.bodyTruncated);
  const maxRequests = Math.min(options.maxRequests ?? 500, MAX_REQUESTS);
  const clock = options.clock ?? systemClock;
  const deadline = clock.now() + (options.maxDurationMs ?? 60_000);
  const properties = [JSON_CONTRACT, ...(options.properties ?? [])];
  const maxFindings = options.maxFindings ?? 100;
  const pool = new Pool(options.url, {
    connections: options.concurrency ?? 8,
    headersTimeout: options.timeoutMs ?? 5_000,
    bodyTimeout: options.timeoutMs ?? 5_000,
  });
  const byStatus: Record<string, number> = {};
  const byMutation: Record<string, number> = {};
  const findingsByKind: Record<FindingKind, number> = { '5xx': 0, crash: 0, timeout: 0, property: 0 };
  const findings: FuzzFinding[] = [];
  let sent = 0;
  let stoppedBy: FuzzReport['stoppedBy'] = 'count';
  const note = (finding: FuzzFinding): void => {
    findingsByKind[finding.kind]++;
    if (findings.length < maxFindings) findings.push(finding);
  };
  const alive = async (): Promise<boolean> => {
    try {
      const response = await pool.request({ method: 'GET', path: options.healthPath ?? '/healthz', headersTimeout: 2_000, bodyTimeout: 2_000 });
      await response.body.dump();
      return response.statusCode < 500;
    } catch {
      return false;
    }
  };
  // Each request is built from its own seeded stream when it is sent: the same seed gives the same
  // requests at any concurrency, and megabyte-sized mutations are never held all at once.
  const jobAt = (i: number): { record: CorpusRecord; mutation: Mutation; request: FuzzRequest } => {
    const stream = seededRandom((options.seed + Math.imul(i + 1, 0x9e3779b1)) >>> 0);
    const record = usable[Math.floor(stream() * usable.length)]!;
    const mutation = MUTATIONS[Math.floor(stream() * MUTATIONS.length)]!;
    return { record, mutation, request: mutateRequest(record, mutation, stream) };
  };
  const total = usable.length === 0 ? 0 : maxRequests;
  if (usable.length === 0) stoppedBy = 'corpus';
  let next = 0;
  let crashed = false;
  const worker = async (): Promise<void> => {
    while (next < total && !crashed) {
      if (options.signal?.aborted) {
        stoppedBy = 'cancelled';
        return;
      }
      if (clock.now() >= deadline) {
        stoppedBy = 'time';
        return;
      }
      const { record, mutation, request } = jobAt(next++);
      sent++;
      byMutation[mutation] = (byMutation[mutation] ?? 0) + 1;
      const described = { method: request.method, path: request.path.slice(0, 500), body: request.body.slice(0, 500) };
      try {
        const response = await pool.request({
          method: request.method as 'POST',
          path: request.path,
          headers: request.headers,
          body: request.body === '' ? null : request.body,
        });
        const body = await response.body.text();
        byStatus[response.statusCode] = (byStatus[response.statusCode] ?? 0) + 1;
        const headers = Object.fromEntries(Object.entries(response.headers).map(([k, v]) => [k, Array.isArray(v) ? v.join(', ') : String(v ?? '')]));
        if (response.statusCode >= 500)
          note({ kind: '5xx', mutation, recordId: record.id, status: response.statusCode, message: body.slice(0, 300), request: described });
        for (const property of properties) {
          const violation = property.check(request, { status: response.statusCode, headers, body });
          if (violation !== undefined)
            note({
              kind: 'property',
              mutation,
              recordId: record.id,
              status: response.statusCode,
              message: `${property.name}: ${violation}`,
              request: described,
            });
        }
      } catch (error) {
        const code = (error as { code?: string }).code ?? '';
        byStatus[code || 'error'] = (byStatus[code || 'error'] ?? 0) + 1;
        if (code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT') {
          note({ kind: 'timeout', mutation, recordId: record.id, status: 0, message: `no answer within the timeout (${code})`, request: described });
        } else {
          const up = await alive();
          note({
            kind: 'crash',
            mutation,
            recordId: record.id,
            status: 0,
            message: `connection failed (${code || (error as Error).message})${up ? '; the SUT still answers' : '; the SUT no longer answers'}`,
            request: described,
          });
          if (!up) {
            crashed = true;
            stoppedBy = 'crash';
          }
        }
      }
    }
  };
  try {
    await Promise.all(Array.from({ length: options.concurrency ?? 8 }, () => worker()));
    const aliveAfter = await alive();
    return { sent, byStatus, byMutation, findingsByKind, findings, stoppedBy, aliveAfter };
  } finally {
    await pool.destroy();
  }
}
