/**
 * Start listening, or fail with an error that names the address: a busy port
 * given by a user (`--listen`, `--port`) is bad input (exit 3), not an
 * "unexpected error", and nothing is left holding the process open.
 */
import { once } from 'node:events';
import type { AddressInfo, Server } from 'node:net';
import { UsageError, errorMessage } from './errors.js';

export async function listenOn(server: Server, port: number, host: string, what: string): Promise<void> {
  server.listen(port, host);
  try {
    await once(server, 'listening');
  } catch (error) {
    server.close();
    const code = (error as NodeJS.ErrnoException).code;
    const why =
      code === 'EADDRINUSE'
        ? 'the address is in use'
        : code === 'EACCES'
          ? 'permission denied'
          : code === 'EADDRNOTAVAIL'
            ? 'no such local address'
            : errorMessage(error);
    throw new UsageError(`cannot listen on ${host}:${port} (${what}): ${why}`, { cause: error });
  }
}

/** `host:port`, an IPv6 host in brackets. */
export const hostPort = (host: string, port: number): string => `${host.includes(':') ? `[${host}]` : host}:${port}`;

/** The URL a listening server answers at. */
export function listeningUrl(server: Pick<Server, 'address'>, scheme = 'http'): string {
  const { address, port } = server.address() as AddressInfo;
  return `${scheme}://${hostPort(address, port)}`;
}
