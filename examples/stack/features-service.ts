/** Feature service: feature vectors of documents for a viewer (FIRE Figure 1). */
import type { Clock } from '../../core/clock.js';
import { CATALOG_SIZE, FEATURES, documentFeatures } from './model.js';
import { HttpError, ServiceHost } from './service-host.js';

export interface FeaturesServiceOptions {
  readonly port?: number;
  readonly clock?: Clock;
  /** The feature store's throughput in documents per second (unlimited when absent): its capacity in capacity tests. */
  readonly docsPerSecond?: number;
}

export function createFeaturesService(options: FeaturesServiceOptions = {}): ServiceHost {
  const host = new ServiceHost({ name: 'features', port: options.port, clock: options.clock, unitsPerSecond: options.docsPerSecond });
  host.route('POST /features', async (request) => {
    const body = request.body as { viewer?: unknown; ids?: unknown } | undefined;
    if (!Number.isInteger(body?.viewer)) throw new HttpError(400, 'viewer must be an integer');
    const ids = body?.ids;
    if (!Array.isArray(ids) || ids.length > 10_000 || !ids.every((id) => Number.isInteger(id) && id >= 0 && id < CATALOG_SIZE)) {
      throw new HttpError(400, `ids must be a list of at most 10000 document ids in [0, ${CATALOG_SIZE})`);
    }
    const viewer = body!.viewer as number;
    await host.occupy(ids.length);
    const features = host.compute(() => (ids as number[]).map((id) => documentFeatures(id, viewer)));
    host.metrics.work.inc(ids.length * FEATURES);
    return { body: { features } };
  });
  return host;
}
