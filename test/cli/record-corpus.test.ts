import { createServer } from 'node:http';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { tempDir } from '../support/temp-dir.js';
import { describe, expect, it, onTestFinished } from 'vitest';
import { formatGor } from '../../recorder/index.js';
import { runCli } from '../support/cli.js';

describe('tandem record and tandem corpus', () => {
  it('records through the sidecar until interrupted; corpus ls, show, export and prune see it', async () => {
    const dir = await tempDir();
    await writeFile(join(dir, 'tandem.config.yaml'), 'recorder: { redact: { headers: [x-secret] } }\n');
    const upstream = createServer((req, res) => {
      req.resume();
      req.on('end', () => res.end(`hello ${req.url}`));
    }).listen(0, '127.0.0.1');
    await once(upstream, 'listening');
    onTestFinished(() => new Promise<void>((resolve) => upstream.close(() => resolve())));
    const stop = new AbortController();
    const recording = runCli(
      ['record', '--tier', 'query', '--listen', ':0', '--upstream', `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`, '--rate', '1', '--json'],
      {
        cwd: dir,
        signal: stop.signal,
        onOut: async (text) => {
          const { url, adminUrl } = JSON.parse(text) as { url: string; adminUrl: string };
          for (let i = 0; i < 3; i++) expect(await (await fetch(`${url}/item/${i}?x=1`, { headers: { 'x-secret': 's' } })).text()).toBe(`hello /item/${i}?x=1`);
          expect(await (await fetch(`${adminUrl}/metrics`)).text()).toContain('recorder_forwarded_total{tier="query"} 3');
          stop.abort();
        },
      },
    );
    const result = await recording;
    expect(result.code).toBe(0);
    expect(result.err).toContain('recorded 3 requests of tier query');

    const ls = await runCli(['corpus', 'ls', '--json'], { cwd: dir });
    expect(JSON.parse(ls.out).tiers).toEqual([expect.objectContaining({ tier: 'query', count: 3 })]);
    const show = await runCli(['corpus', 'show', 'query', '--limit', '2'], { cwd: dir });
    expect(show.out).toContain('GET /item/0?x=1');
    expect(show.out).toContain('x-secret: [redacted]');
    expect(show.out).not.toContain('/item/2');
    const exported = await runCli(['corpus', 'export', 'query', '--out', 'query.ndjson'], { cwd: dir });
    expect(exported.code).toBe(0);
    expect((await readFile(join(dir, 'query.ndjson'), 'utf8')).trim().split('\n')).toHaveLength(3);
    expect((await stat(join(dir, 'query.ndjson'))).mode & 0o777).toBe(0o600);
    expect(JSON.parse((await runCli(['corpus', 'prune', '--older-than', '1h', '--json'], { cwd: dir })).out)).toMatchObject({ deleted: 0 });
    expect(JSON.parse((await runCli(['corpus', 'prune', '--older-than', '0s', '--json'], { cwd: dir })).out)).toMatchObject({ deleted: 3 });
  });

  it('imports HAR and .gor files, reporting what it skipped', async () => {
    const dir = await tempDir();
    const har = {
      log: {
        entries: [
          { startedDateTime: new Date().toISOString(), request: { method: 'GET', url: 'http://svc/a?q=1', headers: [] } },
          { startedDateTime: 'never', request: { method: 'GET', url: 'http://svc/b', headers: [] } },
        ],
      },
    };
    await writeFile(join(dir, 'capture.har'), JSON.stringify(har));
    const imported = await runCli(['corpus', 'import', 'capture.har', '--tier', 'svc'], { cwd: dir });
    expect(imported.code).toBe(0);
    expect(imported.out).toContain('imported 1 request(s) into tier svc from capture.har; skipped 1:');
    expect(imported.err).toContain('capture.har entry 1: startedDateTime is not a date');
    const old = Date.UTC(2020, 0, 1);
    await writeFile(
      join(dir, 'traffic.gor'),
      formatGor([
        {
          id: 'x',
          tier: 'svc',
          timeMs: old,
          method: 'POST',
          path: '/g',
          headers: { 'content-type': 'text/plain' },
          body: Buffer.from('hi').toString('base64'),
          bodyTruncated: false,
          sampleRate: 1,
          sampleMode: 'import',
        },
      ]),
    );
    expect((await runCli(['corpus', 'import', 'traffic.gor', '--tier', 'svc', '--rebase'], { cwd: dir })).code).toBe(0);
    const records = (await runCli(['corpus', 'show', 'svc', '--since', '1h', '--json'], { cwd: dir })).out
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { path: string });
    expect(records.map((r) => r.path).sort()).toEqual(['/a?q=1', '/g']);
  });

  it('answers bad arguments and bad files with exit 3 and a clear message', async () => {
    const dir = await tempDir();
    await writeFile(join(dir, 'broken.har'), '{"log": ');
    const cases: [string[], RegExp][] = [
      [['record', '--tier', 'q', '--listen', ':0', '--upstream', 'http://127.0.0.1:1', '--rate', '2'], /--rate must be a share of requests in \(0, 1\]/],
      [['record', '--tier', '../x', '--listen', ':0', '--upstream', 'http://127.0.0.1:1'], /--tier must be a name/],
      [['record', '--tier', 'q', '--listen', 'nowhere', '--upstream', 'http://127.0.0.1:1'], /--listen must be \[HOST\]:PORT or PORT/],
      [['record', '--tier', 'q', '--listen', ':0', '--upstream', 'ftp://x'], /--upstream must be an http/],
      [['record', '--tier', 'q', '--listen', ':0'], /required option '--upstream <url>'/],
      // Issue 32: credentials and query were dropped without a word.
      [['record', '--tier', 'q', '--listen', ':0', '--upstream', 'http://u:p@127.0.0.1:1/'], /--upstream must not carry credentials/],
      [['record', '--tier', 'q', '--listen', ':0', '--upstream', 'http://127.0.0.1:1/?q=1'], /--upstream must not have a query/],
      [['record', '--tier', 'q', '--listen', ':0', '--upstream', 'http://127.0.0.1:1/#f'], /--upstream must not have a fragment/],
      [['corpus', 'import', 'broken.har', '--tier', 'q'], /broken\.har: not a HAR file/],
      [['corpus', 'import', 'missing.har', '--tier', 'q'], /cannot read missing\.har/],
      [['corpus', 'import', 'file.txt', '--tier', 'q'], /--format must be har or gor/],
      [['corpus', 'show', 'q', '--since', 'yesterday'], /--since must be a duration/],
    ];
    for (const [args, message] of cases) {
      const result = await runCli(args, { cwd: dir });
      expect(result.code, args.join(' ')).toBe(3);
      expect(result.err, args.join(' ')).toMatch(message);
    }
  });
});
