/** Helpers of the router tests: upstreams on port 0 that log what reached them, routers from config, raw HTTP. */
import { createServer, type IncomingMessage, type RequestListener } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { once } from 'node:events';
import { onTestFinished } from 'vitest';
import { parseConfig, type DependencyConfig } from '../../core/index.js';
import { startRouter, type EgressRouter } from '../../guardrails/index.js';

export interface Upstream {
  readonly url: string;
  readonly seen: IncomingMessage['headers'][];
  readonly paths: string[];
}

export async function upstream(handler?: RequestListener): Promise<Upstream> {
  const seen: IncomingMessage['headers'][] = [];
  const paths: string[] = [];
  const server = createServer((req, res) => {
    seen.push(req.headers);
    paths.push(`${req.method} ${req.url}`);
    if (handler) return handler(req, res);
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => res.end(JSON.stringify({ got: Buffer.concat(chunks).toString(), url: req.url })));
  }).listen(0, '127.0.0.1');
  await once(server, 'listening');
  onTestFinished(() => {
    server.closeAllConnections();
    return new Promise<void>((resolve) => server.close(() => resolve()));
  });
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen, paths };
}

export function dependencies(list: unknown[]): DependencyConfig[] {
  return parseConfig({ workloads: [{ name: 'w', tier: 't', dependencies: list }] }).workloads[0]!.dependencies as DependencyConfig[];
}

export async function router(list: unknown[], seed = 7): Promise<EgressRouter> {
  const r = await startRouter({ experimentId: 'exp-9', seed, dependencies: dependencies(list) });
  onTestFinished(() => r.close());
  return r;
}

export function counters(r: EgressRouter, arm: string, dependency: string) {
  return r.snapshot().find((c) => c.arm === arm && c.dependency === dependency)!;
}

/** A raw HTTP/1.1 exchange, for requests fetch would refuse to send. */
export async function raw(url: string, text: string): Promise<string> {
  const { port } = new URL(url);
  const socket = connect(Number(port), '127.0.0.1');
  await once(socket, 'connect');
  socket.write(text);
  let out = '';
  socket.on('data', (c: Buffer) => (out += c.toString()));
  await once(socket, 'close');
  return out;
}
