/**
 * `npm run bench -- recorder-soak [--seconds 60]`: `tandem record` at rate 1
 * in front of an upstream, under mixed and hostile traffic for a bounded time:
 * normal JSON, form and query secrets, gzip bodies, 10k-deep JSON, 5 MB
 * bodies, an upstream that resets, outages where it refuses connections,
 * clients that abort mid-body and mid-response.
 *
 * Figures:
 * - sidecarCrashes: the recorder process exiting on its own (restarted to go on);
 * - clientFailuresCausedByRecorder: compared requests (each sent direct and
 *   through the recorder) whose answers differ — status, body, or failing on
 *   one side only; requests caught by an outage on either side are not compared;
 * - recordAccountingGap: sampled − written − dropped once the buffer is empty,
 *   and storedGap: written − records read back from the store;
 * - throughputVsPlainProxy: closed-loop requests/s of the normal mix through the
 *   recorder against a plain undici reverse proxy (bench/support/plain-proxy.ts)
 *   in the same run, 3 interleaved rounds.
 */
import { request as httpRequest } from 'node:http';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { Pool } from 'undici';
import { seededRandom } from '../core/index.js';
import { createLocalStore } from '../store/index.js';
import { startChild, type BenchChild } from './support/processes.js';
import { median } from './support/median.js';

const here = import.meta.dirname;

interface Sent {
  readonly method: string;
  readonly path: string;
  readonly headers: Record<string, string>;
  readonly body?: Buffer;
}
type Answer = { ok: true; status: number; body: string } | { ok: false; error: string };

/** One request, bounded by a 20 s timeout, on a fresh connection. */
function send(base: string, sent: Sent): Promise<Answer> {
  return new Promise((resolve) => {
    const req = httpRequest(`${base}${sent.path}`, { method: sent.method, headers: sent.headers, agent: false, timeout: 20_000 }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ ok: true, status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString() }));
      res.on('error', (e: NodeJS.ErrnoException) => resolve({ ok: false, error: e.code ?? e.message }));
    });
    req.on('timeout', () => req.destroy(Object.assign(new Error('timeout'), { code: 'TIMEOUT' })));
    req.on('error', (e: NodeJS.ErrnoException) => resolve({ ok: false, error: e.code ?? e.message }));
    req.end(sent.body);
  });
}

/** A client that leaves: mid-body (announces more than it sends) or mid-response (after the first chunk). */
function abandon(base: string, kind: 'mid-body' | 'mid-response'): Promise<void> {
  return new Promise((resolve) => {
    const req = httpRequest(
      `${base}${kind === 'mid-body' ? '/echo' : '/slow'}`,
      {
        method: kind === 'mid-body' ? 'POST' : 'GET',
        agent: false,
        headers: kind === 'mid-body' ? { 'content-length': '100000', 'content-type': 'application/json' } : {},
      },
      (res) => {
        res.once('data', () => {
          req.destroy();
          resolve();
        });
        res.on('error', () => resolve());
      },
    );
    req.on('error', () => resolve());
    req.on('close', () => resolve());
    if (kind === 'mid-body') {
      req.write(`{"password":"${'x'.repeat(1_000)}`);
      setTimeout(() => req.destroy(), 20);
    } else {
      req.end();
    }
  });
}

const deep = Buffer.from(`${'{"a":'.repeat(10_000)}{"token":"t"}${'}'.repeat(10_000)}`);
const big = Buffer.alloc(5 * 1_048_576, 0x61);

/** The compared scenarios, by weight. */
function scenario(random: () => number, i: number): Sent | 'reset' | 'mid-body' | 'mid-response' {
  const r = random();
  const json = { 'content-type': 'application/json' };
  if (r < 0.3)
    return {
      method: 'POST',
      path: `/echo?i=${i}`,
      headers: json,
      body: Buffer.from(JSON.stringify({ user: `u${i}`, password: 'hunter2', amount: 12345678901234567891n.toString(), price: 1.1 })),
    };
  if (r < 0.45) return { method: 'GET', path: `/echo?q=${i}&access_token=tok${i}`, headers: {} };
  if (r < 0.55)
    return { method: 'POST', path: '/echo', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: Buffer.from(`user=u${i}&password=p${i}`) };
  if (r < 0.63)
    return { method: 'POST', path: '/echo', headers: { ...json, 'content-encoding': 'gzip' }, body: gzipSync(JSON.stringify({ token: `t${i}`, n: i })) };
  if (r < 0.68) return { method: 'POST', path: '/echo', headers: json, body: deep };
  if (r < 0.7) return { method: 'POST', path: '/echo', headers: { 'content-type': 'application/octet-stream' }, body: big };
  if (r < 0.8) return 'reset';
  if (r < 0.9) return 'mid-body';
  return 'mid-response';
}

const sameAnswer = (a: Answer, b: Answer): boolean => (a.ok && b.ok ? a.status === b.status && a.body === b.body : a.ok === b.ok);

async function startRecorder(dir: string, upstream: string, rate = '1', tier = 'soak'): Promise<BenchChild> {
  return startChild([
    join(here, '..', 'bin', 'tandem.js'),
    '--config',
    join(dir, 'soak.yaml'),
    'record',
    '--tier',
    tier,
    '--listen',
    ':0',
    '--upstream',
    upstream,
    '--rate',
    rate,
    '--json',
  ]);
}

async function metrics(
  adminUrl: string,
): Promise<{ sampled: number; written: number; dropped: number; buffered: number; abandoned: number; withheld: number }> {
  const text = await (await fetch(`${adminUrl}/metrics`)).text();
  const sum = (name: string): number =>
    text
      .split('\n')
      .filter((l) => l.startsWith(name))
      .reduce((a, l) => a + Number(l.split(' ').pop()), 0);
  return {
    sampled: sum('recorder_sampled_total'),
    written: sum('recorder_written_total'),
    dropped: sum('recorder_dropped_total'),
    buffered: sum('recorder_buffered_records'),
    abandoned: sum('recorder_abandoned_total'),
    withheld: sum('recorder_withheld_total'),
  };
}

/** Closed loop over `connections` connections for `seconds` (bounded by time and by a request cap). */
async function closedLoop(base: string, seconds: number, connections: number): Promise<number> {
  const pool = new Pool(base, { connections });
  const end = performance.now() + seconds * 1000;
  let done = 0;
  const body = JSON.stringify({ user: 'u', password: 'hunter2', items: [1, 2, 3] });
  await Promise.all(
    Array.from({ length: connections }, async () => {
      while (performance.now() < end && done < 5_000_000) {
        const res = await pool.request({ path: '/echo?access_token=t', method: 'POST', headers: { 'content-type': 'application/json' }, body });
        await res.body.dump();
        done++;
      }
    }),
  );
  await pool.close();
  return done / seconds;
}

export async function run(args: string[]): Promise<void> {
  const seconds = Math.max(5, Number(args[args.indexOf('--seconds') + 1]) || 60);
  const dir = await mkdtemp(join(tmpdir(), 'tandem-bench-recorder-soak-'));
  await writeFile(join(dir, 'soak.yaml'), `store: { kind: local, dir: ${JSON.stringify(join(dir, 'store'))} }\nrecorder: { bufferRecords: 100000 }\n`);
  const tsx = ['--import', 'tsx'];
  const children: BenchChild[] = [];
  let recorder: BenchChild | undefined;
  let crashes = 0;
  const counted = { compared: 0, differing: 0, outage: 0, resets: 0, abandoned: 0 };
  const examples: string[] = [];
  try {
    const upstream = await startChild([...tsx, join(here, 'support', 'soak-upstream.ts')]);
    children.push(upstream);
    const upstreamUrl = upstream.info.url as string;
    const plain = await startChild([...tsx, join(here, 'support', 'plain-proxy.ts'), upstreamUrl]);
    children.push(plain);
    const watch = (child: BenchChild): void => {
      child.child.once('exit', () => {
        if (child !== recorder) return;
        crashes++;
        recorder = undefined;
      });
    };
    recorder = await startRecorder(dir, upstreamUrl);
    watch(recorder);

    // Throughput: 3 interleaved rounds of the normal mix, plain proxy against the recorder (and, to tell
    // recording from proxying, the same recorder process sampling almost nothing).
    const unsampled = await startRecorder(dir, upstreamUrl, '0.0001', 'unsampled');
    children.push(unsampled);
    const plainRps: number[] = [];
    const recorderRps: number[] = [];
    const unsampledRps: number[] = [];
    // Each proxy warmed up alike first (JIT, connection pools), so no round measures a cold process.
    for (const proxy of [plain, recorder, unsampled]) await closedLoop(proxy.info.url as string, 2, 32);
    for (let round = 0; round < 3; round++) {
      plainRps.push(await closedLoop(plain.info.url as string, 5, 32));
      recorderRps.push(await closedLoop(recorder.info.url as string, 5, 32));
      unsampledRps.push(await closedLoop(unsampled.info.url as string, 5, 32));
    }
    process.stderr.write(
      `throughput rounds (requests/s): plain ${plainRps.map(Math.round).join(', ')}; recorder ${recorderRps.map(Math.round).join(', ')}; unsampled ${unsampledRps.map(Math.round).join(', ')}\n`,
    );

    // The soak: 8 clients for `seconds`, an outage every 20 s.
    const random = seededRandom(2026);
    const end = performance.now() + seconds * 1000;
    let outageUntil = 0;
    const outages = (async () => {
      for (let t = 10; t < seconds - 5; t += 20) {
        await new Promise((resolve) => setTimeout(resolve, Math.max(0, end - seconds * 1000 + t * 1000 - performance.now())));
        outageUntil = performance.now() + 2_000;
        await send(upstreamUrl, { method: 'GET', path: '/__outage?ms=1500', headers: {} });
      }
    })();
    let i = 0;
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        while (performance.now() < end && i < 1_000_000) {
          if (!recorder) {
            recorder = await startRecorder(dir, upstreamUrl);
            watch(recorder);
          }
          const base = recorder.info.url as string;
          const next = scenario(random, i++);
          if (next === 'mid-body' || next === 'mid-response') {
            counted.abandoned++;
            await abandon(base, next);
            continue;
          }
          const sent = next === 'reset' ? { method: 'GET', path: '/reset', headers: {} } : next;
          if (next === 'reset') counted.resets++;
          const started = performance.now();
          const direct = await send(upstreamUrl, sent);
          const proxied = await send(base, sent);
          const duringOutage = started < outageUntil || performance.now() < outageUntil;
          if (duringOutage && (!direct.ok || !proxied.ok)) {
            counted.outage++;
            continue;
          }
          counted.compared++;
          if (!sameAnswer(direct, proxied)) {
            counted.differing++;
            if (examples.length < 5)
              examples.push(
                `${sent.method} ${sent.path.slice(0, 60)}: direct ${JSON.stringify(direct).slice(0, 120)} / recorded ${JSON.stringify(proxied).slice(0, 120)}`,
              );
          }
        }
      }),
    );
    await outages;

    // Accounting once the recorder's buffer is empty (bounded wait).
    const last = recorder!;
    const adminUrl = last.info.adminUrl as string;
    let m = await metrics(adminUrl);
    for (let wait = 0; wait < 100 && m.buffered > 0; wait++) {
      await new Promise((resolve) => setTimeout(resolve, 300));
      m = await metrics(adminUrl);
    }
    recorder = undefined; // stopping it is not a crash
    await last.stop();
    let stored = 0;
    const store = createLocalStore({ dir: join(dir, 'store') });
    for await (const _ of store.corpus.read('soak', { sinceMs: 0 })) stored++;
    await store.close();
    for (const line of examples) console.error(`differs: ${line}`);
    console.error(
      `soak: ${counted.compared} compared, ${counted.differing} differing, ${counted.outage} caught by outages, ${counted.resets} resets, ${counted.abandoned} abandoned clients; recorder: ${JSON.stringify(m)}; ${stored} read back`,
    );
    const figures = {
      baseline: 'plain undici reverse proxy (bench/support/plain-proxy.ts), same run, interleaved',
      seconds,
      sidecarCrashes: crashes,
      clientFailuresCausedByRecorder: counted.differing,
      comparedRequests: counted.compared,
      recordAccountingGap: Math.abs(m.sampled - m.written - m.dropped),
      storedGap: Math.abs(m.written - stored),
      sampled: m.sampled,
      written: m.written,
      dropped: m.dropped,
      withheld: m.withheld,
      abandoned: m.abandoned,
      plainProxyRps: Math.round(median(plainRps)),
      recorderRps: Math.round(median(recorderRps)),
      recorderUnsampledRps: Math.round(median(unsampledRps)),
      throughputVsPlainProxy: Number((median(recorderRps) / median(plainRps)).toFixed(3)),
    };
    console.log(
      JSON.stringify({
        bench: 'recorder-soak',
        figures,
        targets: {
          sidecarCrashes: { value: figures.sidecarCrashes, max: 0 },
          clientFailuresCausedByRecorder: { value: figures.clientFailuresCausedByRecorder, max: 0 },
          recordAccountingGap: { value: figures.recordAccountingGap, max: 0 },
          storedGap: { value: figures.storedGap, max: 0 },
          throughputVsPlainProxy: { value: figures.throughputVsPlainProxy, min: 0.85 },
        },
      }),
    );
  } finally {
    await recorder?.stop();
    await Promise.all(children.map((c) => c.stop()));
    await rm(dir, { recursive: true, force: true });
  }
}
