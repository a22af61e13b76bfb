/**
 * The upstream of the recorder soak: answers deterministically (the same
 * request gets the same answer, so a proxied answer can be compared with a
 * direct one), resets on /reset, streams slowly on /slow, and on
 * /__outage?ms=N stops listening for N ms (new connections are refused).
 * Prints its URL.
 */
import { createHash } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

let port = 0;
const server = createServer((req, res) => {
  const url = new URL(req.url ?? '/', 'http://soak');
  const hash = createHash('sha256');
  let length = 0;
  req.on('data', (chunk: Buffer) => {
    hash.update(chunk);
    length += chunk.length;
  });
  req.on('error', () => undefined);
  req.on('end', () => {
    if (url.pathname === '/reset') return void req.socket.destroy();
    if (url.pathname === '/slow') {
      res.writeHead(200, { 'content-type': 'text/plain' });
      let sent = 0;
      const timer = setInterval(() => {
        if (res.destroyed || sent++ >= 20) {
          clearInterval(timer);
          return void res.end();
        }
        res.write('x'.repeat(1024));
      }, 10);
      return;
    }
    if (url.pathname === '/__outage') {
      res.end('ok');
      const ms = Math.min(5_000, Number(url.searchParams.get('ms') ?? 1_000));
      server.close();
      setTimeout(() => server.listen(port, '127.0.0.1'), ms);
      return;
    }
    const body = JSON.stringify({ url: req.url, method: req.method, length, sha256: hash.digest('hex') });
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
    res.end(body);
  });
});
server.keepAliveTimeout = 5_000;
server.listen(0, '127.0.0.1', () => {
  port = (server.address() as AddressInfo).port;
  process.stdout.write(`${JSON.stringify({ url: `http://127.0.0.1:${port}` })}\n`);
});
process.stdin.resume();
process.stdin.on('end', () => process.exit(0));
