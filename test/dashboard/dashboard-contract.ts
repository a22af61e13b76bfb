/**
 * The dashboard over a store, through HTTP as a browser or a script would
 * reach it; run over the local files and over ClickHouse.
 */
import { get } from 'node:http';
import { describe, expect, it, onTestFinished } from 'vitest';
import type { Store } from '../../store/index.js';
import { HOSTILE, completedTrials, dashboardOver, experiment, seedOutcomes } from '../support/dashboard-fixtures.js';
import { SECURITY_HEADERS } from '../../dashboard/server.js';

const T0 = Date.UTC(2026, 10, 30, 10);

export function dashboardContract(name: string, freshStore: () => Promise<Store>): void {
  describe(`dashboard over ${name}`, () => {
    async function seeded(): Promise<{ store: Store; url: string }> {
      const store = await freshStore();
      for (let i = 0; i < 120; i++) {
        await store.experiments.put(
          experiment({
            id: `exp-${String(i).padStart(3, '0')}`,
            workload: i % 2 === 0 ? 'ranking' : 'query',
            status: i % 3 === 0 ? 'passed' : 'regressed',
            createdAtMs: T0 + i * 60_000,
            updatedAtMs: T0 + i * 60_000,
            spec: { kind: 'experiment', stage: i % 4 === 0 ? 'land' : 'diff', change: `change-${i % 7}` },
            verdict: { outcome: i % 3 === 0 ? 'passed' : 'regressed' },
          }),
        );
      }
      const server = await dashboardOver(store);
      onTestFinished(() => server.close());
      return { store, url: server.url };
    }

    it('pages and filters the list on the server, with a strict CSP and every name escaped', async () => {
      const { store, url } = await seeded();
      await store.experiments.put(
        experiment({
          id: 'exp-hostile',
          workload: 'ranking',
          createdAtMs: T0 + 200 * 60_000,
          updatedAtMs: T0,
          reason: HOSTILE,
          spec: { kind: 'experiment', stage: 'diff', change: HOSTILE },
        }),
      );
      const first = await fetch(`${url}/`);
      expect(first.status).toBe(200);
      for (const [header, value] of Object.entries(SECURITY_HEADERS)) expect(first.headers.get(header)).toBe(value);
      expect(first.headers.get('content-security-policy')).not.toContain('unsafe-inline');
      const page = await first.text();
      expect(page).toContain('121 experiment(s) · page 1 of 3');
      expect(page.match(/<tr data-id=/g)).toHaveLength(50);
      expect(page).toContain('exp-hostile');
      expect(page).not.toContain('<script>alert');
      expect(page).toContain('&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;');
      // Only the dashboard's own script, from this origin.
      expect([...page.matchAll(/<script\b[^>]*>/g)].map((m) => m[0])).toEqual([
        expect.stringMatching(/^<script src="\/assets\/dashboard\.[0-9a-f]{16}\.js" defer>$/),
      ]);
      const third = await (await fetch(`${url}/?page=3`)).text();
      expect(third.match(/<tr data-id=/g)).toHaveLength(21);
      expect(third).toContain('exp-000');
      const filtered = await (await fetch(`${url}/?workload=ranking&status=passed&stage=land`)).text();
      // i even, i % 3 == 0, i % 4 == 0: i % 12 == 0 → 10 of 120.
      expect(filtered).toContain('10 experiment(s) · page 1 of 1');
      const byChange = await (await fetch(`${url}/?change=change-3&since=2026-11-30T11:00Z`)).text();
      expect(byChange.match(/<tr data-id=/g)!.length).toBe([...Array(120).keys()].filter((i) => i % 7 === 3 && i >= 60).length);
    });

    it('refuses bad filters, ids and hosts with a message naming what was wrong', async () => {
      const { url } = await seeded();
      const bad = async (path: string, status: number, message: string): Promise<void> => {
        const response = await fetch(`${url}${path}`);
        expect(response.status).toBe(status);
        expect(await response.text()).toContain(message);
      };
      await bad('/?status=exploded', 400, 'status must be one of');
      await bad('/?since=yesterday', 400, 'since must be a date');
      await bad('/?page=0', 400, 'page must be a whole number');
      await bad('/?colour=red', 400, 'unknown filter');
      await bad(`/?workload=${encodeURIComponent('a b')}`, 400, 'workload must be 1-200 printable characters');
      await bad('/experiments/%E0%A4%A', 400, 'malformed escape');
      await bad(`/experiments/${encodeURIComponent('../etc/passwd')}`, 400, 'experiment id must be');
      await bad('/experiments/exp-nothing', 404, 'no experiment');
      await bad('/nowhere', 404, 'no page at /nowhere');
      // A DNS-rebinding page reaches this port under its own name (fetch cannot set Host; node:http can).
      const rebound = await new Promise<number>((resolve, reject) =>
        get(`${url}/`, { headers: { host: 'attacker.example:80' } }, (res) => resolve(res.resume() && res.statusCode!)).on('error', reject),
      );
      expect(rebound).toBe(421);
      expect((await fetch(`${url}/`, { method: 'POST' })).status).toBe(405);
    });

    it('shows a finished experiment with its report, response differences side by side and charts for the page script', async () => {
      const store = await freshStore();
      await store.experiments.put(
        experiment({
          id: 'exp-done',
          status: 'regressed',
          trials: completedTrials(4, T0),
          verdict: { outcome: 'regressed' },
          spec: { kind: 'experiment', stage: 'diff', compare: true },
        }),
      );
      await seedOutcomes(store, 'exp-done', 4, { slowdown: 1.5, differ: true });
      const server = await dashboardOver(store);
      onTestFinished(() => server.close());
      const page = await (await fetch(`${server.url}/experiments/exp-done`)).text();
      expect(page).toContain('stored verdict <strong>regressed</strong>');
      expect(page).toContain('Judged metrics');
      expect(page).toContain('Latency CDF');
      expect(page).toMatch(/data-chart="\{&quot;height&quot;/);
      expect(page).not.toContain('<script>alert');
      expect(page).not.toMatch(/<svg/); // drawn by the page's script: inline SVG styles would break the CSP
      expect(page).not.toMatch(/\sstyle="/);
    });

    it('shows a workload: verdict history, trials the judge needed, calibrations, corpus; and 404 for an unknown one', async () => {
      const store = await freshStore();
      for (let i = 0; i < 5; i++) {
        await store.experiments.put(
          experiment({
            id: `exp-w${i}`,
            status: i === 2 ? 'regressed' : 'passed',
            createdAtMs: T0 + i,
            updatedAtMs: T0 + i,
            trials: completedTrials(2 + i, T0),
            spec: { kind: 'experiment', stage: 'diff', change: `c${i}` },
            verdict: { outcome: i === 2 ? 'regressed' : 'passed', metrics: [{ metric: 'latency_p99', critical: true, estimate: i === 2 ? 0.08 : 0.001 }] },
          }),
        );
      }
      const calibration = {
        experimentId: 'exp-cal',
        workload: 'ranking',
        createdAtMs: T0,
        trials: 12,
        design: { minTrials: 2, maxTrials: 6 },
        subsets: 200,
        falsePositiveRate: 0.035,
        anyMetricFlaggedRate: 0.05,
        metrics: {
          [`latency_p99${HOSTILE}`]: {
            sd: 0.01,
            df: 11,
            trials: 12,
            noiseFloor: 0.021,
            slotBias: { estimate: 0.004, low: -0.002, high: 0.01, pValue: 0.2 },
            falsePositiveRate: 0.03,
            meanEffect: 0,
          },
        },
      };
      await store.experiments.put(experiment({ id: 'exp-cal', status: 'completed', spec: { kind: 'calibration' }, verdict: { calibration } }));
      await store.corpus.append([
        {
          id: 'r1',
          tier: 'ranking',
          timeMs: T0,
          method: 'GET',
          path: '/',
          headers: {},
          body: '',
          bodyTruncated: false,
          sampleRate: 0.01,
          sampleMode: 'uniform',
        },
      ]);
      const server = await dashboardOver(store);
      onTestFinished(() => server.close());
      const page = await (await fetch(`${server.url}/workloads/ranking`)).text();
      expect(page).toContain('latency_p99 +8.00%');
      expect(page).toContain('Over the last 5 judged experiment(s): median 4 trials');
      expect(page).toContain('false-positive rate 3.5% over 200 sequential A/A experiments simulated from it');
      expect(page).toContain('+2.10%'); // the noise floor
      expect(page).toContain('latency_p99&lt;script&gt;');
      expect(page).not.toContain('<script>alert');
      expect(page).toMatch(/<td>ranking<\/td><td class="n">1<\/td>/);
      expect((await fetch(`${server.url}/workloads/nothing-here`)).status).toBe(404);
    });

    it('takes actions only with the bearer token, JSON from this origin', async () => {
      const store = await freshStore();
      await store.experiments.put(experiment({ id: 'exp-live', status: 'running' }));
      const cancels: string[] = [];
      const actions = {
        cancel: async (id: string, reason: string) => (cancels.push(`${id}: ${reason}`), 'cancel sent to its runner'),
        calibrate: async () => ({ id: 'aa-1', deduplicated: false }),
      };
      const token = 'a-token-of-24-characters';
      const withToken = await dashboardOver(store, { token, actions });
      const readOnly = await dashboardOver(store, { actions });
      onTestFinished(async () => {
        await Promise.all([withToken.close(), readOnly.close()]);
      });
      const post = (base: string, path: string, headers: Record<string, string>, body = '{"reason":"flaky"}'): Promise<Response> =>
        fetch(`${base}${path}`, { method: 'POST', headers, body });
      const json = { 'content-type': 'application/json' };
      expect((await post(readOnly.url, '/api/experiments/exp-live/cancel', { ...json, authorization: `Bearer ${token}` })).status).toBe(403);
      expect((await post(withToken.url, '/api/experiments/exp-live/cancel', json)).status).toBe(401);
      expect((await post(withToken.url, '/api/experiments/exp-live/cancel', { ...json, authorization: `Bearer ${token}x` })).status).toBe(401);
      // A cross-site form: no JSON content type, a foreign origin.
      expect(
        (
          await post(
            withToken.url,
            '/api/experiments/exp-live/cancel',
            { 'content-type': 'application/x-www-form-urlencoded', authorization: `Bearer ${token}` },
            'reason=x',
          )
        ).status,
      ).toBe(415);
      expect(
        (await post(withToken.url, '/api/experiments/exp-live/cancel', { ...json, authorization: `Bearer ${token}`, origin: 'http://evil.example' })).status,
      ).toBe(403);
      expect(
        (await post(withToken.url, '/api/experiments/exp-live/cancel', { ...json, authorization: `Bearer ${token}`, 'sec-fetch-site': 'cross-site' })).status,
      ).toBe(403);
      expect(
        (await post(withToken.url, '/api/experiments/exp-live/cancel', { ...json, authorization: `Bearer ${token}` }, '{"reason":"\\u0000"}')).status,
      ).toBe(400);
      expect(cancels).toEqual([]);
      const ok = await post(withToken.url, '/api/experiments/exp-live/cancel', { ...json, authorization: `Bearer ${token}` });
      expect(ok.status).toBe(200);
      expect(cancels).toEqual(['exp-live: flaky']);
      const calibrate = await post(withToken.url, '/api/workloads/ranking/calibrate', { ...json, authorization: `Bearer ${token}` }, '{}');
      expect(await calibrate.json()).toEqual({ id: 'aa-1', message: 'queued: A/A calibration aa-1' });
      expect((await post(withToken.url, '/api/workloads/nope/calibrate', { ...json, authorization: `Bearer ${token}` }, '{}')).status).toBe(404);
    });
  });
}
