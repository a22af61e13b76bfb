/**
 * `npm run bench -- compare`: response comparison on a generated API pair.
 * Control, control′ (the same version, another instance) and treatment serve
 * 16 endpoints on 127.0.0.1; every body carries per-request noise (a request
 * id, a time); the servers gzip bodies over 1 KB when the client accepts it,
 * and two endpoints answer ~200 KB. The treatment changes 6 endpoints in known
 * ways (a type, an envelope, a removed field, a status, one value deep in a
 * 200 KB list, a value in a gzip body). A paired replay with control′ feeds
 * the comparison, as `tandem run` does.
 *
 * Figures:
 * - bodyCoverage: pairs whose bodies were compared ÷ pairs (target 1.0); the
 *   baseline `rawBodyCoverage` is what comparing raw kept bodies as JSON covers
 *   (the comparison before decoding: compressed and >64 KiB bodies drop out);
 * - endpointRecall: changed endpoints reported ÷ changed (target 1.0);
 * - falseEndpointShare: reported endpoints that did not change ÷ reported
 *   (target 0, with control′); `falseEndpointShareWithoutControlPrime` is the
 *   same judge without noise cancellation;
 * - comparePairsPerSecond: decode, hash, sketch and compare, pairs/s, against
 *   `hashPairsPerSecond`, hashing both raw bodies of each pair alone (the old
 *   comparison's body-hash agreement), same run, same responses; compareVsHash
 *   is the ratio (what decoding and a structural diff cost over a hash).
 */
import { hash, randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';
import { request } from 'undici';
import { systemClock, type CorpusRecord, type RequestOutcome } from '../core/index.js';
import { pairedReplay } from '../replayer/index.js';
import { comparableResponse } from '../replayer/response-view.js';
import { compareResponses } from '../harness/index.js';
import { numberFlag } from './support/bench-args.js';

const ENDPOINT_KINDS = 8;
const CHANGED = ['GET /r1/:id', 'GET /r2', 'GET /r3/:id', 'GET /r4', 'GET /r5', 'GET /r6/:id'];
const KEEP_BYTES = 65_536;

/** Version 1 (control, control′) or 2 (treatment) of the generated API. */
function api(version: 1 | 2): Server {
  return createServer((req, res) => {
    req.resume();
    const url = new URL(req.url ?? '/', 'http://api');
    const [, kind, id] = /^\/r(\d)(?:\/(\d+))?$/.exec(url.pathname) ?? [];
    const k = Number(kind);
    const noise = { requestId: randomUUID(), servedAt: Date.now() };
    let status = 200;
    let body: unknown;
    if (kind === undefined) {
      status = 404;
      body = { error: 'no route' };
    } else if (id !== undefined) {
      const item: Record<string, unknown> = {
        id: version === 2 && k === 1 ? id : Number(id),
        name: version === 2 && k === 6 ? `name ${id}` : `Name ${id}`,
        price: Number(id) * 1.5,
        text: 't'.repeat(k === 6 ? 4_000 : 200),
      };
      if (version === 2 && k === 3) delete item.price;
      body = { ...noise, item };
    } else {
      const large = k === 5 || k === 7;
      const rows = Array.from({ length: large ? 2_500 : 20 }, (_, i) => ({
        id: i,
        v: version === 2 && k === 5 && i === 2_499 ? 'changed' : 'same',
        pad: 'p'.repeat(large ? 60 : 10),
      }));
      if (version === 2 && k === 4) status = 410;
      body = version === 2 && k === 2 ? { ...noise, data: rows } : { ...noise, rows };
    }
    const text = Buffer.from(JSON.stringify(body));
    const gzip = String(req.headers['accept-encoding'] ?? '').includes('gzip') && text.length > 1_024;
    res.writeHead(status, { 'content-type': 'application/json', ...(gzip ? { 'content-encoding': 'gzip' } : {}) });
    res.end(gzip ? gzipSync(text) : text);
  });
}

async function listen(server: Server): Promise<string> {
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

function corpus(count: number): CorpusRecord[] {
  const now = Date.now();
  return Array.from({ length: count }, (_, i) => {
    const k = Math.floor(i / 2) % ENDPOINT_KINDS;
    const path = i % 2 === 0 ? `/r${k}/${(i * 7) % 500}` : `/r${k}`;
    // Half the clients accept gzip, as recorded browsers and SDKs do.
    const headers: Record<string, string> = i % 4 < 2 ? { 'accept-encoding': 'gzip, deflate, br' } : {};
    return {
      id: `rec-${i}`,
      tier: 'api',
      timeMs: now - count + i,
      method: 'GET',
      path,
      headers,
      body: '',
      bodyTruncated: false,
      sampleRate: 1,
      sampleMode: 'uniform',
    };
  });
}

/** Reported endpoints, and how many of them are (not) among the changed ones. */
function endpointFigures(reported: readonly string[]): { recall: number; falseShare: number } {
  const found = CHANGED.filter((e) => reported.includes(e)).length;
  const falses = reported.filter((e) => !CHANGED.includes(e)).length;
  return { recall: found / CHANGED.length, falseShare: reported.length > 0 ? falses / reported.length : 0 };
}

const config = { ignoreFields: [], noiseRatio: 1.5 };

export async function run(args: string[]): Promise<void> {
  const count = numberFlag(args, 'records', 800, { min: 160, max: 1_000_000, integer: true });
  const servers = [api(1), api(1), api(2)];
  try {
    const [control, controlPrime, treatment] = (await Promise.all(servers.map(listen))) as [string, string, string];
    const records = corpus(count);
    const outcomes: RequestOutcome[] = [];
    await pairedReplay({
      records: (async function* () {
        yield* records;
      })(),
      arms: { control, treatment },
      controlPrime,
      ratePerSecond: 400,
      concurrency: 128,
      timeoutMs: 10_000,
      warmupMs: 0,
      // Bounded: the window ends the replay whatever the machine's speed.
      measureMs: Math.ceil((count / 400) * 1000) + 5_000,
      seed: 7,
      identity: { experimentId: 'bench-compare', trial: 0, attempt: 1, headerPrefix: 'x-tandem-', jobs: { control: 'c', treatment: 't' } },
      clock: systemClock,
      keepBodyBytes: KEEP_BYTES,
      onOutcome: (o) => outcomes.push(o),
    });
    const result = compareResponses(outcomes, { config });
    const reported = result.endpoints.filter((e) => e.differing > 0).map((e) => e.endpoint);
    const withPrime = endpointFigures(reported);
    const withoutPrime = endpointFigures(
      compareResponses(
        outcomes.filter((o) => o.arm !== 'control-prime'),
        { config },
      )
        .endpoints.filter((e) => e.differing > 0)
        .map((e) => e.endpoint),
    );

    // Throughput of the comparison itself, on the same responses fetched raw (as they come off the wire).
    const raw = await Promise.all(
      records.map(async (r) => {
        const fetchRaw = async (base: string) => {
          const res = await request(`${base}${r.path}`, { headers: r.headers });
          return {
            status: res.statusCode,
            headers: res.headers as Record<string, string | string[] | undefined>,
            body: Buffer.from(await res.body.arrayBuffer()),
          };
        };
        return { record: r, control: await fetchRaw(control), treatment: await fetchRaw(treatment) };
      }),
    );
    const rawCovered = raw.filter((p) => [p.control.body, p.treatment.body].every((b) => b.length <= KEEP_BYTES && isJson(b))).length;
    const rounds = 3;
    let hashed = 0;
    const hashStart = performance.now();
    for (let round = 0; round < rounds; round++) for (const p of raw) if (hash('sha1', p.control.body) === hash('sha1', p.treatment.body)) hashed++;
    const hashSeconds = (performance.now() - hashStart) / 1000;
    const compareStart = performance.now();
    for (let round = 0; round < rounds; round++) {
      const pairOutcomes = raw.flatMap((p) =>
        (['control', 'treatment'] as const).map((arm): RequestOutcome => {
          const side = p[arm];
          const view = comparableResponse(side.body, side.headers, p.record, KEEP_BYTES);
          return {
            experimentId: 'b',
            trial: round,
            attempt: 1,
            arm,
            recordId: p.record.id,
            intendedMs: 0,
            latencyMs: 0,
            status: side.status,
            bytes: side.body.length,
            errorClass: '',
            bodyHash: '',
            first: arm === 'control',
            response: view.view,
            ...(view.body ? { body: view.body.toString('base64') } : {}),
          };
        }),
      );
      compareResponses(pairOutcomes, { config });
    }
    const compareSeconds = (performance.now() - compareStart) / 1000;
    void hashed;

    const figures = {
      baseline:
        'raw kept bodies parsed as JSON (coverage); hashing both raw bodies of each pair alone (throughput); the same judge without control′ (false endpoints)',
      pairs: result.pairs,
      comparedBodies: result.comparedBodies,
      skipped: result.skipped,
      bodyCoverage: Number((result.comparedBodies / Math.max(1, result.pairs)).toFixed(4)),
      rawBodyCoverage: Number((rawCovered / raw.length).toFixed(4)),
      endpoints: result.endpoints.length,
      reportedEndpoints: reported,
      endpointRecall: Number(withPrime.recall.toFixed(4)),
      falseEndpointShare: Number(withPrime.falseShare.toFixed(4)),
      falseEndpointShareWithoutControlPrime: Number(withoutPrime.falseShare.toFixed(4)),
      comparePairsPerSecond: Math.round((raw.length * rounds) / compareSeconds),
      hashPairsPerSecond: Math.round((raw.length * rounds) / hashSeconds),
      compareVsHash: Number((hashSeconds / compareSeconds).toFixed(4)),
    };
    process.stderr.write(`compare: ${result.pairs} pairs, ${result.comparedBodies} compared; endpoints reported: ${reported.join(', ')}\n`);
    process.stdout.write(
      `${JSON.stringify({
        bench: 'compare',
        figures,
        targets: {
          bodyCoverage: { value: figures.bodyCoverage, min: 1 },
          endpointRecall: { value: figures.endpointRecall, min: 1 },
          falseEndpointShare: { value: figures.falseEndpointShare, max: 0 },
          // The comparison runs as responses end, in the replaying process: it must keep up with a replay
          // of 1,000 pairs/s (the examples replay at 100–400) on this mix, an eighth of it 200 KB bodies.
          comparePairsPerSecond: { value: figures.comparePairsPerSecond, min: 1_000 },
        },
      })}\n`,
    );
  } finally {
    for (const s of servers) {
      s.closeAllConnections();
      s.close();
    }
  }
}

function isJson(body: Buffer): boolean {
  try {
    JSON.parse(body.toString('utf8'));
    return true;
  } catch {
    return false;
  }
}
