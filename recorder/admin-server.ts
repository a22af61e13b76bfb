/**
 * A recorder's admin listener (the sidecar's and the collector's): `/metrics` in Prometheus text and `/healthz`,
 * on a port of its own so that no recorded path is shadowed.
 */
import { createServer, type Server } from 'node:http';
import type { Recorder } from './recorder.js';

export function adminServer(recorder: Recorder): Server {
  return createServer((req, res) => {
    void (async () => {
      if (req.url === '/metrics') {
        const text = await recorder.registry.metrics();
        res.writeHead(200, { 'content-type': recorder.registry.contentType });
        res.end(text);
      } else if (req.url === '/healthz') {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ ok: true, tier: recorder.tier, samplingRate: recorder.sampler.effectiveRate }));
      } else {
        res.writeHead(404).end();
      }
    })();
  });
}
