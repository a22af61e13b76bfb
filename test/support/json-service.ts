import { createServer, type Server } from 'node:http';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { onTestFinished } from 'vitest';

/** A JSON service for replays; `failEvery` answers 500 for every n-th item of /item/N. Closed when the test ends. */
export async function jsonService(options: { failEvery?: number; note?: string } = {}): Promise<string> {
  const server: Server = createServer((req, res) => {
    const item = Number(/\/item\/(\d+)/.exec(req.url ?? '')?.[1] ?? -1);
    if (options.failEvery !== undefined && item % options.failEvery === 0) {
      res.statusCode = 500;
      return res.end('{"error":"boom"}');
    }
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({ item, note: options.note ?? '', servedAt: process.hrtime.bigint().toString() }));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  onTestFinished(() => {
    server.closeAllConnections();
    return new Promise<void>((resolve) => server.close(() => resolve()));
  });
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}
