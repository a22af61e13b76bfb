import { createServer, type IncomingHttpHeaders } from 'node:http';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { describe, expect, it, onTestFinished } from 'vitest';
import { systemClock, type Clock, type CorpusRecord } from '../../core/index.js';
import type { ArmDeployment } from '../../replayer/index.js';
import { prewarmArms } from '../../replayer/arm-prewarm.js';
import { simpleCorpus, stream } from '../support/corpus.js';

/** An arm on port 0 that records what it was sent and how many requests it held at once. */
async function countingArm(
  arm: 'control' | 'treatment',
  onRequest?: (seen: number) => void,
): Promise<{ deployment: ArmDeployment; seen: { path: string; headers: IncomingHttpHeaders }[]; maxInFlight: () => number }> {
  const seen: { path: string; headers: IncomingHttpHeaders }[] = [];
  let inFlight = 0;
  let maxInFlight = 0;
  const server = createServer((req, res) => {
    inFlight++;
    maxInFlight = Math.max(maxInFlight, inFlight);
    seen.push({ path: req.url ?? '', headers: req.headers });
    onRequest?.(seen.length);
    req.resume();
    // Answered on the next turn, so a second request sent meanwhile would be held at once with this one.
    setImmediate(() => {
      inFlight--;
      res.end('ok');
    });
  }).listen(0, '127.0.0.1');
  await once(server, 'listening');
  onTestFinished(() => {
    server.closeAllConnections();
    return new Promise<void>((resolve) => server.close(() => resolve()));
  });
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { deployment: { arm, url, slot: arm === 'control' ? 'A' : 'B', log: () => '', stop: async () => undefined }, seen, maxInFlight: () => maxInFlight };
}

const identity = {
  experimentId: 'exp-warm',
  trial: 3,
  attempt: 1,
  headerPrefix: 'x-tandem-',
  jobs: { control: 'exp-warm.control', treatment: 'exp-warm.treatment' },
};

describe('prewarmArms', () => {
  it("sends the trial's first records to both arms one at a time, with the trial's identity, skipping stored-truncated bodies", async () => {
    const [control, treatment] = await Promise.all([countingArm('control'), countingArm('treatment')]);
    const records: CorpusRecord[] = simpleCorpus(12).map((r, i) => (i === 1 ? { ...r, bodyTruncated: true } : r));
    const result = await prewarmArms(
      { control: control.deployment, treatment: treatment.deployment },
      { records: stream(records), count: 5, timeoutMs: 2_000, budgetMs: 60_000, identity, clock: systemClock },
    );
    expect(result).toEqual({ sent: 5, errors: 0 });
    // The first five whole records, in order (record 1's body was not stored), to each arm.
    for (const arm of [control, treatment]) {
      expect(arm.seen.map((s) => s.path)).toEqual(['/item/0', '/item/2', '/item/3', '/item/4', '/item/5']);
      expect(arm.maxInFlight()).toBe(1);
      expect(arm.seen[0]!.headers).toMatchObject({ 'x-tandem-experiment': 'exp-warm', 'x-tandem-trial': '3' });
    }
    expect(control.seen[0]!.headers['x-tandem-arm']).toBe('control');
    expect(treatment.seen[0]!.headers['x-tandem-arm']).toBe('treatment');
  });

  it('stops at its time budget, whatever its count', async () => {
    const [control, treatment] = await Promise.all([countingArm('control'), countingArm('treatment')]);
    // A clock that moves 10 ms every time it is read: the budget of 35 ms is spent after two records.
    let ms = 0;
    const stepping: Clock = { now: () => 1_700_000_000_000 + ms, monotonic: () => (ms += 10), sleep: systemClock.sleep };
    const result = await prewarmArms(
      { control: control.deployment, treatment: treatment.deployment },
      { records: stream(simpleCorpus(50)), count: 40, timeoutMs: 2_000, budgetMs: 35, identity, clock: stepping },
    );
    expect(result.sent).toBe(2);
    expect(control.seen).toHaveLength(2);
    expect(treatment.seen).toHaveLength(2);
  });

  it('ends early when told the trial beside it has ended: nothing more is sent, and what was sent is answered and counted', async () => {
    const trialEnded = new AbortController();
    // The trial beside ends while control holds the third record (its answer is still to come).
    const [control, treatment] = await Promise.all([countingArm('control', (seen) => seen === 3 && trialEnded.abort()), countingArm('treatment')]);
    const result = await prewarmArms(
      { control: control.deployment, treatment: treatment.deployment },
      {
        records: stream(simpleCorpus(50)),
        count: 40,
        timeoutMs: 2_000,
        budgetMs: 60_000,
        spacingMs: 1,
        until: trialEnded.signal,
        identity,
        clock: systemClock,
      },
    );
    expect(result).toEqual({ sent: 3, errors: 0 });
    expect(control.seen).toHaveLength(3);
    expect(treatment.seen).toHaveLength(3);
  });

  it('counts the requests an arm failed, and still sends its count', async () => {
    const control = await countingArm('control');
    // Treatment refuses every connection: a port nothing listens on (its server closed at once).
    const closed = createServer().listen(0, '127.0.0.1');
    await once(closed, 'listening');
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const treatment: ArmDeployment = { arm: 'treatment', url: `http://127.0.0.1:${port}`, slot: 'B', log: () => '', stop: async () => undefined };
    const result = await prewarmArms(
      { control: control.deployment, treatment },
      { records: stream(simpleCorpus(10)), count: 3, timeoutMs: 2_000, budgetMs: 60_000, identity, clock: systemClock },
    );
    expect(result).toEqual({ sent: 3, errors: 3 });
    expect(control.seen).toHaveLength(3);
  });
});
