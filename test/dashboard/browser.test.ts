/**
 * The dashboard in headless Chromium (Debian's, through playwright-core): the
 * list, a running experiment followed live to its verdict, cancelling with
 * and without the token, landmarks and contrast (axe-core), no console
 * errors. The test plays the worker: it writes to the store what a running
 * experiment writes, step by step, and waits for the page to show each step.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { createLocalStore, type Store } from '../../store/index.js';
import { requestCancel } from '../../executor/index.js';
import { systemClock } from '../../core/index.js';
import { launchChromium, pagePredicates } from '../support/browser.js';
import { HOSTILE, completedTrials, dashboardOver, experiment, seedOutcomes } from '../support/dashboard-fixtures.js';

const T0 = Date.UTC(2026, 10, 30, 10);
const TOKEN = 'browser-test-token-0123456789';
const SCREENSHOTS = process.env.TANDEM_SCREENSHOTS; // docs/ screenshots are taken with this set

let browser: Browser;
beforeAll(async () => {
  browser = await launchChromium();
});
afterAll(() => browser?.close());

async function freshStore(): Promise<Store> {
  const dir = await mkdtemp(join(tmpdir(), 'tandem-dashboard-browser-'));
  onTestFinished(() => rm(dir, { recursive: true, force: true }));
  const store = createLocalStore({ dir: join(dir, '.tandem') });
  await store.init();
  return store;
}

/** A page that records console errors and warnings, and page errors. */
async function openPage(url: string): Promise<{ page: Page; problems: string[] }> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  onTestFinished(() => context.close());
  // Below the test's own 30 s, so a step that never happens fails naming the locator it waited for.
  context.setDefaultTimeout(20_000);
  const page = await context.newPage();
  const problems: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error' || m.type() === 'warning') problems.push(`console ${m.type()}: ${m.text()}`);
  });
  page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
  await page.goto(url, { waitUntil: 'load' });
  return { page, problems };
}

async function shot(page: Page, name: string): Promise<void> {
  if (SCREENSHOTS) await page.screenshot({ path: join(SCREENSHOTS, name), fullPage: false });
}

async function seedFinished(store: Store): Promise<void> {
  for (let i = 0; i < 8; i++) {
    await store.experiments.put(
      experiment({
        id: `exp-old-${i}`,
        workload: i % 2 ? 'query' : 'ranking',
        status: i % 3 ? 'passed' : 'regressed',
        createdAtMs: T0 - (i + 1) * 3_600_000,
        updatedAtMs: T0,
        trials: completedTrials(3, T0),
        spec: { kind: 'experiment', stage: 'diff', change: `c${i}${i === 0 ? HOSTILE : ''}` },
        verdict: { outcome: i % 3 ? 'passed' : 'regressed' },
      }),
    );
  }
}

describe('dashboard in a browser', () => {
  it('lists experiments, follows a running one live to its verdict, and keeps the list live, without console errors', async () => {
    const store = await freshStore();
    await seedFinished(store);
    const running = experiment({
      id: 'exp-run',
      status: 'running',
      createdAtMs: T0,
      updatedAtMs: T0,
      trials: [{ index: 0, attempt: 1, status: 'running', startedAtMs: T0 }],
      spec: { kind: 'experiment', stage: 'diff', change: 'abc123', design: { minTrials: 2, maxTrials: 6 } },
    });
    await store.experiments.put(running);
    const server = await dashboardOver(store, { livePollMs: 100 });
    onTestFinished(() => server.close());

    const list = await openPage(`${server.url}/`);
    await expect(list.page.title()).resolves.toBe('Experiments · Tandem');
    expect(await list.page.locator('tbody tr').count()).toBe(9);
    expect(await list.page.locator('tr[data-id="exp-run"] .status').textContent()).toBe('running');
    // The hostile change id is text, not markup.
    expect(await list.page.locator('tr[data-id="exp-old-0"] td').nth(3).textContent()).toContain('c0<script>');
    await shot(list.page, 'dashboard-list.png');

    const live = await openPage(`${server.url}/experiments/exp-run`);
    const region = live.page.locator('#live');
    await region.getByText('deploying').waitFor();
    await store.experiments.appendEvent({
      experimentId: 'exp-run',
      timeMs: Date.now(),
      type: 'progress',
      data: {
        trial: 0,
        attempt: 1,
        phase: 'measure',
        elapsedMs: 4_000,
        remainingMs: 2_000,
        sentPairs: 80,
        droppedPairs: 2,
        inflight: { control: 1, treatment: 3 },
        errors: { control: 0, treatment: 5 },
        rate: 19.5,
      },
    });
    await region.getByText('measuring').waitFor();
    expect(await region.locator('.card').filter({ hasText: 'Pairs/s' }).locator('.value').textContent()).toBe('19.5');
    expect(await region.locator('.card').filter({ hasText: 'Errors control / treatment' }).locator('.value').textContent()).toBe('0 / 5');
    expect(await region.locator('.card').filter({ hasText: 'Dropped pairs' }).locator('.value').textContent()).toBe('2');

    // Trials complete; the judge looks; the interval narrows; a detector sees a violation.
    await store.experiments.put({ ...running, updatedAtMs: T0 + 1, trials: completedTrials(2, T0) });
    const look = (trials: number, low: number, high: number, decided: boolean) => ({
      experimentId: 'exp-run',
      timeMs: Date.now(),
      type: 'look',
      data: {
        experimentId: 'exp-run',
        trials,
        decided,
        outcome: decided ? 'regressed' : 'undecided',
        metrics: [
          { metric: 'latency_p99', critical: true, verdict: decided ? 'regression' : 'undecided', estimate: (low + high) / 2, low, high, scale: 'relative' },
        ],
      },
    });
    await store.experiments.appendEvent(look(2, -0.02, 0.12, false));
    await region.getByText('After 2 trial(s): undecided').waitFor();
    await store.observations.append([
      { experimentId: 'exp-run', detector: 'errors', timeMs: Date.now(), value: 4, baseline: 0, verdict: 'violation', message: `4 errors ${HOSTILE}` },
    ]);
    await region.locator('td', { hasText: '1 of 3' }).waitFor();
    await store.experiments.appendEvent(look(3, 0.03, 0.09, true));
    await region.getByText('After 3 trial(s): decided, regressed').waitFor();
    // The narrowing chart is drawn by ECharts into a canvas.
    await region.locator('[data-chart] canvas').first().waitFor();
    await shot(live.page, 'dashboard-running.png');

    // The list page, still open, shows the new status without a reload.
    await seedOutcomes(store, 'exp-run', 3, { slowdown: 1.3, differ: true });
    await store.experiments.put({
      ...running,
      status: 'regressed',
      updatedAtMs: T0 + 2,
      trials: completedTrials(3, T0),
      verdict: { outcome: 'regressed' },
      reason: 'latency_p99 +30%',
    });
    await region.getByText('stored verdict regressed').waitFor();
    await region.getByText('Judged metrics').waitFor();
    await live.page.waitForFunction(pagePredicates.liveEnded);
    await list.page.locator('tr[data-id="exp-run"] .status', { hasText: 'regressed' }).waitFor();
    await live.page.locator('#live [data-chart] canvas').first().waitFor();
    await shot(live.page, 'dashboard-finished.png');
    expect(await live.page.locator('script:not([src])').count()).toBe(0);
    expect([...list.problems, ...live.problems]).toEqual([]);
  });

  it('cancels with the token and shows it cancelled; refuses without the token', async () => {
    const store = await freshStore();
    const running = experiment({
      id: 'exp-cancel',
      status: 'running',
      createdAtMs: T0,
      updatedAtMs: T0,
      trials: [{ index: 0, attempt: 1, status: 'running', startedAtMs: T0 }],
    });
    await store.experiments.put(running);
    // The queue's cancel as `tandem cancel` does it: a durable request the runner watches for; the test is the runner.
    const actions = {
      cancel: async (id: string, reason: string) => {
        await requestCancel(store, id, reason, systemClock);
        return 'cancel sent to its runner';
      },
      calibrate: async () => ({ id: 'aa-x', deduplicated: false }),
    };
    const server = await dashboardOver(store, { token: TOKEN, actions, livePollMs: 100 });
    onTestFinished(() => server.close());

    const refused = await openPage(`${server.url}/experiments/exp-cancel`);
    await refused.page.getByRole('button', { name: 'Cancel experiment' }).click();
    await refused.page.locator('#action-status', { hasText: 'refused: missing or wrong bearer token' }).waitFor();
    expect((await store.experiments.events('exp-cancel')).filter((e) => e.type === 'cancel-requested')).toEqual([]);
    // The browser reports the refused request itself, and nothing else.
    expect(refused.problems).toEqual([expect.stringContaining('401')]);

    const { page, problems } = await openPage(`${server.url}/experiments/exp-cancel`);
    await page.locator('#token-input').fill(TOKEN);
    await page.getByRole('button', { name: 'Set' }).click();
    await page.getByText('token set for this tab').waitFor();
    await page.waitForFunction(pagePredicates.liveUpdated);
    await page.locator('#cancel-reason').fill(`flaky ${HOSTILE}`);
    // The run moves on while the reason is typed: the live region is replaced, the reason and the button stay.
    await store.experiments.appendEvent({
      experimentId: 'exp-cancel',
      timeMs: Date.now(),
      type: 'progress',
      data: { trial: 0, attempt: 1, phase: 'measure', elapsedMs: 1_000, remainingMs: 2_000, sentPairs: 20, droppedPairs: 0, rate: 20 },
    });
    await page.locator('#live').getByText('measuring').waitFor();
    await page.getByRole('button', { name: 'Cancel experiment' }).click();
    await page.locator('#action-status', { hasText: 'exp-cancel: cancel sent to its runner' }).waitFor();
    const requested = (await store.experiments.events('exp-cancel')).filter((e) => e.type === 'cancel-requested');
    expect(requested.map((e) => e.message)).toEqual([`flaky ${HOSTILE}`]);
    await page.locator('#live .banner', { hasText: 'cancel requested' }).waitFor();
    await store.experiments.put({ ...running, status: 'cancelled', updatedAtMs: T0 + 5, reason: `cancelled: flaky ${HOSTILE}` });
    await page.locator('#live .status', { hasText: 'cancelled' }).first().waitFor();
    await page.waitForFunction(pagePredicates.liveEnded);
    // The cancel form went with the run.
    expect(await page.locator('#experiment-actions').count()).toBe(0);
    expect(problems).toEqual([]);
  });

  it('has landmarks, names and contrast that axe-core finds no violation in', async () => {
    const store = await freshStore();
    await seedFinished(store);
    await store.experiments.put(experiment({ id: 'exp-a11y', status: 'regressed', trials: completedTrials(3, T0), verdict: { outcome: 'regressed' } }));
    await seedOutcomes(store, 'exp-a11y', 3, { slowdown: 1.2, differ: true });
    const server = await dashboardOver(store, {
      token: TOKEN,
      actions: { cancel: async () => 'x', calibrate: async () => ({ id: 'x', deduplicated: false }) },
    });
    onTestFinished(() => server.close());
    const axe = (await import('node:fs/promises')).readFile(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
    // axe is injected as an inline script, which the dashboard's CSP (rightly) refuses: this context bypasses it.
    const context = await browser.newContext({ bypassCSP: true });
    onTestFinished(() => context.close());
    for (const path of ['/', '/experiments/exp-a11y', '/workloads', '/workloads/ranking', '/capacity', '/changes']) {
      const page = await context.newPage();
      await page.goto(`${server.url}${path}`, { waitUntil: 'load' });
      expect(await page.locator('header nav[aria-label="Main"]').count(), path).toBe(1);
      expect(await page.locator('main').count(), path).toBe(1);
      expect(await page.locator('footer').count(), path).toBe(1);
      expect(await page.locator('h1').count(), path).toBe(1);
      await page.addScriptTag({ content: await axe });
      const result = (await page.evaluate("axe.run(document, { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa'] } })")) as {
        violations: { id: string; nodes: { target: unknown }[] }[];
      };
      expect(result.violations.map((v) => `${path}: ${v.id} ${JSON.stringify(v.nodes.slice(0, 3).map((n) => n.target))}`)).toEqual([]);
      await page.close();
    }
  });
});
