/**
 * `tandem serve`: the dashboard's HTTP server. Read-mostly: every page is a
 * read of the store (page-routes.ts); the two actions exist only with a
 * bearer token (action-routes.ts). Binds 127.0.0.1 unless told otherwise, and
 * on any address answers only requests whose Host names this server (its
 * loopback names, its listen address, the operator's `--allowed-host` names),
 * so a page that rebinds its own DNS name to this machine cannot read it.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { listenOn } from '../core/index.js';
import { dashboardAssets } from './assets.js';
import type { DashboardContext } from './context.js';
import { publicMessage, reply, replyJson, statusOf } from './http-replies.js';
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
  /**
   * Further names the dashboard answers to (`name` on its own port, or `name:port`), for a dashboard
   * reached through another name: a wider listen address, a tunnel, a reverse proxy.
   */
  readonly allowedHosts?: readonly string[];
}

export interface DashboardServer {
  readonly url: string;
  /** Every `Host` (and `Origin`) the dashboard answers to, as `name:port`. */
  readonly answersTo: readonly string[];
  close(): Promise<void>;
}

/** What `allowedHosts` may hold: a host name or a bracketed IPv6 address, each with an optional port. */
export const ALLOWED_HOST = /^(?:[a-z0-9](?:[a-z0-9-]{0,62})(?:\.[a-z0-9](?:[a-z0-9-]{0,62}))*|\[[0-9a-f:.]+\])(?::\d{1,5})?$/i;
/** Addresses that listen on every interface: they name no host of their own. */
const WILDCARD = /^(0\.0\.0\.0|::|0:0:0:0:0:0:0:0)$/;

/**
 * The `Host` values answered: this machine's loopback names, the listen address when it names a host, and
 * the operator's names. Whatever the listen address, a request under any other name is refused: a page
 * that rebinds its own DNS name to this machine would otherwise read the dashboard.
 */
export function dashboardHostNames(host: string, port: number, allowed: readonly string[] = []): string[] {
  const bracket = (h: string): string => (h.includes(':') && !h.startsWith('[') ? `[${h}]` : h);
  const names = [`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`];
  if (!WILDCARD.test(host)) names.unshift(`${bracket(host)}:${port}`);
  // Allowed names come validated (ALLOWED_HOST): a host name, or a bracketed IPv6 address, each with an optional port.
  for (const name of allowed) names.push(/:\d+$/.test(name) ? name : `${name}:${port}`);
  return [...new Set(names.map((n) => n.toLowerCase()))];
}
export async function startDashboard(context: DashboardContext, options: DashboardOptions = {}): Promise<DashboardServer> {
  const assets = await dashboardAssets();
  const host = options.host ?? '127.0.0.1';
  const actions = options.token ? context.actions : undefined;
  const ctx: DashboardContext = { ...context, report: cachedReports(context.report), actions };
  // Filled once the port is known (see dashboardHostNames).
  let ownHost: (hostAndPort: string) => boolean = () => false;
  const pages = pageRoutes(ctx, assets, { livePollMs: options.livePollMs ?? 250, listPollMs: options.listPollMs ?? 1_000 });
  const act = actionRoutes(ctx, { token: options.token, actions, ownOrigin: (origin) => ownHost(origin) });
  const server: Server = createServer((req, res) => {
    if (!ownHost((req.headers.host ?? '').toLowerCase()))
      return reply(res, 421, 'text/plain; charset=utf-8', 'this server answers only to its own address (Host header)\n');
    const url = new URL(req.url ?? '/', 'http://dashboard');
    if (url.pathname.startsWith('/api/')) {
      // An action's caller is a script: its errors are JSON too, never an HTML page.
      void act(req, res, url.pathname).catch((error: unknown) =>
        res.headersSent ? res.destroy() : replyJson(res, statusOf(error), { error: publicMessage(error, statusOf(error), ctx.log) }),
      );
    } else void pages.route(req, res, url).catch((error: unknown) => pages.fail(res, error));
  });
  await listenOn(server, options.port ?? 8700, host, 'dashboard');
  const { port } = server.address() as AddressInfo;
  const named = host.includes(':') ? `[${host}]` : host;
  const answersTo = dashboardHostNames(host, port, options.allowedHosts);
  const names = new Set(answersTo);
  ownHost = (hostAndPort) => names.has(hostAndPort);
  return {
    url: `http://${WILDCARD.test(host) ? '127.0.0.1' : named}:${port}`,
    answersTo,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
