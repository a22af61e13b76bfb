/**
 * The dashboard's pages and their live streams, by path. Every page is a read
 * of the store; a finished experiment's report is judged once per version of
 * its record and kept for the next view.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { NotFoundError, type ExperimentRecord } from '../core/index.js';
import { escapeHtml as e, type ExperimentReport } from '../harness/index.js';
import type { Assets } from './assets.js';
import type { DashboardContext } from './context.js';
import { SECURITY_HEADERS, decodeSegment, experimentIdFrom, publicMessage, reply, replyJson, statusOf } from './http-replies.js';
import { page, type PageFrame } from './page-shell.js';
import { listBody, listRows, parseListRequest } from './list-page.js';
import { experimentBody, experimentContent, isFinished } from './experiment-page.js';
import { workloadBody, workloadsBody } from './workload-page.js';
import { changeBody, changesBody } from './change-page.js';
import { capacityBody } from './capacity-page.js';
import { streamRegion } from './live-stream.js';

export interface PageOptions {
  /** How often a live experiment page polls the store. */
  readonly livePollMs: number;
  /** How often the live experiment list polls the store. */
  readonly listPollMs: number;
}

const REPORT_CACHE = 32;

/** Reports judged once per (experiment, updatedAtMs), the latest 32 kept. */
export function cachedReports(report: (record: ExperimentRecord) => Promise<ExperimentReport>): (record: ExperimentRecord) => Promise<ExperimentReport> {
  const cache = new Map<string, Promise<ExperimentReport>>();
  return (record) => {
    const key = `${record.id}\u0000${record.updatedAtMs}`;
    let found = cache.get(key);
    if (!found) {
      found = report(record);
      found.catch(() => cache.delete(key));
      cache.set(key, found);
      if (cache.size > REPORT_CACHE) cache.delete(cache.keys().next().value!);
    }
    return found;
  };
}

type Page = Omit<PageFrame, 'actions' | 'storeKind'>;

export function pageRoutes(
  ctx: DashboardContext,
  assets: Assets,
  options: PageOptions,
): { route(req: IncomingMessage, res: ServerResponse, url: URL): Promise<void>; fail(res: ServerResponse, error: unknown): void } {
  const html = (res: ServerResponse, status: number, frame: Page): void =>
    reply(res, status, 'text/html; charset=utf-8', page({ ...frame, actions: ctx.actions !== undefined, storeKind: ctx.store.kind }, assets));

  async function experiment(segment: string): Promise<ExperimentRecord> {
    const id = experimentIdFrom(segment);
    const record = await ctx.store.experiments.get(id);
    if (!record) throw new NotFoundError(`no experiment ${JSON.stringify(id)} in this store`);
    return record;
  }

  const found = <T>(value: T | undefined, message: string): T => {
    if (value === undefined) throw new NotFoundError(message);
    return value;
  };

  /** The page at `path`, or undefined when there is none. */
  async function pageAt(segments: readonly string[], url: URL): Promise<Page | undefined> {
    const [first, second] = segments;
    if (url.pathname === '/') {
      const request = parseListRequest(url.searchParams);
      const [records, total] = await Promise.all([ctx.store.experiments.list(request.query), ctx.store.experiments.count(request.query)]);
      return {
        title: 'Experiments',
        section: '/',
        body: listBody(
          request,
          records,
          total,
          ctx.workloads.map((w) => w.name),
        ),
      };
    }
    if (segments.length === 2 && first === 'experiments') {
      const record = await experiment(second!);
      return { title: `${record.workload} ${record.id}`, section: '/', body: await experimentBody(ctx, record) };
    }
    if (segments.length === 1 && first === 'workloads') return { title: 'Workloads', section: '/workloads', body: await workloadsBody(ctx) };
    if (segments.length === 2 && first === 'workloads')
      return {
        title: `Workload ${second!}`,
        section: '/workloads',
        body: found(await workloadBody(ctx, second!), `no workload ${JSON.stringify(second!.slice(0, 100))} in the config or the store`),
      };
    if (segments.length === 1 && first === 'capacity') return { title: 'Capacity and lattice', section: '/capacity', body: await capacityBody(ctx) };
    if (segments.length === 1 && first === 'changes') return { title: 'Changes', section: '/changes', body: await changesBody(ctx) };
    if (segments.length === 2 && first === 'changes')
      return {
        title: `Change ${second!}`,
        section: '/changes',
        body: found(await changeBody(ctx, second!), `no experiment for change ${JSON.stringify(second!.slice(0, 100))}`),
      };
    return undefined;
  }

  async function route(req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> {
    if (req.method !== 'GET' && req.method !== 'HEAD') return reply(res, 405, 'text/plain; charset=utf-8', 'pages are read with GET\n', { allow: 'GET, HEAD' });
    const segments = url.pathname.split('/').slice(1).map(decodeSegment);
    if (url.pathname === '/healthz') return replyJson(res, 200, { ok: true });
    if (segments[0] === 'assets') return asset(res, url.pathname, assets);
    if (url.pathname === '/live/list') {
      const request = parseListRequest(url.searchParams);
      return streamRegion(req, res, async () => ({ html: listRows(await ctx.store.experiments.list(request.query)), done: false }), {
        clock: ctx.clock,
        intervalMs: options.listPollMs,
        headers: SECURITY_HEADERS,
      });
    }
    if (segments.length === 3 && segments[0] === 'live' && segments[1] === 'experiments') {
      const id = (await experiment(segments[2]!)).id;
      const region = async (): Promise<{ html: string; done: boolean }> => {
        const record = await experiment(id);
        return { html: await experimentContent(ctx, record), done: isFinished(record) };
      };
      return streamRegion(req, res, region, { clock: ctx.clock, intervalMs: options.livePollMs, headers: SECURITY_HEADERS });
    }
    const found = await pageAt(segments, url);
    if (!found) throw new NotFoundError(`no page at ${url.pathname.slice(0, 200)}`);
    html(res, 200, found);
  }

  function fail(res: ServerResponse, error: unknown): void {
    if (res.headersSent) {
      res.destroy();
      return;
    }
    const status = statusOf(error);
    const heading = status === 404 ? 'Not found' : status === 400 ? 'Bad request' : 'Error';
    const message = publicMessage(error, status, ctx.log);
    // Error pages go to whoever asked, found or not: no store path in the footer either.
    reply(
      res,
      status,
      'text/html; charset=utf-8',
      page(
        {
          title: heading,
          section: '/',
          body: `<h1>${heading}</h1><p class="bad">${e(message)}</p><p><a href="/">All experiments</a></p>`,
          actions: ctx.actions !== undefined,
        },
        assets,
      ),
    );
  }

  return { route, fail };
}

function asset(res: ServerResponse, path: string, assets: Assets): void {
  const match = /^\/assets\/dashboard\.([0-9a-f]{16})\.(js|css)$/.exec(path);
  const found = match ? (match[2] === 'js' ? assets.script : assets.style) : undefined;
  if (!found || found.hash !== match![1]) return reply(res, 404, 'text/plain; charset=utf-8', 'no such asset\n');
  reply(res, 200, found.type, found.body, { 'cache-control': 'public, max-age=31536000, immutable' });
}
