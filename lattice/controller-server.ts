/**
 * The controller's HTTP face: services POST their load-factor and GET the
 * levels assigned to them. Off the request path: services poll it, and keep
 * their local levels when it is unreachable (lattice/client.ts).
 *
 *   POST /load-factor  {"service": "ranking", "value": 0.93} (or an array)  → 202
 *   GET  /levels?scenario=web&priority=low                                  → {state, levels, decidedAtMs}
 *   GET  /decisions                                                          → the recent decisions
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { bearerCheck, listenOn, readBody, replyJson, type LatticeConfig } from '../core/index.js';
import type { LatticeController } from './controller.js';
import type { LoadFactors } from './load-factor.js';

export interface ControllerServer {
  readonly url: string;
  close(): Promise<void>;
}

export async function startControllerServer(options: {
  lattice: LatticeConfig;
  controller: LatticeController;
  loadFactors: LoadFactors;
  host?: string;
  port?: number;
  token?: string | undefined;
  recentDecisions?: () => readonly unknown[];
}): Promise<ControllerServer> {
  const authorized = bearerCheck(options.token);
  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const url = new URL(req.url ?? '/', 'http://controller');
    if (req.method === 'GET' && url.pathname === '/healthz') return replyJson(res, 200, { ok: true });
    if (req.method === 'GET' && url.pathname === '/levels') {
      const scenario = url.searchParams.get('scenario') ?? options.lattice.scenarios[0]!;
      if (!options.lattice.scenarios.includes(scenario)) return replyJson(res, 404, { error: `no scenario "${scenario}" in lattice ${options.lattice.name}` });
      const priority = url.searchParams.get('priority') ?? undefined;
      return replyJson(res, 200, {
        lattice: options.lattice.name,
        scenario,
        state: options.controller.state,
        levels: options.controller.levels(priority),
        decidedAtMs: options.controller.lastDecision?.timeMs ?? null,
      });
    }
    if (req.method === 'GET' && url.pathname === '/decisions')
      return replyJson(res, 200, options.recentDecisions?.() ?? (options.controller.lastDecision ? [options.controller.lastDecision] : []));
    if (url.pathname !== '/load-factor') return replyJson(res, 404, { error: 'not found' });
    if (req.method !== 'POST') return replyJson(res, 405, { error: 'use POST' });
    if (!authorized(req)) return replyJson(res, 401, { error: 'missing or wrong bearer token' });
    const text = await readBody(req, 65_536);
    if (text === undefined) return replyJson(res, 413, { error: 'body above 64 KiB' });
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      return replyJson(res, 400, { error: 'body must be JSON: {"service": "...", "value": 0.8} or an array of them' });
    }
    const reports = (Array.isArray(body) ? body : [body]).map((r) => (r ?? {}) as { service?: unknown; value?: unknown });
    // The whole batch is validated before any report is applied: one bad report applies none.
    for (const [i, { service, value }] of reports.entries()) {
      const problem = options.loadFactors.problem(service, value);
      if (problem !== undefined) return replyJson(res, 400, { error: `report ${i}: ${problem}; no report of this batch was applied` });
    }
    for (const { service, value } of reports) options.loadFactors.report(service as string, value as number);
    replyJson(res, 202, { accepted: reports.length });
  };
  const server: Server = createServer((req, res) => void handle(req, res).catch(() => res.destroy()));
  await listenOn(server, options.port ?? 0, options.host ?? '127.0.0.1', 'lattice controller');
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
