/** Issue 71: `tandem collect` as a user runs it: print the nginx part, run nginx with it, collect, read the corpus. */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { freePort } from '../../core/index.js';
import { runCli } from '../support/cli.js';
import { jsonService } from '../support/json-service.js';
import { startNginx } from '../support/nginx.js';
import { pollUntil } from '../support/poll.js';
import { tempDir } from '../support/temp-dir.js';

describe('tandem collect', () => {
  it('prints the nginx part, and records what that nginx mirrors into the configured store', async () => {
    const dir = await tempDir();
    await writeFile(join(dir, 'tandem.config.yaml'), 'recorder: { redact: { headers: [x-secret] } }\n');
    const upstream = await jsonService({ note: 'svc' });
    const [collectorPort, edgePort] = [await freePort(), await freePort()];
    const printed = await runCli(
      [
        'collect',
        '--print-nginx-config',
        '--listen',
        `127.0.0.1:${collectorPort}`,
        '--upstream',
        upstream,
        '--edge-listen',
        `127.0.0.1:${edgePort}`,
        '--rate',
        '1',
      ],
      { cwd: dir },
    );
    expect(printed.code).toBe(0);
    const nginx = await startNginx(join(dir, 'nginx'), printed.out, edgePort);
    onTestFinished(() => nginx.stop());
    const stop = new AbortController();
    const result = await runCli(['collect', '--tier', 'web', '--listen', `127.0.0.1:${collectorPort}`, '--rate', '1', '--json'], {
      cwd: dir,
      signal: stop.signal,
      onOut: async (text) => {
        const { adminUrl } = JSON.parse(text) as { adminUrl: string };
        for (let i = 0; i < 3; i++) {
          const response = await fetch(`http://127.0.0.1:${edgePort}/item/${i}`, { headers: { 'x-secret': 's' } });
          expect(await response.json()).toMatchObject({ item: i, note: 'svc' });
        }
        await pollUntil(
          async () => (await (await fetch(`${adminUrl}/metrics`)).text()).includes('recorder_sampled_total{tier="web"} 3'),
          (done) => done,
          { what: 'three mirrored copies' },
        );
        stop.abort();
      },
    });
    expect(result.code).toBe(0);
    expect(result.err).toContain('recorded 3 requests of tier web');
    expect((await runCli(['corpus', 'export', 'web', '--out', 'web.ndjson'], { cwd: dir })).code).toBe(0);
    const records = (await readFile(join(dir, 'web.ndjson'), 'utf8'))
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { path: string; headers: Record<string, string>; sampleMode: string });
    expect(records.map((r) => [r.path, r.headers['x-secret'], r.sampleMode]).sort()).toEqual([
      ['/item/0', '[redacted]', 'mirror'],
      ['/item/1', '[redacted]', 'mirror'],
      ['/item/2', '[redacted]', 'mirror'],
    ]);
  });

  it('samples below nginx’s 0.01% step at the collector, and says so in the printed part', async () => {
    const dir = await tempDir();
    const { out, code } = await runCli(['collect', '--print-nginx-config', '--listen', '9464', '--upstream', '127.0.0.1:8000', '--rate', '0.00001'], {
      cwd: dir,
    });
    expect(code).toBe(0);
    expect(out).toContain('    0.01% 1;');
    expect(out).toContain('which records 0.100 of them (run it with --rate 0.00001)');
    expect(out).toContain('proxy_pass http://tandem_collector$request_uri;');
  });

  it('refuses bad input with exit 3, naming what was wrong', async () => {
    const dir = await tempDir();
    const cases: [string[], NodeJS.ProcessEnv, string][] = [
      [['collect', '--listen', '0'], {}, 'collect needs --tier'],
      [['collect', '--tier', 'web', '--listen', '0', '--rate', '2'], {}, '--rate must be a share of requests in (0, 1]'],
      [
        ['collect', '--tier', 'web', '--listen', '0', '--trust', '10.0.0.1,nginx.local'],
        {},
        '--trust must be a comma-separated list of IP addresses, got "nginx.local"',
      ],
      [['collect', '--tier', '../x', '--listen', '0'], {}, '--tier'],
      [['collect', '--tier', 'web', '--listen', '0'], { TANDEM_COLLECT_TOKEN: 'short' }, 'TANDEM_COLLECT_TOKEN must be at least 16 printable characters'],
      [['collect', '--print-nginx-config', '--listen', '0'], {}, '--print-nginx-config needs --upstream'],
      [['collect', '--print-nginx-config', '--listen', '0', '--upstream', '127.0.0.1:80', '--sticky-header', 'x;y'], {}, 'not an HTTP header name: "x;y"'],
      [['collect', '--print-nginx-config', '--listen', '0', '--upstream', 'svc; evil'], {}, '--upstream must be [HOST]:PORT'],
    ];
    for (const [args, env, message] of cases) {
      const result = await runCli(args, { cwd: dir, env: { ...process.env, TANDEM_COLLECT_TOKEN: '', ...env } });
      expect({ args, code: result.code, err: result.err.includes(message) ? message : result.err }).toEqual({ args, code: 3, err: message });
    }
  });
});
