/**
 * Issue 71: `tandem collect` behind a real nginx. nginx samples and mirrors (the configuration
 * `tandem collect --print-nginx-config` prints); the collector records each copy once, redacted, marked as a
 * mirror's; a dead or stalled collector never fails a client of nginx. `npm run bench -- edge-mirror` measures cost.
 */
import { createServer as createHttpServer } from 'node:http';
import { request } from 'node:http';
import { connect, createServer as createTcpServer, type AddressInfo, type Socket } from 'node:net';
import { once } from 'node:events';
import { describe, expect, it, onTestFinished } from 'vitest';
import { freePort, systemClock, type CorpusRecord } from '../../core/index.js';
import { MIRROR_TOKEN_HEADER, nginxMirrorConfig, Recorder, startCollector, type Collector, type NginxMirrorOptions } from '../../recorder/index.js';
import type { CorpusStore } from '../../store/index.js';
import { catalogClient, startCatalog } from '../support/grpc-service.js';
import { jsonService } from '../support/json-service.js';
import { startNginx } from '../support/nginx.js';
import { pollUntil } from '../support/poll.js';
import { tempDir } from '../support/temp-dir.js';

function memoryCorpus(): { corpus: CorpusStore; stored: CorpusRecord[] } {
  const stored: CorpusRecord[] = [];
  const corpus = { append: async (batch: readonly CorpusRecord[]) => void stored.push(...batch) } as unknown as CorpusStore;
  return { corpus, stored };
}

async function collector(options: { rate?: number; edgeRate?: number; token?: string; stickyHeader?: string; trustedAddresses?: string[] } = {}) {
  const { corpus, stored } = memoryCorpus();
  const recorder = new Recorder({
    tier: 'edge',
    store: corpus,
    clock: systemClock,
    rate: options.rate ?? 1,
    mirroredAtRate: options.edgeRate ?? 1,
    log: () => undefined,
    ...(options.stickyHeader ? { stickyKey: { header: options.stickyHeader } } : {}),
  });
  const running: Collector = await startCollector({
    recorder,
    ...(options.token ? { token: options.token } : {}),
    ...(options.trustedAddresses ? { trustedAddresses: options.trustedAddresses } : {}),
  });
  onTestFinished(() => running.close());
  return { recorder, stored, running, port: Number(new URL(running.url).port) };
}

/** nginx in front of `upstream`, mirroring to `collectorPort` as the printed configuration says. */
async function edge(upstream: string, collectorPort: number, options: Partial<NginxMirrorOptions> = {}): Promise<string> {
  const port = await freePort();
  const config = nginxMirrorConfig({
    listen: { host: '127.0.0.1', port },
    upstream: { host: '127.0.0.1', port: Number(new URL(upstream).port) },
    collector: { host: '127.0.0.1', port: collectorPort },
    rate: 1,
    ...options,
  });
  const nginx = await startNginx(await tempDir('tandem-nginx-'), config, port);
  onTestFinished(() => nginx.stop());
  return `http://127.0.0.1:${port}`;
}

describe('tandem collect behind nginx', () => {
  it('records every mirrored request once, redacted, marked as a mirror copy, and the clients get the upstream answers', async () => {
    const upstream = await jsonService({ note: 'upstream' });
    const { recorder, stored, port } = await collector();
    const nginx = await edge(upstream, port);
    const n = 40;
    for (let i = 0; i < n; i++) {
      const post = i % 2 === 0;
      const response = await fetch(`${nginx}/item/${i}?q=${i}`, {
        method: post ? 'POST' : 'GET',
        headers: { authorization: 'Bearer SECRET-TOKEN-1', 'content-type': 'application/json' },
        ...(post ? { body: JSON.stringify({ password: 'hunter2', i }) } : {}),
      });
      expect(response.status).toBe(200);
      expect(await response.json()).toMatchObject({ item: i, note: 'upstream' });
    }
    await pollUntil(
      async () => recorder.accounting.sampled,
      (sampled) => sampled >= n,
      { what: 'the collector to receive every mirrored request' },
    );
    await recorder.flush();
    expect(stored.map((r) => r.path).sort()).toEqual(Array.from({ length: n }, (_, i) => `/item/${i}?q=${i}`).sort());
    for (const record of stored) {
      expect(record).toMatchObject({ sampleMode: 'mirror', sampleRate: 1, tier: 'edge' });
      expect(record.headers.authorization).toBe('[redacted]');
      if (record.method === 'POST') expect(JSON.parse(Buffer.from(record.body, 'base64').toString())).toMatchObject({ password: '[redacted]' });
    }
    expect(recorder.accounting).toMatchObject({ sampled: n, written: n, dropped: 0, buffered: 0 });
  });

  it('samples whole sessions at the edge by a header, and records the edge rate', async () => {
    const upstream = await jsonService();
    const { recorder, stored, port } = await collector({ edgeRate: 0.3, stickyHeader: 'x-session' });
    const nginx = await edge(upstream, port, { rate: 0.3, stickyHeader: 'x-session' });
    const sessions = 40;
    for (let round = 0; round < 3; round++)
      for (let s = 0; s < sessions; s++) {
        const response = await fetch(`${nginx}/item/${s}`, { headers: { 'x-session': `session-${s}` } });
        expect(response.status).toBe(200);
        await response.arrayBuffer();
      }
    // Which sessions nginx keeps is its hash's choice; all three requests of each kept one arrive.
    await pollUntil(
      async () => recorder.accounting.sampled,
      (sampled) => sampled > 0 && sampled % 3 === 0,
      { what: 'whole sessions' },
    );
    await recorder.flush();
    const perSession = new Map<string, number>();
    for (const record of stored) perSession.set(record.headers['x-session']!, (perSession.get(record.headers['x-session']!) ?? 0) + 1);
    expect([...perSession.values()].every((count) => count === 3)).toBe(true);
    // 30% of 40 sessions: a binomial draw, far inside (0, 40).
    expect(perSession.size).toBeGreaterThan(2);
    expect(perSession.size).toBeLessThan(30);
    expect(stored.every((r) => r.sampleRate === 0.3 && r.sampleMode === 'mirror')).toBe(true);
  });

  it('never fails a client of nginx when the collector is dead or stalled', async () => {
    const upstream = await jsonService({ note: 'ok' });
    // Dead: nothing listens on the collector's port.
    const dead = await edge(upstream, await freePort());
    // Stalled: connections are accepted and never answered.
    const held = new Set<Socket>();
    const stalled = createTcpServer((socket) => void held.add(socket.pause()));
    stalled.listen(0, '127.0.0.1');
    await once(stalled, 'listening');
    onTestFinished(() => {
      for (const socket of held) socket.destroy();
      stalled.close();
    });
    const stalledEdge = await edge(upstream, (stalled.address() as { port: number }).port, { collectorTimeoutMs: 100 });
    for (const base of [dead, stalledEdge])
      for (let i = 0; i < 10; i++) {
        const response = await fetch(`${base}/item/${i}`, { method: 'POST', body: 'x'.repeat(100) });
        expect(response.status).toBe(200);
        expect(await response.json()).toMatchObject({ item: i, note: 'ok' });
      }
    expect(held.size).toBeGreaterThan(0);
  });

  it('records only copies carrying the shared token when one is set, and never stores the token', async () => {
    const upstream = await jsonService();
    const token = 'a-shared-token-0123456789';
    const { recorder, stored, port, running } = await collector({ token });
    // An edge without the token: refused and counted.
    const withoutToken = await edge(upstream, port);
    await (await fetch(`${withoutToken}/item/1`)).arrayBuffer();
    await pollUntil(
      async () => (await (await fetch(`${running.adminUrl}/metrics`)).text()).match(/recorder_untrusted_total\{[^}]*\} (\d+)/)?.[1],
      (count) => count === '1',
      { what: 'the untrusted copy to be counted' },
    );
    const withToken = await edge(upstream, port, { token });
    await (await fetch(`${withToken}/item/2`)).arrayBuffer();
    await pollUntil(
      async () => recorder.accounting.sampled,
      (sampled) => sampled === 1,
    );
    await recorder.flush();
    expect(stored.map((r) => r.path)).toEqual(['/item/2']);
    expect(stored[0]!.headers[MIRROR_TOKEN_HEADER]).toBeUndefined();
    // A replay's own request mirrored back is never recorded.
    const replayed = await fetch(`${running.url}/item/3`, { headers: { [MIRROR_TOKEN_HEADER]: token, 'x-tandem-experiment': 'e1' } });
    expect(replayed.status).toBe(204);
    await recorder.flush();
    expect(stored.map((r) => r.path)).toEqual(['/item/2']);
    // A wrong token straight to the collector is refused too.
    expect((await fetch(`${running.url}/x`, { headers: { [MIRROR_TOKEN_HEADER]: 'a-shared-token-012345678X' } })).status).toBe(403);
  });

  it('records gRPC calls nginx mirrors with grpc_pass: the request and its metadata, no response (unknown at a mirror)', async () => {
    const service = await startCatalog();
    const { recorder, stored, port } = await collector();
    const nginx = await edge(`http://${service}`, port, { grpc: true });
    const client = catalogClient(new URL(nginx).host);
    const answers = await Promise.all(['1', '22', '333'].map((id) => client.lookup(id, { authorization: 'Bearer SECRET-TOKEN-2', 'x-user': 'u1' })));
    expect(answers.map((a) => a.item?.id)).toEqual(['1', '22', '333']);
    await pollUntil(
      async () => recorder.accounting.sampled,
      (sampled) => sampled === 3,
      { what: 'three mirrored calls' },
    );
    await recorder.flush();
    expect(stored).toHaveLength(3);
    for (const record of stored) {
      expect(record).toMatchObject({ method: 'POST', path: '/tandem.test.Catalog/Lookup', sampleMode: 'mirror' });
      expect(record.headers).toMatchObject({ authorization: '[redacted]', 'x-user': 'u1' });
      expect(record.grpc).toMatchObject({
        service: 'tandem.test.Catalog',
        method: 'Lookup',
        requestMessages: 1,
        responseMessages: [],
        responseTruncated: true,
        status: -1,
      });
    }
  });

  it('passes every request on to the service exactly as the client sent it, sampled or not', async () => {
    const received: string[] = [];
    const service = createHttpServer((req, res) => {
      received.push(`${req.method} ${req.url}`);
      req.resume();
      req.on('end', () => res.end('ok'));
    });
    service.listen(0, '127.0.0.1');
    await once(service, 'listening');
    onTestFinished(() => new Promise<void>((resolve) => service.close(() => resolve())));
    const upstream = `http://127.0.0.1:${(service.address() as AddressInfo).port}`;
    const { port } = await collector();
    const paths = ['/a%2Fb?x=%20y&x=2', '/c//d?', '/e/%7E/f;g?h=i#', '/%E2%82%AC'];
    // Raw request lines: fetch would normalize the paths before nginx saw them.
    const send = (base: string, path: string): Promise<string> =>
      new Promise((resolve, reject) => {
        const req = request(`${base}${path}`, { method: 'POST', path }, (res) => {
          res.resume();
          res.on('end', () => resolve(String(res.statusCode)));
        });
        req.on('error', reject);
        req.end('body');
      });
    for (const rate of [1, 0.0001]) {
      const nginx = await edge(upstream, port, { rate });
      received.length = 0;
      for (const path of paths) expect(await send(nginx, path)).toBe('200');
      expect(received).toEqual(paths.map((path) => `POST ${path}`));
    }
  });

  it('records only from the addresses it trusts, and counts a copy whose sender left mid-body as abandoned, not recorded', async () => {
    const elsewhere = await collector({ trustedAddresses: ['10.0.0.5'] });
    expect((await fetch(`${elsewhere.running.url}/x`)).status).toBe(403);
    // ::ffff:127.0.0.1 is 127.0.0.1: an IPv4 peer on a dual-stack socket is trusted as itself.
    const local = await collector({ trustedAddresses: ['::ffff:127.0.0.1'] });
    expect((await fetch(`${local.running.url}/x`)).status).toBe(204);
    const socket = connect(local.port, '127.0.0.1');
    await once(socket, 'connect');
    socket.write('POST /half HTTP/1.1\r\nhost: x\r\ncontent-length: 100\r\n\r\nonly part of it');
    // Its headers reached the collector (a decision was made for it); its body never ends.
    await pollUntil(
      async () => (await (await fetch(`${local.running.adminUrl}/metrics`)).text()).match(/recorder_forwarded_total\{[^}]*\} (\d+)/)?.[1],
      (forwarded) => forwarded === '2',
      { what: 'the half-sent copy to arrive' },
    );
    socket.destroy();
    await pollUntil(
      async () => local.recorder.accounting.abandoned,
      (abandoned) => abandoned === 1,
      { what: 'the copy to be counted as abandoned' },
    );
    await local.recorder.flush();
    expect(local.stored.map((r) => r.path)).toEqual(['/x']);
    expect(local.recorder.accounting).toMatchObject({ sampled: 1, written: 1, dropped: 0, buffered: 0, abandoned: 1 });
    expect(elsewhere.recorder.accounting.sampled).toBe(0);
  });
});
