import { createServer } from 'node:http';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { parseConfig, systemClock, type CorpusRecord, type WorkloadConfig } from '../../core/index.js';
import { createLocalStore } from '../../store/index.js';
import { UrlArms, runTrials } from '../../replayer/index.js';
import { shapeCorpus, wrapped } from '../../replayer/replay-shaping.js';
import { stream } from '../support/corpus.js';

const record = (i: number, method: string, path: string, headers: Record<string, string> = {}): CorpusRecord => ({
  id: `r${i}`,
  tier: 'svc',
  timeMs: Date.now() - 10_000 + i,
  method,
  path,
  headers,
  body: '',
  bodyTruncated: false,
  sampleRate: 1,
  sampleMode: 'uniform',
});

async function collect<T>(items: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of items) out.push(item);
  return out;
}

describe('replay filters and rewrites', () => {
  it('replays only the configured methods and paths (globs, query ignored), and rewrites headers', async () => {
    const records = [
      record(0, 'GET', '/api/posts?limit=3', { 'Accept-Encoding': 'gzip', accept: 'application/json' }),
      record(1, 'POST', '/api/posts'),
      record(2, 'GET', '/admin/stats'),
      record(3, 'get', '/api/internal/debug'),
      record(4, 'HEAD', '/api/posts/7'),
    ];
    const shaped = shapeCorpus(stream(records), {
      filter: { methods: ['GET', 'head'], paths: ['/api/**'], excludePaths: ['/api/internal/**'] },
      rewrite: { dropHeaders: ['accept-encoding'], setHeaders: { 'X-Replay': '1' } },
    });
    const kept = await collect(shaped.records);
    expect(kept.map((r) => r.id)).toEqual(['r0', 'r4']);
    expect(kept[0]!.headers).toEqual({ accept: 'application/json', 'x-replay': '1' });
    expect(shaped.filtered()).toBe(3);
    // Nothing configured: the corpus as recorded, the same objects.
    const plain = await collect(shapeCorpus(stream(records), {}).records);
    expect(plain).toEqual(records);
  });
});

describe('corpus wrap', () => {
  it('starts the corpus again from its first record, in order; an empty corpus ends at once', async () => {
    const records = [record(0, 'GET', '/a'), record(1, 'GET', '/b')];
    const seen: string[] = [];
    for await (const r of wrapped(() => stream(records))) {
      seen.push(r.id);
      if (seen.length === 5) break;
    }
    expect(seen).toEqual(['r0', 'r1', 'r0', 'r1', 'r0']);
    expect(await collect(wrapped(() => stream([])))).toEqual([]);
  });
});

describe('arm reset', () => {
  function statefulService(): Promise<{ url: string; log: string[] }> {
    const log: string[] = [];
    let posts = 0;
    const s = createServer((req, res) => {
      req.resume();
      if (req.url === '/reset') posts = 0;
      else if (req.method === 'POST') posts++;
      log.push(`${req.method} ${req.url} ${posts}`);
      res.end(JSON.stringify({ posts }));
    }).listen(0, '127.0.0.1');
    onTestFinished(() => {
      s.closeAllConnections();
      return new Promise<void>((resolve) => s.close(() => resolve()));
    });
    return once(s, 'listening').then(() => ({ url: `http://127.0.0.1:${(s.address() as AddressInfo).port}`, log }));
  }

  const workload = (reset: string): WorkloadConfig =>
    parseConfig({
      workloads: [
        {
          name: 'w',
          tier: 'svc',
          arms: {
            control: { url: 'http://127.0.0.1:1', reset: { command: reset, timeout: '10s' } },
            treatment: { url: 'http://127.0.0.1:1', reset: { command: reset, timeout: '10s' } },
          },
          replay: { rate: 100, concurrency: 16, timeout: '2s', minAchievedShare: 0.2 },
          trials: { count: 2, warmup: '0ms', measure: '150ms', maxReplacements: 1 },
        },
      ],
    }).workloads[0]!;

  const reset = `node -e "fetch('http://127.0.0.1:' + process.argv[1] + '/reset', Object.fromEntries([['method', 'POST']])).then((r) => process.exit(r.ok ? 0 : 1))" {port}`;

  it('brings each arm back to the same state before every trial', async () => {
    const control = await statefulService();
    const treatment = await statefulService();
    const dir = await mkdtemp(join(tmpdir(), 'tandem-reset-'));
    onTestFinished(() => rm(dir, { recursive: true, force: true }));
    const store = createLocalStore({ dir });
    const posts = Array.from({ length: 5 }, (_, i) => record(i, 'POST', '/posts'));
    await runTrials({
      experimentId: 'exp-reset',
      seed: 1,
      workload: workload(reset),
      corpus: () => stream(posts),
      arms: new UrlArms({ control: control.url, treatment: treatment.url }),
      store,
      clock: systemClock,
    });
    for (const service of [control, treatment]) {
      // Each trial: a reset, then the five writes counted from zero again.
      expect(service.log.filter((line) => line.startsWith('POST'))).toEqual([
        ...['POST /reset 0', 'POST /posts 1', 'POST /posts 2', 'POST /posts 3', 'POST /posts 4', 'POST /posts 5'],
        ...['POST /reset 0', 'POST /posts 1', 'POST /posts 2', 'POST /posts 3', 'POST /posts 4', 'POST /posts 5'],
      ]);
    }
  });

  it('replaces a trial whose reset fails, with the command and its own output in the reason', async () => {
    const control = await statefulService();
    const dir = await mkdtemp(join(tmpdir(), 'tandem-reset-'));
    onTestFinished(() => rm(dir, { recursive: true, force: true }));
    const store = createLocalStore({ dir });
    const failing = runTrials({
      experimentId: 'exp-reset-fail',
      seed: 1,
      workload: workload('echo "fixtures missing" >&2; exit 4'),
      corpus: () => stream([record(0, 'GET', '/')]),
      arms: new UrlArms({ control: control.url, treatment: control.url }),
      store,
      clock: systemClock,
    });
    await expect(failing).rejects.toThrow(/(control|treatment) reset exited 4: echo "fixtures missing" >&2; exit 4; its last output: fixtures missing/);
  });
});
