import { execFileSync } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, onTestFinished, vi } from 'vitest';
import { parseConfigText, systemClock, type LatticeConfig } from '../../core/index.js';
import { LatticeClient, LatticeController, LoadFactors, Reservoir, startControllerServer, type Decision } from '../../lattice/index.js';
import { tempProject } from '../support/project.js';
import { runCli } from '../support/cli.js';

const LATTICE_YAML = [
  'lattices:',
  '  - name: serving',
  '    scenarios: [web, copilot]',
  '    services: { ranking: { maxLevel: 5 }, prediction: { maxLevel: 3 } }',
  '    decisionPeriod: 10s',
  '    recoveryDamping: 3',
  '    window: 30s',
  '    priorities: [{ name: high, offset: 0 }, { name: low, offset: 1 }]',
  '    states:',
  '      - { name: L0, threshold: 0, levels: { ranking: 0, prediction: 0 } }',
  '      - { name: L1, threshold: 0.8, levels: { ranking: 1, prediction: 0 } }',
  '      - { name: L2, threshold: 0.9, levels: { ranking: 2, prediction: 1 } }',
  '      - { name: L3, threshold: 1.0, levels: { ranking: 3, prediction: 2 } }',
  '',
].join('\n');

const lattice = (): LatticeConfig => parseConfigText(LATTICE_YAML, 'lattice.yaml').lattices[0]!;

describe('lattice config', () => {
  it('rejects levels out of range, missing services, decreasing levels, unordered thresholds and duplicate names, with paths', () => {
    const bad = LATTICE_YAML.replace(
      '{ name: L1, threshold: 0.8, levels: { ranking: 1, prediction: 0 } }',
      '{ name: L1, threshold: 0.8, levels: { ranking: 7 } }',
    ).replace('{ name: L3, threshold: 1.0, levels: { ranking: 3, prediction: 2 } }', '{ name: L2, threshold: 0.85, levels: { ranking: 1, prediction: 2 } }');
    let message = '';
    try {
      parseConfigText(bad, 'lattice.yaml');
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message).toMatch(/lattices\[0\]\.states\[1\]\.levels must assign a level to every service: prediction is missing/);
    expect(message).toMatch(/lattices\[0\]\.states\[1\]\.levels\.ranking must be <= ranking's maxLevel \(5\)/);
    expect(message).toMatch(/lattices\[0\]\.states\[3\]\.name state name "L2" is used twice|lattices\[0\]\.states\[3\]\.name.*used twice/);
    expect(message).toMatch(/lattices\[0\]\.states\[3\]\.threshold must be above the previous state's threshold \(0\.9\)/);
    expect(message).toMatch(/lattices\[0\]\.states\[3\]\.levels\.ranking must not be below ranking's level in L2 \(2\)/);
  });
});

describe('reservoir sampling', () => {
  it('keeps every item of the stream with the same probability', () => {
    const counts = new Array<number>(100).fill(0);
    const runs = 2_000;
    for (let run = 0; run < runs; run++) {
      const reservoir = new Reservoir<number>(10, run + 1);
      for (let i = 0; i < 100; i++) reservoir.add(i);
      for (const item of reservoir.items) counts[item]!++;
    }
    // Each item is kept with probability 10/100: 200 of 2,000 runs, binomial sd ~13.4.
    expect(Math.min(...counts)).toBeGreaterThan(200 - 5 * 13.4);
    expect(Math.max(...counts)).toBeLessThan(200 + 5 * 13.4);
    const firstHalf = counts.slice(0, 50).reduce((a, b) => a + b, 0);
    expect(Math.abs(firstHalf - 10_000)).toBeLessThan(400);
  });
});

describe('lattice controller (HiLO §3.6)', () => {
  beforeEach(() => {
    vi.useFakeTimers({ now: Date.UTC(2026, 10, 30, 12) });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  function controller() {
    const config = lattice();
    const loadFactors = new LoadFactors(config, systemClock);
    const decisions: Decision[] = [];
    const control = new LatticeController({ lattice: config, loadFactors, clock: systemClock, onDecision: (d) => void decisions.push(d) });
    const load = (ranking: number, prediction = 0.1) => {
      loadFactors.report('ranking', ranking);
      loadFactors.report('prediction', prediction);
    };
    return { control, decisions, load, loadFactors };
  }

  it('escalates at once, jumping several states, and publishes levels per scenario and priority', async () => {
    const { control, load } = controller();
    load(0.5);
    expect((await control.decide()).state).toBe('L0');
    await vi.advanceTimersByTimeAsync(31_000); // the old reports leave the window
    load(1.05);
    const decision = await control.decide();
    expect(decision).toMatchObject({ previous: 'L0', state: 'L3', transition: 'escalate', productLoadFactor: 1.05 });
    expect(decision.levels.web!.default).toEqual({ ranking: 3, prediction: 2 });
    expect(Object.keys(decision.levels)).toEqual(['web', 'copilot']);
  });

  it('recovers one state at a time, only after the damping period below recoverBelow, and never oscillates just above a threshold', async () => {
    const { control, load, decisions } = controller();
    const abort = new AbortController();
    onTestFinished(() => abort.abort());
    const running = control.run(abort.signal);
    // A steady load just above L2's threshold: L2, and it stays there.
    for (let i = 0; i < 6; i++) {
      load(0.91);
      await vi.advanceTimersByTimeAsync(10_000);
    }
    expect(decisions.map((d) => d.state)).toEqual(['L2', 'L2', 'L2', 'L2', 'L2', 'L2']);
    // Just under the threshold but above recoverBelow (0.81): hysteresis holds L2.
    for (let i = 0; i < 4; i++) {
      await vi.advanceTimersByTimeAsync(30_000);
      load(0.85);
      await vi.advanceTimersByTimeAsync(10_000);
    }
    expect(control.state).toBe('L2');
    // Load gone: one step down per 3 decisions below recoverBelow.
    await vi.advanceTimersByTimeAsync(30_000);
    const before = decisions.length;
    for (let i = 0; i < 7; i++) {
      load(0.2, 0.2);
      await vi.advanceTimersByTimeAsync(10_000);
    }
    const after = decisions.slice(before);
    expect(after.filter((d) => d.transition === 'recover').map((d) => `${d.previous}->${d.state}`)).toEqual(['L2->L1', 'L1->L0']);
    expect(after.every((d) => d.transition !== 'escalate')).toBe(true);
    abort.abort();
    await running;
  });

  it('degrades low-priority traffic further once degradation starts, and holds the state without reports', async () => {
    const { control, load } = controller();
    load(0.82);
    await control.decide();
    expect(control.levels('low')).toEqual({ ranking: 2, prediction: 1 });
    expect(control.levels('high')).toEqual({ ranking: 1, prediction: 0 });
    await vi.advanceTimersByTimeAsync(60_000);
    const held = await control.decide();
    expect(held).toMatchObject({ productLoadFactor: null, state: 'L1', transition: 'hold' });
  });
});

describe('lattice client', () => {
  it('enforces max(local, assigned), and falls back to the local level when the controller is unreachable', async () => {
    const config = lattice();
    const loadFactors = new LoadFactors(config, systemClock);
    const control = new LatticeController({ lattice: config, loadFactors, clock: systemClock });
    const server = await startControllerServer({ lattice: config, controller: control, loadFactors });
    let local = 1;
    let now = Date.now();
    const clock = { now: () => now, monotonic: () => now, sleep: async () => undefined };
    const client = new LatticeClient({ controllerUrl: server.url, service: 'ranking', scenario: 'web', localLevel: () => local, clock, pollIntervalMs: 1_000 });
    expect(await client.reportLoadFactor(1.2)).toBe(true);
    await control.decide();
    expect(await client.poll()).toBe(true);
    expect(client.level()).toBe(3);
    local = 4;
    expect(client.level()).toBe(4);
    await server.close();
    local = 1;
    expect(await client.poll()).toBe(false);
    // Still fresh: the last assignment holds; once stale, only the local level counts.
    expect(client.level()).toBe(3);
    now += 5_000;
    expect(client.level()).toBe(1);
  });

  it('rejects load-factor reports that are not normalized or name unknown services', async () => {
    const config = lattice();
    const loadFactors = new LoadFactors(config, systemClock);
    const server = await startControllerServer({
      lattice: config,
      controller: new LatticeController({ lattice: config, loadFactors, clock: systemClock }),
      loadFactors,
    });
    onTestFinished(() => server.close());
    const post = async (body: string) => (await fetch(`${server.url}/load-factor`, { method: 'POST', body })).status;
    expect(await post('{"service":"ranking","value":-1}')).toBe(400);
    expect(await post('{"service":"nope","value":0.5}')).toBe(400);
    expect(await post('[{"service":"ranking","value":0.5},{"service":"prediction","value":0.4}]')).toBe(202);
    expect(await post(`[${'{"service":"ranking","value":0.5},'.repeat(3_000)}{}]`)).toBe(413);
    expect((await (await fetch(`${server.url}/levels?scenario=mobile`)).json()) as { error: string }).toMatchObject({
      error: expect.stringMatching(/no scenario "mobile"/),
    });
  });
});

describe('example stack under a lattice controller', () => {
  it('takes the assigned level while the controller answers, and falls back to its local level when it does not', async () => {
    const { startStack, startService } = await import('../../examples/stack/index.js');
    const config = lattice();
    const loadFactors = new LoadFactors(config, systemClock);
    const control = new LatticeController({ lattice: config, loadFactors, clock: systemClock });
    const server = await startControllerServer({ lattice: config, controller: control, loadFactors });
    const stack = await startStack({ shards: 1 });
    onTestFinished(() => stack.stop());
    const ranking = await startService('ranking', {
      featuresUrl: stack.urls.features,
      inferenceUrl: stack.urls.gateway,
      latticeUrl: server.url,
      latticePollMs: 50,
    });
    onTestFinished(() => ranking.close());
    const levelOf = async () => (await (await fetch(`${ranking.urls[0]}/level`)).json()) as { local: number; assigned: number };
    const until = async (condition: () => Promise<boolean>, what: string) => {
      const end = Date.now() + 5_000;
      while (!(await condition())) {
        if (Date.now() > end) throw new Error(`${what} not reached`);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    };
    // The ranking service reports its own load-factor to the controller.
    await until(async () => loadFactors.perService().has('ranking'), 'ranking reporting its load-factor');
    loadFactors.report('prediction', 1.2);
    await control.decide();
    expect(control.state).toBe('L3');
    await until(async () => (await levelOf()).assigned === 3, 'ranking taking level 3');
    await server.close();
    await until(async () => (await levelOf()).assigned === 0, 'ranking back on its local level');
    expect((await levelOf()).local).toBe(0);
  });
});

describe('tandem lattice serve', () => {
  it('runs the controller, takes load-factors over HTTP and stores every decision', async () => {
    const { mkdtemp, rm, writeFile } = await import('node:fs/promises');
    const { tmpdir } = await import('node:os');
    const { join } = await import('node:path');
    const { spawn } = await import('node:child_process');
    const { createLocalStore } = await import('../../store/index.js');
    const { REPO_ROOT } = await import('../support/cli.js');
    const { killHard } = await import('../support/child.js');
    const dir = await mkdtemp(join(tmpdir(), 'tandem-lattice-serve-'));
    onTestFinished(() => rm(dir, { recursive: true, force: true }));
    await writeFile(join(dir, 'tandem.config.yaml'), LATTICE_YAML.replace('decisionPeriod: 10s', 'decisionPeriod: 200ms'));
    const child = spawn(process.execPath, [join(REPO_ROOT, 'bin', 'tandem.js'), 'lattice', 'serve', '--lattice', 'serving', '--listen', '127.0.0.1:0'], {
      cwd: dir,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    onTestFinished(() => killHard(child));
    const ready = await new Promise<{ url: string }>((resolve, reject) => {
      let out = '';
      child.stdout!.on('data', (chunk: Buffer) => {
        out += chunk.toString();
        const line = out.split('\n').find((l) => l.includes('"controller":"ready"'));
        if (line) resolve(JSON.parse(line) as { url: string });
      });
      child.once('exit', (code) => reject(new Error(`exited ${code}`)));
    });
    expect((await fetch(`${ready.url}/load-factor`, { method: 'POST', body: '{"service":"ranking","value":0.95}' })).status).toBe(202);
    const store = createLocalStore({ dir: join(dir, '.tandem') });
    const end = Date.now() + 10_000;
    let decisions: { message?: string }[] = [];
    while (Date.now() < end) {
      decisions = (await store.experiments.events('lattice-serving')).filter((e) => (e as { type: string }).type === 'decision');
      if (decisions.some((d) => d.message === 'L0 -> L2 (escalate)')) break;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(decisions.map((d) => d.message)).toContain('L0 -> L2 (escalate)');
    expect(((await (await fetch(`${ready.url}/levels?scenario=web&priority=low`)).json()) as { levels: Record<string, number> }).levels).toEqual({
      ranking: 3,
      prediction: 2,
    });
  });
});

describe('tandem lattice validate', () => {
  it('runs each candidate state against L0 on the example stack: capacity grows and quality falls with the state', { timeout: 240_000 }, async () => {
    const { mkdtemp, rm, writeFile } = await import('node:fs/promises');
    const { tmpdir } = await import('node:os');
    const { join } = await import('node:path');
    const { createLocalStore } = await import('../../store/index.js');
    const { startStack, rankingCorpus } = await import('../../examples/stack/index.js');
    const { runCli } = await import('../support/cli.js');
    const dir = await mkdtemp(join(tmpdir(), 'tandem-lattice-validate-'));
    onTestFinished(() => rm(dir, { recursive: true, force: true }));
    const stack = await startStack({ shards: 1 });
    onTestFinished(() => stack.stop());
    const { REPO_ROOT } = await import('../support/cli.js');
    const command = `${process.execPath} ${join(REPO_ROOT, 'bin', 'tandem.js')} example-stack --service ranking --port {port}`;
    // Deployed arms behind the router: calls per request to each dependency are counted exactly, so
    // capacity reclaimed does not depend on timing.
    await writeFile(
      join(dir, 'tandem.config.yaml'),
      [
        'workloads:',
        '  - name: ranking',
        '    tier: ranking',
        `    arms: { control: { deploy: { command: "${command}", readyTimeout: 30s } }, treatment: { deploy: { command: "${command}", readyTimeout: 30s } } }`,
        '    dependencies:',
        `      - { name: features, env: FEATURES_URL, policy: isolated, target: "${stack.urls.features}" }`,
        `      - { name: gateway, env: INFERENCE_URL, policy: isolated, target: "${stack.urls.gateway}" }`,
        '    replay: { rate: 40, concurrency: 16, timeout: 5s, minAchievedShare: 0.3 }',
        // Six trials: a crossover needs 6 for 4 degrees of freedom once the slot bias is fitted; one process per arm keeps
        // the two cores (shared with the stack) from saturating.
        '    trials: { count: 6, warmup: 300ms, measure: 2s, processes: 1 }',
        '    harness: { minPoints: 20, responses: { ranking: { path: items, id: id, k: 10 } } }',
        'lattices:',
        '  - name: serving',
        '    services: { ranking: { maxLevel: 5 }, prediction: { maxLevel: 3 } }',
        '    qualityTarget: { maxNdcgLoss: 0.9, maxNoResultShare: 0.01 }',
        '    states:',
        '      - { name: L0, threshold: 0, levels: { ranking: 0, prediction: 0 } }',
        '      - { name: L1, threshold: 0.8, levels: { ranking: 2, prediction: 0 } }',
        '      - { name: L2, threshold: 0.9, levels: { ranking: 5, prediction: 2 } }',
        '',
      ].join('\n'),
    );
    const store = createLocalStore({ dir: join(dir, '.tandem') });
    await store.corpus.append(rankingCorpus(500));
    await store.close();
    const result = await runCli(['lattice', 'validate', '--lattice', 'serving', '--workload', 'ranking', '--json'], { cwd: dir });
    expect(result.out, `exit ${result.code}: ${result.err}`).toMatch(/^\{/);
    const validation = JSON.parse(result.out) as {
      ok: boolean;
      states: { state: string; capacityReclaimed: number; ndcgLoss: number; noResultShare: number; capacityMeasure: string }[];
      checks: { name: string; ok: boolean; detail: string }[];
    };
    expect(result.code, `${result.err}\n${JSON.stringify(validation.checks)}`).toBe(0);
    expect(validation.states.map((s) => s.state)).toEqual(['L1', 'L2']);
    const [l1, l2] = validation.states;
    expect(l1!.ndcgLoss).toBeGreaterThan(0);
    expect(l2!.ndcgLoss).toBeGreaterThan(l1!.ndcgLoss);
    // Router counts show the same calls per request at every level here, so each arm's CPU is the measure:
    // fewer multi-queries at ranking level 2, a tenth of the documents at 5.
    expect(l1!.capacityMeasure).toBe('cpu_per_request');
    expect(l1!.capacityReclaimed).toBeGreaterThan(0);
    expect(l2!.capacityReclaimed).toBeGreaterThan(0);
    // A tighter quality target than the states meet is reported as a broken promise.
    await writeFile(
      join(dir, 'tandem.config.yaml'),
      (await import('node:fs')).readFileSync(join(dir, 'tandem.config.yaml'), 'utf8').replace('maxNdcgLoss: 0.9', 'maxNdcgLoss: 0.0001'),
    );
    const tight = await runCli(['lattice', 'validate', '--lattice', 'serving', '--workload', 'ranking', '--states', 'L1'], { cwd: dir });
    expect(tight.code).toBe(1);
    expect(tight.out).toMatch(/FAIL L1 quality within target/);
  });
});

describe('lattice names', () => {
  it('must be unique across lattices', () => {
    const twice = LATTICE_YAML + LATTICE_YAML.split('\n').slice(1).join('\n');
    expect(() => parseConfigText(twice, 'lattice.yaml')).toThrow(/lattices\[1\]\.name must be unique, got "serving" \(also used by lattices\[0\]\)/);
  });
});

describe('tandem lattice validate --base', () => {
  it('validates only the states a change altered, and nothing when the change leaves the lattice alone', { timeout: 60_000 }, async () => {
    // A ranking service that drops its head results as its requested level rises.
    const server = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        const level = Number(/ranking=(\d+)/.exec(String(req.headers['x-tandem-levels'] ?? ''))?.[1] ?? 0);
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify({ items: Array.from({ length: 5 }, (_, i) => ({ id: `d${i + level}` })) }));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    onTestFinished(() => new Promise<void>((resolve) => server.close(() => resolve())));
    const url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
    const config = (l2: number): string[] => [
      'triggers: { latticeFiles: [tandem.config.yaml] }',
      'workloads:',
      '  - name: ranking',
      '    tier: ranking',
      `    arms: { control: { url: "${url}" }, treatment: { url: "${url}" } }`,
      '    replay: { rate: 50, concurrency: 8, minAchievedShare: 0.2 }',
      '    trials: { count: 2, warmup: 100ms, measure: 400ms }',
      '    harness: { minPoints: 5, responses: { ranking: { path: items, id: id, k: 5 } } }',
      'lattices:',
      '  - name: serving',
      '    services: { ranking: { maxLevel: 5 } }',
      '    qualityTarget: { maxNdcgLoss: 1, maxNoResultShare: 0.01 }',
      '    states:',
      '      - { name: L0, threshold: 0, levels: { ranking: 0 } }',
      '      - { name: L1, threshold: 0.8, levels: { ranking: 1 } }',
      `      - { name: L2, threshold: 0.9, levels: { ranking: ${l2} } }`,
    ];
    const corpus = Array.from({ length: 200 }, (_, i) => ({
      id: `r${i}`,
      tier: 'ranking',
      timeMs: Date.now() - 1_000,
      method: 'POST',
      path: '/rank',
      headers: { 'content-type': 'application/json' },
      body: Buffer.from(`{"q":${i}}`).toString('base64'),
      bodyTruncated: false,
      sampleRate: 1,
      sampleMode: 'uniform' as const,
    }));
    const dir = await tempProject(config(2), corpus, 'tandem-lattice-change-');
    const env = { ...process.env, GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@t', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@t' };
    const git = (...args: string[]): void => void execFileSync('git', args, { cwd: dir, env });
    git('init', '-q', '-b', 'main');
    await writeFile(join(dir, '.gitignore'), '.tandem/\n');
    git('add', '-A');
    git('commit', '-q', '-m', 'lattice');
    await writeFile(join(dir, 'tandem.config.yaml'), [...config(3), ''].join('\n'));
    git('commit', '-q', '-am', 'L2 degrades ranking further');
    const changed = await runCli(['lattice', 'validate', '--lattice', 'serving', '--workload', 'ranking', '--base', 'HEAD~1', '--json'], { cwd: dir });
    expect(changed.code, `${changed.err}\n${changed.out}`).toBe(0);
    expect(changed.err).toMatch(/candidate states changed by [0-9a-f]{12}\.\.[0-9a-f]{12}: L2/);
    const result = JSON.parse(changed.out) as { states: { state: string; ndcgLoss: number }[] };
    expect(result.states.map((s) => s.state)).toEqual(['L2']);
    expect(result.states[0]!.ndcgLoss).toBeGreaterThan(0);
    await writeFile(join(dir, 'README.md'), 'docs\n');
    git('add', 'README.md');
    git('commit', '-q', '-m', 'docs only');
    const untouched = await runCli(['lattice', 'validate', '--lattice', 'serving', '--workload', 'ranking', '--base', 'HEAD~1'], { cwd: dir });
    expect(untouched.code, untouched.err).toBe(0);
    expect(untouched.out).toMatch(/no state of lattice serving changed by .* for workload ranking: nothing to validate/);
    const both = await runCli(['lattice', 'validate', '--lattice', 'serving', '--workload', 'ranking', '--base', 'HEAD~1', '--states', 'L1'], { cwd: dir });
    expect(both.code).toBe(3);
    expect(both.err).toMatch(/--states or --base/);
  });
});
