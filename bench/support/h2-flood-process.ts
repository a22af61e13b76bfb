/**
 * `h2-flood-process.ts PORT CONNECTIONS STREAMS`: an HTTP/2 rapid reset at 127.0.0.1:PORT in its own process
 * (test/support/h2-rapid-reset.ts, each stream's RST_STREAM once the server had a turn to read its HEADERS), so the
 * bench's own event loop times legitimate calls undisturbed. Prints {"streamsSent", "ms"} when done.
 */
import { rapidReset } from '../../test/support/h2-rapid-reset.js';

const [port, connections, streams] = process.argv.slice(2).map(Number);
const started = performance.now();
const { streamsSent } = await rapidReset({
  port: port!,
  connections: connections!,
  streamsPerConnection: streams!,
  path: '/bench.Flood/Call',
  frameByFrame: true,
});
process.stdout.write(`${JSON.stringify({ streamsSent, ms: Math.round(performance.now() - started) })}\n`);
process.exit(0);
