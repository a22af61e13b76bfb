/**
 * Recorded ranking requests sent straight to a ranking service at a set rate (open loop, as the capacity test
 * sends), for the probes that size a run to this host: the capacity test's rate (capacity-rate.ts) and the demo's
 * trial rate (examples/demo/request-cost.ts).
 */
import { request } from 'undici';
import type { CorpusRecord } from '../../core/model.js';
import type { Clock } from '../../core/clock.js';

export interface PacedRecords {
  /** Send `rate` records a second for `seconds`, and wait until every one has been answered. */
  send(rate: number, seconds: number): Promise<void>;
}

/** What a sender also does: headers on every request, and each answer seen (its status and body). */
export interface PacedOptions {
  readonly headers?: Readonly<Record<string, string>>;
  readonly onAnswer?: (record: CorpusRecord, status: number, body: string) => void;
}

/** A sender that takes the records in turn, from where its last `send` stopped, wrapping around. */
export function pacedRecords(
  rankingUrl: string,
  records: readonly CorpusRecord[],
  clock: Clock,
  signal?: AbortSignal,
  options: PacedOptions = {},
): PacedRecords {
  if (records.length === 0) throw new RangeError('pacedRecords needs at least one record');
  let next = 0;
  const sendOne = async (): Promise<void> => {
    const record = records[next++ % records.length]!;
    const response = await request(`${rankingUrl}${record.path}`, {
      method: record.method as 'POST',
      headers: { 'content-type': record.headers['content-type'] ?? 'application/json', ...options.headers },
      body: record.body === '' ? null : Buffer.from(record.body, 'base64'),
      headersTimeout: 5_000,
      bodyTimeout: 5_000,
      ...(signal ? { signal } : {}),
    });
    if (options.onAnswer) options.onAnswer(record, response.statusCode, await response.body.text());
    else await response.body.dump();
  };
  return {
    async send(rate, seconds) {
      const started = clock.monotonic();
      const sending: Promise<void>[] = [];
      for (let i = 0; i < Math.round(seconds * rate); i++) {
        const wait = started + (i * 1000) / rate - clock.monotonic();
        if (wait > 0) await clock.sleep(wait, signal);
        sending.push(sendOne());
      }
      await Promise.all(sending);
    },
  };
}
