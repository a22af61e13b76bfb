/** Helpers of the recorder tests: an upstream on port 0, a temp local store, a sidecar in front, raw requests. */
import { createServer, request as httpRequest, type RequestListener, type Server } from 'node:http';
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { onTestFinished } from 'vitest';
import { systemClock, type CorpusRecord } from '../../core/index.js';
import { createLocalStore, type CorpusStore } from '../../store/index.js';
import { Recorder, startSidecar, type RecorderOptions, type Sidecar, type SidecarOptions } from '../../recorder/index.js';

/** `configure` adds listeners before it listens (upgrades, expectations). */
export async function startServer(handler: RequestListener, configure?: (server: Server) => void): Promise<string> {
  const server = createServer(handler);
  configure?.(server);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  onTestFinished(() => {
    server.closeAllConnections();
    return new Promise<void>((resolve) => server.close(() => resolve()));
  });
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

export async function tempStore(): Promise<{ dir: string; store: ReturnType<typeof createLocalStore> }> {
  const dir = await mkdtemp(join(tmpdir(), 'tandem-recorder-'));
  onTestFinished(() => rm(dir, { recursive: true, force: true }));
  return { dir, store: createLocalStore({ dir: join(dir, '.tandem') }) };
}

export async function sidecarFor(
  upstream: string,
  corpus: CorpusStore,
  options: Partial<RecorderOptions> = {},
  sidecarOptions: Partial<SidecarOptions> = {},
): Promise<{ sidecar: Sidecar; recorder: Recorder; log: string[] }> {
  const log: string[] = [];
  const recorder = new Recorder({ tier: 'query', store: corpus, clock: systemClock, rate: 1, log: (line) => log.push(line), ...options });
  const sidecar = await startSidecar({ recorder, upstream, ...sidecarOptions });
  onTestFinished(() => sidecar.close());
  return { sidecar, recorder, log };
}

export async function records(corpus: CorpusStore, tier = 'query'): Promise<CorpusRecord[]> {
  const out: CorpusRecord[] = [];
  for await (const r of corpus.read(tier, { sinceMs: 0 })) out.push(r);
  return out;
}

/** A raw request through node:http, so nothing is normalized on the way out. */
export function rawRequest(
  url: string,
  options: { method: string; path: string; headers?: Record<string, string>; body?: string | Buffer },
): Promise<{ status: number; headers: Record<string, unknown>; body: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(`${url}${options.path}`, { method: options.method, headers: options.headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString() }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(options.body);
  });
}
