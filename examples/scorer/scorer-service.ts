/**
 * A plain JSON scoring service, written as a team new to Tandem would: no runtime flags, no CPU pinning, one
 * downstream call. `POST /score {user, items: [{id, tags}], k}` fetches the user's feature vector from the
 * feature store (`FEATURES_URL`), scores every item (a hashed embedding, a dot product, a logistic), and answers
 * the top k. `work` multiplies the scoring loop, about three fifths of a request's CPU: the verdict benches' "+5% CPU"
 * treatment is `work=1.08` (the bench prints the CPU effect it measured).
 *
 * It is not tuned for Tandem and must not be: the benches use it to show that the defaults decide on a service
 * Tandem was not tuned on (issue 68).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ScorerOptions {
  readonly port: number;
  readonly featuresUrl: string;
  /** Scoring work relative to the base build (1 = as shipped). */
  readonly work: number;
}

interface ScoreRequest {
  readonly user: string;
  readonly items: readonly { readonly id: string; readonly tags: readonly string[] }[];
  readonly k: number;
}

const DIMENSIONS = 32;
/** Embedding rounds per item at work 1: the service spends a few milliseconds of CPU per request. */
const ROUNDS = 48;
const MAX_BODY_BYTES = 1 << 20;

/**
 * A tag's embedding, rebuilt per request from its hash (no cache: the work is the point): `steps` hash-and-sine steps,
 * one dimension after the other. Counted in steps rather than whole rounds so the work is continuous in `work`
 * (whole rounds would round a small factor away); at a whole number of rounds it is the round-by-round embedding.
 */
function embed(tag: string, steps: number, into: Float64Array): void {
  let h = 2166136261;
  for (let i = 0; i < tag.length; i++) h = Math.imul(h ^ tag.charCodeAt(i), 16777619);
  const weight = DIMENSIONS / steps;
  for (let step = 0, d = 0; step < steps; step++) {
    h = Math.imul(h ^ (h >>> 15), 2246822519);
    into[d] = into[d]! + Math.sin(((h >>> 0) % 6283) / 1000) * weight;
    d = d === DIMENSIONS - 1 ? 0 : d + 1;
  }
}

/** The embedding steps per tag at a given work: proportional to it, at least one round. */
export function scoringSteps(work: number): number {
  return Math.max(DIMENSIONS, Math.round(ROUNDS * DIMENSIONS * work));
}

export function scoreItems(request: ScoreRequest, features: readonly number[], work: number): { id: string; score: number }[] {
  const steps = scoringSteps(work);
  const vector = new Float64Array(DIMENSIONS);
  const scored = request.items.map((item) => {
    vector.fill(0);
    for (const tag of item.tags) embed(tag, steps, vector);
    let dot = 0;
    for (let d = 0; d < DIMENSIONS; d++) dot += vector[d]! * (features[d] ?? 0);
    return { id: item.id, score: 1 / (1 + Math.exp(-dot)) };
  });
  return scored.sort((a, b) => b.score - a.score).slice(0, request.k);
}

function parseRequest(text: string): ScoreRequest {
  const value = JSON.parse(text) as Partial<ScoreRequest>;
  if (typeof value.user !== 'string' || !Array.isArray(value.items) || typeof value.k !== 'number') throw new Error('body must be {user, items, k}');
  return value as ScoreRequest;
}

async function readBody(request: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) throw new Error('body too large');
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

function reply(response: ServerResponse, status: number, body: unknown): void {
  response.writeHead(status, { 'content-type': 'application/json' });
  response.end(JSON.stringify(body));
}

export async function startScorer(options: ScorerOptions): Promise<{ readonly url: string; readonly server: Server }> {
  const server = createServer((request, response) => {
    if (request.method === 'GET' && request.url === '/healthz') return reply(response, 200, { ok: true });
    if (request.method !== 'POST' || request.url !== '/score') return reply(response, 404, { error: 'not found' });
    void (async () => {
      try {
        const body = parseRequest(await readBody(request));
        const answer = await fetch(`${options.featuresUrl}/features?user=${encodeURIComponent(body.user)}`);
        if (!answer.ok) return reply(response, 502, { error: `feature store answered ${answer.status}` });
        const { vector } = (await answer.json()) as { vector: number[] };
        reply(response, 200, { user: body.user, top: scoreItems(body, vector, options.work) });
      } catch (error) {
        reply(response, 400, { error: (error as Error).message });
      }
    })();
  });
  await new Promise<void>((resolve) => server.listen(options.port, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}
