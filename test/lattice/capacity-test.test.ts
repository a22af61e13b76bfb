import { createServer } from 'node:http';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { describe, expect, it, onTestFinished } from 'vitest';
import { parseConfigText, systemClock, type CorpusRecord } from '../../core/index.js';
import {
  LatticeController,
  LoadFactors,
  rateAt,
  renderCapacityHtml,
  runCapacityTest,
  startControllerServer,
  withinQualityTarget,
} from '../../lattice/index.js';
import { exampleLattice, rankingLoadFactorHere, runExampleCapacity, RANKING_LOAD_FACTOR, type ExampleCapacityResult } from '../../examples/stack/index.js';

/** Ranking's load-factor at 20 per second, as probed, on the host where a ranking request cost about twice the CPU (docs/lattices.md). */
const SLOW_HOST_LOAD_FACTOR = 1.1;

const record = (i: number): CorpusRecord => ({
  id: `r${i}`,
  tier: 'svc',
  timeMs: 0,
  method: 'POST',
  path: '/rank',
  headers: { 'content-type': 'application/json' },
  body: Buffer.from(JSON.stringify({ q: i })).toString('base64'),
  bodyTruncated: false,
  sampleRate: 1,
  sampleMode: 'uniform',
});

describe('capacity test', () => {
  it('follows the rate profile: baseline, linear ramp, hold at the peak, baseline again', () => {
    const profile = { baselineRate: 10, peak: 3, leadMs: 1_000, rampMs: 2_000, holdMs: 1_000, cooldownMs: 1_000 };
    expect([0, 999, 1_000, 2_000, 2_999, 3_000, 3_999, 4_000, 4_999].map((t) => Math.round(rateAt(profile, t) * 100) / 100)).toEqual([
      10, 10, 10, 20, 29.99, 30, 30, 10, 10,
    ]);
  });

  it('refuses a profile whose rate or durations are not finite, before it sends anything', async () => {
    const records = [
      { id: 'r', tier: 'ranking', timeMs: 0, method: 'POST', path: '/rank', headers: {}, body: '', bodyTruncated: false, sampleRate: 1, sampleMode: 'uniform' },
    ] as CorpusRecord[];
    const profile = { baselineRate: 10, peak: 2, leadMs: 0, rampMs: 0, holdMs: 0, cooldownMs: 0 };
    const run = (overrides: object): Promise<unknown> =>
      runCapacityTest({ url: 'http://127.0.0.1:9', records, ranking: { path: 'items', k: 10 }, clock: systemClock, profile: { ...profile, ...overrides } });
    await expect(run({ baselineRate: Number.NaN })).rejects.toThrow('capacity profile: baselineRate must be a finite number above 0, got NaN');
    await expect(run({ holdMs: Number.POSITIVE_INFINITY })).rejects.toThrow('holdMs must be a finite number of 0 or more, got Infinity');
    await expect(run({ peak: 0 })).rejects.toThrow('peak must be a finite number above 0, got 0');
  });

  it(
    'records quality against L0 answers, no-result rate, stability and the controller state per bucket, and the recovery times',
    { timeout: 30_000 },
    async () => {
      // A service that degrades while "overloaded": its lists lose their head and some come back empty.
      let degraded = false;
      const server = createServer((req, res) => {
        const chunks: Buffer[] = [];
        req.on('data', (c: Buffer) => chunks.push(c));
        req.on('end', () => {
          const { q } = JSON.parse(Buffer.concat(chunks).toString()) as { q: number };
          const items = Array.from({ length: 10 }, (_, i) => ({ id: `${q}-${i}` }));
          res.setHeader('content-type', 'application/json');
          res.end(JSON.stringify({ items: degraded ? (q % 4 === 0 ? [] : items.slice(3)) : items }));
        });
      });
      server.listen(0, '127.0.0.1');
      await once(server, 'listening');
      onTestFinished(() => new Promise<void>((resolve) => server.close(() => resolve())));
      const lattice = parseConfigText(
        [
          'lattices:',
          '  - name: l',
          '    services: { svc: { maxLevel: 2 } }',
          '    decisionPeriod: 100ms',
          '    recoveryDamping: 2',
          '    window: 300ms',
          '    states:',
          '      - { name: L0, threshold: 0, levels: { svc: 0 } }',
          '      - { name: L1, threshold: 0.5, levels: { svc: 1 } }',
          '      - { name: L2, threshold: 0.8, levels: { svc: 2 } }',
          '',
        ].join('\n'),
        'l.yaml',
      ).lattices[0]!;
      const loadFactors = new LoadFactors(lattice, systemClock);
      const controller = new LatticeController({ lattice, loadFactors, clock: systemClock });
      const controllerServer = await startControllerServer({ lattice, controller, loadFactors });
      onTestFinished(() => controllerServer.close());
      const stop = new AbortController();
      const deciding = controller.run(stop.signal);
      onTestFinished(async () => {
        stop.abort();
        await deciding;
      });
      const profile = { baselineRate: 40, peak: 2, leadMs: 1_500, rampMs: 1_000, holdMs: 1_500, cooldownMs: 4_000 };
      // The "load": the service reports a high load-factor and degrades during ramp and hold.
      const started = Date.now();
      const load = setInterval(() => {
        const t = Date.now() - started;
        // Overloaded from shortly into the ramp to the end of the hold; the cooldown leaves seconds to recover.
        const overloaded = t > profile.leadMs + 300 && t < profile.leadMs + profile.rampMs + profile.holdMs;
        degraded = overloaded;
        loadFactors.report('svc', overloaded ? 0.9 : 0.1);
      }, 50);
      onTestFinished(() => clearInterval(load));
      const { buckets, summary } = await runCapacityTest({
        url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
        records: Array.from({ length: 8 }, (_, i) => record(i)),
        profile,
        ranking: { path: 'items', id: 'id', k: 10 },
        clock: systemClock,
        bucketMs: 250,
        controllerUrl: controllerServer.url,
        states: ['L0', 'L1', 'L2'],
        stabilityBuckets: 8,
        rollingBuckets: 2,
      });
      expect(buckets).toHaveLength(Math.ceil((profile.leadMs + profile.rampMs + profile.holdMs + profile.cooldownMs) / 250));
      // Open loop at the target rate: 40/s in the lead (6 buckets), 80/s in the hold (6 buckets from the 11th).
      // Per-bucket counts are a matter of the machine's speed; that the hold sends more is not.
      const sentIn = (from: number, to: number): number => buckets.slice(from, to).reduce((sum, b) => sum + b.sent, 0);
      expect(sentIn(10, 16)).toBeGreaterThan(sentIn(0, 6));
      expect(summary.baselineQuality).toBe(1);
      expect(summary.maxQualityLoss).toBeGreaterThan(0.2);
      expect(summary.maxNoResultShare).toBeGreaterThan(0.1);
      expect(summary.maxState).toBe('L2');
      expect(summary.finalState).toBe('L0');
      expect(summary.activeDegradationMs).toBeGreaterThan(0);
      // Quality came back after the overload, within the cool-down (the buckets end with it).
      expect(summary.qualityRecoveryMs).toBeGreaterThanOrEqual(0);
      expect(summary.qualityRecoveryMs).toBeLessThan(profile.cooldownMs);
      expect(buckets.some((b) => b.stability < 1)).toBe(true);
      expect(buckets.at(-1)!.stability).toBe(1);
    },
  );
});

describe('tandem capacity', () => {
  it('scores quality against a reference taken before it when given one, and sends no reference pass of its own', { timeout: 30_000 }, async () => {
    const seen: number[] = [];
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const { q } = JSON.parse(Buffer.concat(chunks).toString()) as { q: number };
        seen.push(q);
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify({ items: Array.from({ length: 10 }, (_, i) => ({ id: `${q}-${i}` })) }));
      });
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    onTestFinished(() => new Promise<void>((resolve) => server.close(() => resolve())));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const records = Array.from({ length: 4 }, (_, i) => record(i));
    const profile = { baselineRate: 20, peak: 1, leadMs: 500, rampMs: 0, holdMs: 0, cooldownMs: 500 };
    const options = { url, records, profile, ranking: { path: 'items', id: 'id', k: 10 }, clock: systemClock, bucketMs: 250 };
    const loadSent = (buckets: readonly { sent: number }[]): number => buckets.reduce((sum, b) => sum + b.sent, 0);
    // Its own pass first sends each distinct request once, before the load.
    const own = await runCapacityTest(options);
    expect(seen.slice(0, 4)).toEqual([0, 1, 2, 3]);
    expect(seen).toHaveLength(loadSent(own.buckets) + 4);
    seen.length = 0;
    // Given one whose lists are the answers reversed for r0 and r1 (no reference for r2 and r3): only the load is sent,
    // and the quality is against it.
    const reversed = (q: number): string[] => Array.from({ length: 10 }, (_, i) => `${q}-${9 - i}`);
    const { summary, buckets } = await runCapacityTest({
      ...options,
      reference: new Map([
        ['r0', reversed(0)],
        ['r1', reversed(1)],
      ]),
    });
    expect(seen).toHaveLength(loadSent(buckets));
    expect(summary.baselineQuality).toBeGreaterThan(0);
    expect(summary.baselineQuality).toBeLessThan(1);
  });

  it('runs from the config, stores the timeline, writes the HTML report and exits by the quality target', { timeout: 30_000 }, async () => {
    const { mkdtemp, readFile, rm, writeFile } = await import('node:fs/promises');
    const { tmpdir } = await import('node:os');
    const { join } = await import('node:path');
    const { createLocalStore } = await import('../../store/index.js');
    const { runCli } = await import('../support/cli.js');
    const server = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify({ items: [{ id: 'a' }, { id: 'b' }] }));
      });
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    onTestFinished(() => new Promise<void>((resolve) => server.close(() => resolve())));
    const dir = await mkdtemp(join(tmpdir(), 'tandem-capacity-'));
    onTestFinished(() => rm(dir, { recursive: true, force: true }));
    await writeFile(
      join(dir, 'tandem.config.yaml'),
      [
        'workloads:',
        '  - name: svc',
        '    tier: svc',
        `    arms: { control: { url: "http://127.0.0.1:${(server.address() as AddressInfo).port}" }, treatment: { url: "http://127.0.0.1:${(server.address() as AddressInfo).port}" } }`,
        '    replay: { rate: 20 }',
        '    harness: { responses: { ranking: { path: items, id: id, k: 2 } } }',
        'lattices:',
        '  - name: l',
        '    services: { svc: { maxLevel: 1 } }',
        '    states:',
        '      - { name: L0, threshold: 0, levels: { svc: 0 } }',
        '      - { name: L1, threshold: 1, levels: { svc: 1 } }',
        '',
      ].join('\n'),
    );
    const store = createLocalStore({ dir: join(dir, '.tandem') });
    await store.corpus.append(Array.from({ length: 5 }, (_, i) => ({ ...record(i), timeMs: Date.now() - 1_000 })));
    await store.close();
    const result = await runCli(
      [
        'capacity',
        '--workload',
        'svc',
        '--lattice',
        'l',
        '--peak',
        '2',
        '--lead',
        '500ms',
        '--ramp',
        '500ms',
        '--hold',
        '500ms',
        '--cooldown',
        '500ms',
        '--bucket',
        '250ms',
        '--html',
        'capacity.html',
        '--json',
      ],
      { cwd: dir },
    );
    expect(result.code, result.err).toBe(0);
    const { experimentId, ok, buckets } = JSON.parse(result.out) as { experimentId: string; ok: boolean; buckets: unknown[] };
    expect(ok).toBe(true);
    expect(buckets).toHaveLength(8);
    const stored = createLocalStore({ dir: join(dir, '.tandem') });
    expect(await stored.experiments.get(experimentId)).toMatchObject({ status: 'passed', spec: { kind: 'capacity', coordinated: false } });
    const samples = [];
    for await (const s of stored.samples.read(experimentId, { metric: 'sent' })) samples.push(s);
    expect(samples.length).toBe(8);
    const page = await readFile(join(dir, 'capacity.html'), 'utf8');
    expect(page).toMatch(/<figure class="chart" role="img" aria-label="traffic, load-factor and state over time"><svg [^>]*viewBox=/);
    const bad = await runCli(['capacity', '--workload', 'svc', '--lattice', 'nope'], { cwd: dir });
    expect(bad.code).toBe(3);
    expect(bad.err).toMatch(/no lattice named "nope"/);
  });

  it('escapes what the HTML report renders', () => {
    const page = renderCapacityHtml({
      title: '<script>alert(1)</script>',
      baselineRate: 10,
      bucketMs: 1_000,
      buckets: [],
      summary: {
        peakRateReached: 0,
        overloadDurationMs: 0,
        activeDegradationMs: 0,
        baselineQuality: 1,
        maxQualityLoss: 0,
        maxNoResultShare: 0,
        meanNoResultShare: 0,
        maxState: '<b>',
      },
      states: ['L0'],
      ok: true,
    });
    expect(page).not.toMatch(/<script|<b>/);
    expect(page).toContain('&lt;script&gt;');
  });
});

describe('capacity test on the example stack (HiLO §4)', () => {
  const states = exampleLattice().states.map((s) => s.name);
  const index = (state: string | undefined): number => (state === undefined ? -1 : states.indexOf(state));
  /** The story's coordinated half: the feature store is the bottleneck, the controller acts on it, and the run ends in L0. */
  const expectFeatureStoreStory = (coordinated: ExampleCapacityResult, context: string): void => {
    // The feature store reported its load-factor and the controller acted on it. Failed once in CI on 2026-12-05's
    // twenty-second host (the slower-host run below, L2 reached and left, quality within target) and passed in three
    // runs alone after it; that host's requests cost a third to half more for stretches of half a minute, which
    // would make ranking the first over a threshold. The message now says which service led and how high each went.
    const peaks = Object.fromEntries(
      [...new Set(coordinated.decisions.flatMap((d) => Object.keys(d.perService)))].map((service) => [
        service,
        Math.max(0, ...coordinated.decisions.map((d) => d.perService[service] ?? 0)),
      ]),
    );
    const firstEscalation = coordinated.decisions.find((d) => d.transition === 'escalate');
    const story = `${context} peak load-factors ${JSON.stringify(peaks)}; first escalation ${JSON.stringify(firstEscalation?.perService ?? null)} to ${firstEscalation?.state ?? 'none'}`;
    expect(
      coordinated.decisions.some((d) => (d.perService.features ?? 0) > 0.9),
      story,
    ).toBe(true);
    expect(index(coordinated.summary.maxState), context).toBeGreaterThanOrEqual(2);
    expect(coordinated.summary.finalState, context).toBe('L0');
    // Recovery goes one state at a time; escalation may jump.
    for (const d of coordinated.decisions.filter((x) => x.transition === 'recover')) expect(index(d.previous) - index(d.state)).toBe(1);
    expect(coordinated.summary.activeDegradationMs).toBeGreaterThan(0);
    // Quality came back after the overload, within the cool-down.
    expect(coordinated.summary.qualityRecoveryMs, context).toBeGreaterThanOrEqual(0);
    expect(coordinated.summary.qualityRecoveryMs, context).toBeLessThan(6_000); // the scenario's cool-down
    // Coordinated: degraded answers, but answers; within the lattice's quality target.
    expect(withinQualityTarget(coordinated.summary, coordinated.lattice), context).toBe(true);
  };

  it('reaches L2 at 2× with the controller live, recovers to L0 after the cooldown, and beats the uncoordinated run', { timeout: 180_000 }, async () => {
    const coordinated = await runExampleCapacity({ coordinated: true });
    // The same rate for both, so the comparison is of coordination alone.
    const uncoordinated = await runExampleCapacity({ coordinated: false, baselineRate: coordinated.profile.baselineRate });
    const context = JSON.stringify({
      coordinated: { ...coordinated.summary, rate: coordinated.profile.baselineRate, rankingLoadFactor: coordinated.rankingLoadFactorAtDefaultRate },
      uncoordinated: uncoordinated.summary,
    });
    expectFeatureStoreStory(coordinated, context);
    // Uncoordinated: the feature store's queue outgrows ranking's deadline and users get nothing.
    expect(uncoordinated.summary.maxState).toBeUndefined();
    expect(uncoordinated.summary.meanNoResultShare, context).toBeGreaterThan(coordinated.summary.meanNoResultShare + 0.05);
    expect(uncoordinated.summary.maxQualityLoss, context).toBeGreaterThan(coordinated.summary.maxQualityLoss);
    expect(withinQualityTarget(uncoordinated.summary, uncoordinated.lattice)).toBe(false);
  });

  it(
    'tells the same story where ranking reads as it did on a host where a request cost twice the CPU, at a rate chosen for it',
    { timeout: 150_000 },
    async () => {
      // Found in CI on a host where a ranking request cost about twice the CPU: at 20 per second ranking's own
      // load-factor escalated the controller before the feature store was over 0.9, and the run ended in L1. Ranking
      // is made to cost what brings its probe to that host's reading (1.1 at 20 per second, with the cost doubled on
      // the host that first measured it), from this host's own: on a host already that slow the fault is none, and
      // doubling a host three times slower than the fast ones asked the story for more than its slowest rate (6 per
      // second) can carry (it ended in L1 or L2, or lost results).
      const here = await rankingLoadFactorHere();
      const latencyPercent = Math.min(100, Math.max(0, Math.round(100 * (SLOW_HOST_LOAD_FACTOR / here - 1))));
      const slower = await runExampleCapacity({ coordinated: true, ...(latencyPercent > 0 ? { faults: { latencyPercent } } : {}) });
      const context = JSON.stringify({
        ...slower.summary,
        rate: slower.profile.baselineRate,
        rankingLoadFactor: slower.rankingLoadFactorAtDefaultRate,
        here,
        latencyPercent,
      });
      expect(slower.rankingLoadFactorAtDefaultRate, context).toBeGreaterThan(RANKING_LOAD_FACTOR);
      expect(slower.profile.baselineRate, context).toBeLessThan(20);
      expectFeatureStoreStory(slower, context);
    },
  );
});
