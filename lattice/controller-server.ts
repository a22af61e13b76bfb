/**
 * The controller's HTTP face: services POST their load-factor and GET the
 * levels assigned to them. Off the request path: services poll it, and keep
 * their local levels when it is unreachable (lattice/client.ts).
 *
 *   POST /load-factor  {"service": "ranking", "value": 0.93} (or an array)  → 202
 *   GET  /levels?scenario=web&priority=low                                  → {state, levels, decidedAtMs}
 *   GET  /decisions                                                          → the recent decisions
 */
import { createServer, type Server } from 'node:http';
import { once } from 'node:events';
import { timingSafeEqual } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import type { LatticeConfig } from '../core/index.js';
import type { LatticeController } from './controller.js';
import type { LoadFactors } from './load-factor.js';

export interface ControllerServer {
  readonly url: string;
  close(): Promise<void>;
}

export async function startControllerServer(options: { lattice: LatticeConfig; controller: LatticeController; loadFactors: LoadFactors; host?: string; port?: number; token?: string | undefined; recentDecisions?: () => readonly unknown[] }): Promise<ControllerServer> {
  const expected = options.token ? Buffer.from(`Bearer ${options.token}`) : undefined;
  const server: Server = createServer((req, res) => {
    const reply = (status: number, body: unknown): void => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    const url = new URL(req.url ?? '/', 'http://controller');
    if (req.method === 'GET' && url.pathname === '/healthz') return reply(200, { ok: true });
    if (req.method === 'GET' && url.pathname === '/levels') {
      const scenario = url.searchParams.get('scenario') ?? options.lattice.scenarios[0]!;
      if (!options.lattice.scenarios.includes(scenario)) return reply(404, { error: `no scenario "${scenario}" in lattice ${options.lattice.name}` });
      const priority = url.searchParams.get('priority') ?? undefined;
      return reply(200, { lattice: options.lattice.name, scenario, state: options.controller.state, levels: options.controller.levels(priority), decidedAtMs: options.controller.lastDecision?.timeMs ?? null });
    }
    if (req.method === 'GET' && url.pathname === '/decisions') return reply(200, options.recentDecisions?.() ?? (options.controller.lastDecision ? [options.controller.lastDecision] : []));
    if (url.pathname !== '/load-factor') return reply(404, { error: 'not found' });
    if (req.method !== 'POST') return reply(405, { error: 'use POST' });
    if (expected) {
      const given = Buffer.from(req.headers.authorization ?? '');
      if (given.length !== expected.length || !timingSafeEqual(given, expected)) return reply(401, { error: 'missing or wrong bearer token' });
    }
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= 65_536) chunks.push(chunk);
    });
    req.on('end', () => {
      if (size > 65_536) return reply(413, { error: 'body above 64 KiB' });
      let body: unknown;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      } catch {
        return reply(400, { error: 'body must be JSON: {"service": "...", "value": 0.8} or an array of them' });
      }
      const reports = Array.isArray(body) ? body : [body];
      for (const [i, r] of reports.entries()) {
        const { service, value } = (r ?? {}) as { service?: unknown; value?: unknown };
        if (typeof service !== 'string' || typeof value !== 'number') return reply(400, { error: `report ${i}: needs "service" (string) and "value" (number)` });
        try {
          options.loadFactors.report(service, value);
        } catch (error) {
          return reply(400, { error: `report ${i}: ${(error as Error).message}` });
        }
      }
      return reply(202, { accepted: reports.length });
    });
  });
  server.listen(options.port ?? 0, options.host ?? '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${options.host ?? '127.0.0.1'}:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
