/**
 * Inference gateway: routes each model-evaluation batch to one prediction
 * shard, round robin, forwarding the caller's identity. Its `/infer` is the
 * shards' own API, so Tandem's router can stand in for it and pin an
 * experiment's batches to chosen shards.
 */
import type { Clock } from '../../core/clock.js';
import { InputError } from '../../core/errors.js'; // leaf import: see faults.ts
import { JsonClient } from './json-client.js';
import { HttpError, ServiceHost } from './service-host.js';

export interface GatewayServiceOptions {
  readonly shardUrls: readonly string[];
  readonly port?: number;
  readonly clock?: Clock;
  /** @default 5000 */
  readonly timeoutMs?: number;
}

export function createGatewayService(options: GatewayServiceOptions): ServiceHost {
  if (options.shardUrls.length === 0) throw new InputError('the gateway service needs PREDICTION_SHARDS (comma-separated prediction shard URLs)');
  const host = new ServiceHost({ name: 'gateway', port: options.port, clock: options.clock });
  const client = new JsonClient();
  let next = 0;
  host.route('POST /infer', async (request) => {
    if (request.body === undefined) throw new HttpError(400, 'body required');
    const shard = options.shardUrls[next++ % options.shardUrls.length]!;
    const body = await client.post<unknown>(`${shard}/infer`, request.body, {
      headers: request.forwardHeaders,
      signal: request.signal,
      timeoutMs: options.timeoutMs ?? 5_000,
    });
    return { body };
  });
  host.onClose(() => client.close());
  return host;
}
