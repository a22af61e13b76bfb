import { createServer } from 'node:net';
import { InternalError } from './errors.js';

/**
 * A port that was free on 127.0.0.1 a moment ago, for a process that must be
 * told its port before it starts (a deploy command's `{port}`). Servers we
 * start ourselves listen on port 0 instead.
 */
export async function freePort(host = '127.0.0.1'): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, host, resolve);
  });
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (address === null || typeof address === 'string') throw new InternalError('no port assigned');
  return address.port;
}
