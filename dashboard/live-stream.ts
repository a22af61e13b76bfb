/**
 * Server-sent events for the live regions: the server polls the store (any
 * process, any machine may be writing to it) and pushes the region's HTML
 * whenever it changed; `end` tells the page to stop listening. The poll
 * sleeps on the injected clock, and stops when the browser goes away.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Clock } from '../core/index.js';

export interface LiveRegion {
  readonly html: string;
  /** Nothing more will change (the experiment ended). */
  readonly done: boolean;
}

/** A comment line now and then keeps proxies and idle timeouts from closing a quiet stream. */
const HEARTBEAT_MS = 15_000;

export async function streamRegion(
  req: IncomingMessage,
  res: ServerResponse,
  render: () => Promise<LiveRegion>,
  options: { clock: Clock; intervalMs: number; headers: Readonly<Record<string, string>> },
): Promise<void> {
  const gone = new AbortController();
  req.once('close', () => gone.abort());
  res.once('close', () => gone.abort());
  res.writeHead(200, { ...options.headers, 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-store', connection: 'keep-alive' });
  res.write('retry: 2000\n\n');
  let last: string | undefined;
  let quietSince = options.clock.monotonic();
  while (!gone.signal.aborted) {
    let region: LiveRegion;
    try {
      region = await render();
    } catch (error) {
      // A store that fails now may answer on the next poll; the page keeps what it shows.
      res.write(
        `: store unavailable: ${String((error as Error).message)
          .replace(/[\r\n]+/g, ' ')
          .slice(0, 200)}\n\n`,
      );
      region = { html: last ?? '', done: false };
    }
    if (region.html !== last) {
      res.write(`event: fragment\ndata: ${JSON.stringify({ html: region.html })}\n\n`);
      last = region.html;
      quietSince = options.clock.monotonic();
    } else if (options.clock.monotonic() - quietSince >= HEARTBEAT_MS) {
      res.write(': still here\n\n');
      quietSince = options.clock.monotonic();
    }
    if (region.done) {
      res.end('event: end\ndata: {}\n\n');
      return;
    }
    try {
      await options.clock.sleep(options.intervalMs, gone.signal);
    } catch {
      break;
    }
  }
  res.end();
}
