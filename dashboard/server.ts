/**
 * `tandem serve`: the dashboard's HTTP server. Read-mostly: every page is a
 * read of the store (page-routes.ts); the two actions exist only with a
 * bearer token (action-routes.ts). Binds 127.0.0.1 unless told otherwise, and
 * there answers only requests whose Host names this server, so a page that
 * rebinds its own DNS name to 127.0.0.1 cannot read the dashboard.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { listenOn } from '../core/index.js';
import { dashboardAssets } from './assets.js';
import type { DashboardContext } from './context.js';
import { reply } from './http-replies.js';
import { actionRoutes } from './action-routes.js';
import { cachedReports, pageRoutes } from './page-routes.js';

export { SECURITY_HEADERS } from './http-replies.js';

export interface DashboardOptions {
  readonly host?: string;
  readonly port?: number;
  /** Actions need this token; without it the dashboard is read-only whatever `context.actions` holds. */
  readonly token?: string;
  /** How often a live experiment page polls the store (default 250 ms). */
  readonly livePollMs?: number;
  /** How often the live experiment list polls the store (default 1 s). */
  readonly listPollMs?: number;
}

export interface DashboardServer {
  readonly url: string;
  close(): Promise<void>;
}

const LOOPBACK = /^(127\.\d+\.\d+\.\d+|localhost|::1)$/i;

export async function startDashboard(context: DashboardContext, options: DashboardOptions = {}): Promise<DashboardServer> {
  const assets = await dashboardAssets();
  const host = options.host ?? '127.0.0.1';
  const actions = options.token ? context.actions : undefined;
  const ctx: DashboardContext = { ...context, report: cachedReports(context.report), actions };
  // Filled once the port is known. On a loopback address only this machine's names for it are answered;
  // listening wider was a choice to be reached by other names.
  let ownHost: (hostAndPort: string) => boolean = () => false;
  const pages = pageRoutes(ctx, assets, { livePollMs: options.livePollMs ?? 250, listPollMs: options.listPollMs ?? 1_000 });
  const act = actionRoutes(ctx, { token: options.token, actions, ownOrigin: (origin) => ownHost(origin) });
  const server: Server = createServer((req, res) => {
    if (!ownHost((req.headers.host ?? '').toLowerCase())) return reply(res, 421, 'text/plain; charset=utf-8', 'this server answers only to its own address (Host header)\n');
    const url = new URL(req.url ?? '/', 'http://dashboard');
    void (url.pathname.startsWith('/api/') ? act(req, res, url.pathname) : pages.route(req, res, url)).catch((error: unknown) => pages.fail(res, error));
  });
  await listenOn(server, options.port ?? 8700, host, 'dashboard');
  const { port } = server.address() as AddressInfo;
  const named = host.includes(':') ? `[${host}]` : host;
  if (LOOPBACK.test(host)) {
    const names = new Set([`${named}:${port}`, `127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`].map((h) => h.toLowerCase()));
    ownHost = (hostAndPort) => names.has(hostAndPort);
  } else ownHost = () => true;
  return {
    url: `http://${named}:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
