/**
 * A closed-loop HTTP/1.1 client that keeps every request's latency: `URL SECONDS CONNECTIONS` prints
 * {requests, errors, p50Ms, p99Ms, p999Ms, maxMs}. wrk's latency summary over-weighted the rare requests a stalled
 * mirror held (its mean times its count exceeded the connections' whole time), so a p99 that depends on a few
 * slow requests is read here, where each request counts once. Bounded in time and in count.
 */
import { Agent, request } from 'node:http';

const [url, secondsText, connectionsText] = process.argv.slice(2);
if (!url?.startsWith('http://127.0.0.1:')) throw new Error(`load only 127.0.0.1, not ${url}`);
const seconds = Number(secondsText);
const connections = Number(connectionsText);
const MAX_REQUESTS = 2_000_000;
const latencies = new Float64Array(MAX_REQUESTS);
let count = 0;
let errors = 0;
const deadline = performance.now() + seconds * 1000;
const target = new URL(url);

async function loop(): Promise<void> {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  while (performance.now() < deadline && count < MAX_REQUESTS) {
    const start = performance.now();
    const ok = await new Promise<boolean>((resolve) => {
      const req = request({ host: target.hostname, port: target.port, path: `${target.pathname}${target.search}`, agent }, (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode === 200));
        res.on('error', () => resolve(false));
      });
      req.setTimeout(10_000, () => req.destroy());
      req.on('error', () => resolve(false));
      req.end();
    });
    if (!ok) errors++;
    if (count < MAX_REQUESTS) latencies[count++] = performance.now() - start;
  }
  agent.destroy();
}

await Promise.all(Array.from({ length: connections }, loop));
const sorted = latencies.slice(0, count).sort();
const at = (q: number): number => Number(sorted[Math.min(count - 1, Math.floor(q * count))]!.toFixed(3));
process.stdout.write(`${JSON.stringify({ requests: count, errors, p50Ms: at(0.5), p99Ms: at(0.99), p999Ms: at(0.999), maxMs: at(1) })}\n`);
