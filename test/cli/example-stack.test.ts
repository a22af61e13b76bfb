import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { tempDir } from '../support/temp-dir.js';
import { describe, expect, it, onTestFinished } from 'vitest';
import { REPO_ROOT, runCli } from '../support/cli.js';

describe('tandem example-stack', () => {
  it('serves the stack until interrupted, then frees its ports', async () => {
    const stop = new AbortController();
    let urls: { query: string } | undefined;
    const running = runCli(['example-stack', '--json', '--shards', '2'], {
      cwd: await tempDir(),
      signal: stop.signal,
      onOut: (text) => {
        urls = (JSON.parse(text) as { urls: { query: string } }).urls;
        stop.abort();
      },
    });
    const result = await running;
    expect(result.code).toBe(0);
    expect(urls?.query).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    await expect(fetch(`${urls!.query}/healthz`)).rejects.toThrow();
  });

  it('plays bounded production traffic with --traffic', async () => {
    const result = await runCli(['example-stack', '--traffic', '100', '--duration', '500ms'], { cwd: await tempDir() });
    expect(result.code).toBe(0);
    expect(result.out).toMatch(/traffic: \d+ sent, \d+ ok, 0 failed, 0 dropped/);
  });

  it('runs one service from the environment, and says which variable is missing', async () => {
    const dir = await tempDir();
    const missing = await runCli(['example-stack', '--service', 'ranking'], { cwd: dir, env: {} });
    expect(missing.code).toBe(3);
    expect(missing.err).toContain('the ranking service needs FEATURES_URL');
    const bad = await runCli(['example-stack', '--service', 'nope'], { cwd: dir });
    expect(bad.code).toBe(3);
    expect((await runCli(['example-stack', '--faults', 'latency=x'], { cwd: dir })).code).toBe(3);
    const noThroughput = await runCli(['example-stack', '--service', 'features'], { cwd: dir, env: { FEATURES_DOCS_PER_SECOND: '0' } });
    expect(noThroughput.code).toBe(3);
    expect(noThroughput.err).toContain('FEATURES_DOCS_PER_SECOND must be a positive number of documents per second');
    const stop = new AbortController();
    const features = await runCli(['example-stack', '--service', 'features', '--json'], {
      cwd: dir,
      env: {},
      signal: stop.signal,
      onOut: async (text) => {
        const { urls } = JSON.parse(text) as { urls: string[] };
        const response = await fetch(`${urls[0]}/features`, { method: 'POST', body: JSON.stringify({ viewer: 1, ids: [1, 2] }) });
        expect(((await response.json()) as { features: number[][] }).features).toHaveLength(2);
        stop.abort();
      },
    });
    expect(features.code).toBe(0);
  });

  it('stops on SIGINT when run as a process', async () => {
    const child = spawn(process.execPath, [join(REPO_ROOT, 'bin', 'tandem.js'), 'example-stack', '--json'], {
      cwd: await tempDir(),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    onTestFinished(() => {
      if (child.exitCode === null) child.kill('SIGKILL');
    });
    const [line] = (await once(createInterface({ input: child.stdout! }), 'line')) as [string];
    const { urls } = JSON.parse(line) as { urls: { query: string } };
    expect((await fetch(`${urls.query}/healthz`)).status).toBe(200);
    const exited = once(child, 'exit');
    child.kill('SIGINT');
    expect((await exited)[0]).toBe(0);
    await expect(fetch(`${urls.query}/healthz`)).rejects.toThrow();
  });
});
