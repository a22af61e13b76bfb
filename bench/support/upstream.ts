/** A trivial upstream for proxy benchmarks: answers every request with a small JSON body. Prints its URL. */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

const body = JSON.stringify({ items: Array.from({ length: 10 }, (_, i) => ({ id: i, score: 1 / (i + 1) })) });
const server = createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
    res.end(body);
  });
});
server.keepAliveTimeout = 30_000;
server.listen(Number(process.env.PORT ?? 0), '127.0.0.1', () => {
  process.stdout.write(`${JSON.stringify({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` })}\n`);
});
process.stdin.resume();
process.stdin.on('end', () => process.exit(0));
