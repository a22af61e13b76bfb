/**
 * The scorer's downstream: a feature store answering `GET /features?user=U` with a 32-number vector drawn from
 * the user's name, after a small fixed delay (a network hop).
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

const DIMENSIONS = 32;

export function userVector(user: string): number[] {
  let h = 2166136261;
  for (let i = 0; i < user.length; i++) h = Math.imul(h ^ user.charCodeAt(i), 16777619);
  return Array.from({ length: DIMENSIONS }, () => {
    h = Math.imul(h ^ (h >>> 13), 3266489917);
    return ((h >>> 0) % 2000) / 1000 - 1;
  });
}

export async function startFeatureStore(options: { readonly delayMs?: number } = {}): Promise<{ readonly url: string; close(): Promise<void> }> {
  const server: Server = createServer((request, response) => {
    const url = new URL(request.url ?? '/', 'http://feature-store');
    if (url.pathname !== '/features') {
      response.writeHead(404).end();
      return;
    }
    const body = JSON.stringify({ user: url.searchParams.get('user') ?? '', vector: userVector(url.searchParams.get('user') ?? '') });
    setTimeout(() => response.writeHead(200, { 'content-type': 'application/json' }).end(body), options.delayMs ?? 2);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}
