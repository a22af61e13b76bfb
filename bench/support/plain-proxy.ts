/**
 * The baseline a proxy is measured against: a minimal reverse proxy with
 * node:http and undici `Pool.stream()`, no recording. Prints its URL.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Pool } from 'undici';

const upstream = process.argv[2]!;
const pool = new Pool(upstream, { connections: 128, headersTimeout: 0, bodyTimeout: 0 });
const server = createServer((req, res) => {
  const { connection: _c, 'keep-alive': _k, 'transfer-encoding': _t, ...headers } = req.headers;
  pool
    .stream(
      {
        path: req.url ?? '/',
        method: (req.method ?? 'GET') as 'GET',
        headers,
        body: req.headers['content-length'] || req.headers['transfer-encoding'] ? req : null,
      },
      ({ statusCode, headers: h }) => {
        const { connection: _c2, 'keep-alive': _k2, 'transfer-encoding': _t2, ...out } = h as Record<string, string>;
        res.writeHead(statusCode, out);
        return res;
      },
    )
    .catch(() => req.socket.destroy());
});
server.keepAliveTimeout = 30_000;
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`${JSON.stringify({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` })}\n`);
});
process.stdin.resume();
process.stdin.on('end', () => process.exit(0));
