/**
 * Query and aggregation: receives a product request (surface, viewer, query),
 * assembles the candidate set for the surface, asks ranking, and returns the
 * ranked list. Surfaces differ in candidate-set size: `home` is heavy,
 * `search` light (FIRE §2: tiers differ in request mix and fan-out).
 */
import type { Clock } from '../../core/clock.js';
import { candidateSet } from './model.js';
import { HttpError, ServiceHost } from './service-host.js';
import { JsonClient } from './json-client.js';
import type { RankedItem } from './ranking-service.js';

/** Candidate-set size per surface. */
export const SURFACES: Readonly<Record<string, number>> = { home: 200, video: 120, search: 60 };

export interface QueryServiceOptions {
  readonly rankingUrl: string;
  readonly port?: number;
  readonly clock?: Clock;
  /** @default 5000 */
  readonly timeoutMs?: number;
}

export interface RecommendRequest {
  readonly surface: string;
  readonly viewer: number;
  readonly query?: string;
  readonly k?: number;
}

export interface RecommendResponse {
  readonly surface: string;
  readonly items: readonly RankedItem[];
  readonly levels: { readonly ranking: number; readonly prediction: number | null };
}

export function createQueryService(options: QueryServiceOptions): ServiceHost {
  const host = new ServiceHost({ name: 'query', port: options.port, clock: options.clock });
  const client = new JsonClient();
  host.route('POST /recommend', async (request) => {
    const body = request.body as Partial<RecommendRequest> | undefined;
    const size = typeof body?.surface === 'string' ? SURFACES[body.surface] : undefined;
    if (size === undefined) throw new HttpError(400, `surface must be one of ${Object.keys(SURFACES).join(', ')}`);
    if (!Number.isInteger(body!.viewer) || (body!.viewer as number) < 0) throw new HttpError(400, 'viewer must be a non-negative integer');
    const query = body!.query ?? '';
    if (typeof query !== 'string' || query.length > 512) throw new HttpError(400, 'query must be a string of at most 512 characters');
    const candidates = host.compute(() => candidateSet(body!.surface!, query, body!.viewer!, size));
    const ranked = await client.post<{ items: RankedItem[]; level: number; predictionLevel: number | null }>(
      `${options.rankingUrl}/rank`,
      { surface: body!.surface, viewer: body!.viewer, query, candidates, k: body!.k ?? 10 },
      { headers: request.forwardHeaders, signal: request.signal, timeoutMs: options.timeoutMs ?? 5_000 },
    );
    const response: RecommendResponse = {
      surface: body!.surface!,
      items: ranked.items,
      levels: { ranking: ranked.level, prediction: ranked.predictionLevel },
    };
    return { body: response };
  });
  host.onClose(() => client.close());
  return host;
}
