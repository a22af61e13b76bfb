import { request as httpRequest } from 'node:http';
import { createServer as createNetServer, type AddressInfo, type Socket } from 'node:net';
import { once } from 'node:events';
import { describe, expect, it, onTestFinished } from 'vitest';
import { freePort } from '../../core/index.js';
import { pinnedShards } from '../../guardrails/index.js';
import { counters, raw, router, upstream } from '../support/router-harness.js';

describe('egress router', () => {
  it('pins an experiment to one of four shards: 10k calls reach only it, spread by nothing else', async () => {
    const shards = await Promise.all([0, 1, 2, 3].map(() => upstream()));
    const r = await router([{ name: 'prediction', policy: 'pinned', shards: shards.map((s) => s.url), pin: 1 }]);
    const url = r.urls.treatment.prediction!;
    for (let batch = 0; batch < 100; batch++) {
      await Promise.all(
        Array.from({ length: 100 }, (_, i) => fetch(`${url}/infer?n=${batch * 100 + i}`, { method: 'POST', body: '{"x":1}' }).then((res) => res.text())),
      );
    }
    const counts = shards.map((s) => s.seen.length);
    expect(counts.filter((n) => n === 10_000)).toHaveLength(1);
    expect(counts.reduce((a, b) => a + b)).toBe(10_000);
    const chosen = pinnedShards(
      shards.map((s) => s.url),
      1,
      7,
    )[0];
    expect(shards[counts.indexOf(10_000)]!.url).toBe(chosen);
    expect(counters(r, 'treatment', 'prediction')).toMatchObject({ calls: 10_000, errors: 0, policy: 'pinned', targets: [chosen] });
  });

  it('fails a call when the whole pinned subset is down, rather than spilling to other shards', async () => {
    const others = await Promise.all([0, 1].map(() => upstream()));
    const dead = [`http://127.0.0.1:${await freePort()}`, `http://127.0.0.1:${await freePort()}`];
    const r = await router([{ name: 'prediction', policy: 'pinned', shards: [...dead, ...others.map((o) => o.url)], pinned: dead }]);
    const response = await fetch(`${r.urls.control.prediction}/infer`, { method: 'POST', body: '{}' });
    expect(response.status).toBe(502);
    expect(response.headers.get('x-tandem-error')).toMatch(/prediction: upstream failed \(ECONNREFUSED\)/);
    expect(others.every((o) => o.seen.length === 0)).toBe(true);
  });

  it('sends isolated calls to the replica only, never to production', async () => {
    const production = await upstream();
    const replica = await upstream();
    const r = await router([{ name: 'features', policy: 'isolated', target: replica.url }]);
    for (let i = 0; i < 20; i++) expect((await fetch(`${r.urls.control.features}/features?i=${i}`)).status).toBe(200);
    expect(replica.seen).toHaveLength(20);
    expect(production.seen).toHaveLength(0);
  });

  it("tags every call with experiment identity and W3C baggage, keeping the caller's own baggage", async () => {
    const shared = await upstream();
    const r = await router([{ name: 'search', policy: 'shared', target: shared.url }]);
    r.setTrial(4);
    await fetch(`${r.urls.treatment.search}/q`, { headers: { baggage: 'userId=alice,tandem.arm=forged', 'x-tandem-record': 'rec-1' } });
    // node:http, because fetch refuses to send a Connection header.
    await new Promise<void>((resolve, reject) =>
      httpRequest(`${r.urls.control.search}/q`, { headers: { 'x-tandem-trial': '2', connection: 'keep-alive, x-drop-me', 'x-drop-me': 'secret' } }, (res) => {
        res.resume();
        res.on('end', resolve);
      })
        .on('error', reject)
        .end(),
    );
    expect(shared.seen[0]).toMatchObject({
      'x-tandem-experiment': 'exp-9',
      'x-tandem-arm': 'treatment',
      'x-tandem-trial': '4',
      'x-tandem-job': 'exp-9.treatment',
      'x-tandem-record': 'rec-1',
    });
    expect(shared.seen[0]!.baggage).toBe('userId=alice,tandem.experiment=exp-9,tandem.arm=treatment,tandem.trial=4,tandem.job=exp-9.treatment');
    expect(shared.seen[1]).toMatchObject({ 'x-tandem-arm': 'control', 'x-tandem-trial': '2' });
    expect(shared.seen[1]!['x-drop-me']).toBeUndefined();
  });

  it('owns every identity header and tandem.* baggage key: what the SUT forged never reaches the dependency', async () => {
    const shared = await upstream();
    const r = await router([{ name: 'search', policy: 'shared', target: shared.url }]);
    r.setTrial(4);
    await fetch(`${r.urls.treatment.search}/q`, {
      headers: {
        'x-tandem-trial': '9,tandem.job=prod',
        'X-Tandem-Job': 'prod',
        'x-tandem-write': '1',
        'x-tandem-record': 'a b,c',
        baggage: 'Tandem.job=prod, TANDEM.arm = control,userId=alice',
      },
    });
    const seen = shared.seen[0]!;
    expect(seen).toMatchObject({ 'x-tandem-trial': '4', 'x-tandem-job': 'exp-9.treatment', 'x-tandem-arm': 'treatment' });
    expect(seen['x-tandem-write']).toBeUndefined();
    expect(seen['x-tandem-record']).toBeUndefined();
    expect(seen.baggage).toBe('userId=alice,tandem.experiment=exp-9,tandem.arm=treatment,tandem.trial=4,tandem.job=exp-9.treatment');
  });

  it('blocks, tags or allows writes per dependency', async () => {
    const store = await upstream();
    const r = await router([
      { name: 'ledger', policy: 'shared', target: store.url, writes: 'block', writePaths: ['/refresh'] },
      { name: 'cache', policy: 'shared', target: store.url, writes: 'tag' },
      { name: 'logs', policy: 'shared', target: store.url, writes: 'allow' },
    ]);
    const blocked = await fetch(`${r.urls.control.ledger}/entries`, { method: 'POST', body: 'x' });
    expect(blocked.status).toBe(403);
    expect(blocked.headers.get('x-tandem-blocked')).toBe('ledger: POST /entries is a write, and this experiment blocks writes to it');
    expect((await fetch(`${r.urls.control.ledger}/refresh/model-7`, { method: 'PUT', body: 'x' })).status).toBe(403);
    expect((await fetch(`${r.urls.control.ledger}/entries`)).status).toBe(200);
    await fetch(`${r.urls.control.cache}/put`, { method: 'POST', body: 'x' });
    await fetch(`${r.urls.control.logs}/put`, { method: 'POST', body: 'x' });
    expect(store.paths).toEqual(['GET /entries', 'POST /put', 'POST /put']);
    expect(store.seen[1]!['x-tandem-write']).toBe('1');
    expect(store.seen[2]!['x-tandem-write']).toBeUndefined();
    expect(counters(r, 'control', 'ledger')).toMatchObject({ blocked: 2, calls: 3 });
  });

  it('refuses an absolute-form URI, a foreign Host and a redirect elsewhere; passes a same-origin redirect back through itself', async () => {
    const target = await upstream((req, res) => {
      if (req.url === '/away') res.writeHead(302, { location: 'http://evil.example/steal' }).end();
      else if (req.url === '/here') res.writeHead(302, { location: `/landing?x=1` }).end();
      else res.end('ok');
    });
    const r = await router([{ name: 'svc', policy: 'shared', target: target.url }]);
    const url = r.urls.control.svc!;
    const authority = new URL(url).host;
    expect(await raw(url, `GET http://evil.example/ HTTP/1.1\r\nHost: ${authority}\r\nConnection: close\r\n\r\n`)).toMatch(
      /^HTTP\/1\.1 403[\s\S]*absolute-form request URI/,
    );
    expect(await raw(url, `GET / HTTP/1.1\r\nHost: evil.example\r\nConnection: close\r\n\r\n`)).toMatch(
      /^HTTP\/1\.1 403[\s\S]*Host evil\.example is not this dependency/,
    );
    const away = await fetch(`${url}/away`, { redirect: 'manual' });
    expect(away.status).toBe(502);
    expect(away.headers.get('x-tandem-refused')).toContain('redirect to http://evil.example/steal is outside the allowed targets');
    const here = await fetch(`${url}/here`, { redirect: 'manual' });
    expect(here.status).toBe(302);
    expect(here.headers.get('location')).toBe('/landing?x=1');
    expect(target.paths).toEqual(['GET /away', 'GET /here']);
    expect(counters(r, 'control', 'svc').refused).toBe(3);
  });

  it('answers a hanging, a resetting and a garbage-speaking dependency in time, and keeps working', async () => {
    const held: Socket[] = [];
    const hanging = createNetServer((s) => held.push(s)).listen(0, '127.0.0.1');
    const resetting = createNetServer((s) => s.destroy()).listen(0, '127.0.0.1');
    const garbage = createNetServer((s) => s.end('NOT HTTP AT ALL\r\n\r\n')).listen(0, '127.0.0.1');
    await Promise.all([once(hanging, 'listening'), once(resetting, 'listening'), once(garbage, 'listening')]);
    onTestFinished(() => {
      for (const s of held) s.destroy();
      for (const server of [hanging, resetting, garbage]) server.close();
    });
    const at = (server: ReturnType<typeof createNetServer>): string => `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const healthy = await upstream();
    const r = await router([
      { name: 'hang', policy: 'shared', target: at(hanging), timeout: '300ms' },
      { name: 'reset', policy: 'shared', target: at(resetting) },
      { name: 'garbage', policy: 'shared', target: at(garbage) },
      { name: 'ok', policy: 'shared', target: healthy.url },
    ]);
    const hang = await fetch(`${r.urls.control.hang}/x`);
    expect(hang.status).toBe(504);
    expect(hang.headers.get('x-tandem-error')).toBe('hang: no answer within 300 ms');
    expect((await fetch(`${r.urls.control.reset}/x`)).status).toBe(502);
    expect((await fetch(`${r.urls.control.garbage}/x`)).status).toBe(502);
    expect((await fetch(`${r.urls.control.ok}/x`)).status).toBe(200);
    expect(
      r
        .snapshot()
        .filter((c) => c.arm === 'control')
        .map((c) => [c.dependency, c.errors]),
    ).toEqual([
      ['hang', 1],
      ['reset', 1],
      ['garbage', 1],
      ['ok', 0],
    ]);
  });

  it('counts fan-out: downstream calls per replayed request', async () => {
    const features = await upstream();
    const r = await router([{ name: 'features', policy: 'isolated', target: features.url }]);
    for (let record = 0; record < 10; record++) {
      for (let call = 0; call < 3; call++) await (await fetch(`${r.urls.treatment.features}/f`, { headers: { 'x-tandem-record': `rec-${record}` } })).text();
    }
    expect(counters(r, 'treatment', 'features')).toMatchObject({ calls: 30, replayedRequests: 10, fanOut: 3 });
    const latency = counters(r, 'treatment', 'features');
    expect(latency.latencyBuckets!.reduce((a, b) => a + b)).toBe(30);
  });

  it('streams request and response bodies through', async () => {
    const echo = await upstream((req, res) => {
      res.writeHead(200);
      req.pipe(res);
    });
    const r = await router([{ name: 'echo', policy: 'shared', target: echo.url, writes: 'allow' }]);
    const big = 'x'.repeat(3_000_000);
    const response = await new Promise<string>((resolve, reject) => {
      const req = httpRequest(`${r.urls.control.echo}/echo`, { method: 'POST' }, (res) => {
        let text = '';
        res.on('data', (c: Buffer) => (text += c.toString()));
        res.on('end', () => resolve(text));
      });
      req.on('error', reject);
      req.end(big);
    });
    expect(response.length).toBe(big.length);
  });
});
