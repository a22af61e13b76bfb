/**
 * Counters of the arms during a trial: each arm's Prometheus /metrics
 * scraped on an interval and, for deployed arms, the process's CPU time and
 * RSS, written as time series tagged with experiment, trial and arm.
 */
import { request } from 'undici';
import { parsePrometheusText, UpstreamError, type Clock, type Sample } from '../core/index.js';
import type { SampleStore } from '../store/index.js';
import { processStats } from './process-stats.js';
import type { ArmName } from './schedule.js';

export interface ScrapedArm {
  readonly arm: ArmName;
  readonly url: string;
  /** Local process of a deployed arm. */
  readonly pid?: number;
  /** Which of the arm's processes this is, when it runs several: its samples are labelled `tandem_process`. */
  readonly process?: number;
}

const processLabel = (process: number | undefined): Record<string, string> => (process !== undefined ? { tandem_process: String(process) } : {});

export interface CounterScraperOptions {
  readonly experimentId: string;
  readonly trial: number;
  readonly arms: readonly ScrapedArm[];
  readonly samples: SampleStore;
  readonly clock: Clock;
  /** @default 1000 */
  readonly intervalMs?: number;
  /** Path of the metrics endpoint; null when the arms have none. @default "/metrics" */
  readonly metricsPath?: string | null;
}

/** Scrape until `signal` aborts, then once more, so the window's end is covered. Returns failed scrapes. */
export async function scrapeCounters(options: CounterScraperOptions, signal: AbortSignal): Promise<{ scrapes: number; failures: number }> {
  let scrapes = 0;
  let failures = 0;
  const once = async (): Promise<void> => {
    const batch: Sample[] = [];
    await Promise.all(
      options.arms.map(async ({ arm, url, pid, process }) => {
        const timeMs = options.clock.now();
        const base = { experimentId: options.experimentId, trial: options.trial, arm, timeMs };
        const extra = processLabel(process);
        if (options.metricsPath !== null) {
          try {
            const response = await request(`${url}${options.metricsPath ?? '/metrics'}`, { headersTimeout: 2_000, bodyTimeout: 2_000 });
            const text = await response.body.text();
            if (response.statusCode !== 200) throw new UpstreamError(`status ${response.statusCode}`);
            for (const s of parsePrometheusText(text).samples) {
              const labels = { ...s.labels, ...extra };
              if (Number.isFinite(s.value)) batch.push({ ...base, metric: s.name, value: s.value, ...(Object.keys(labels).length > 0 ? { labels } : {}) });
            }
            scrapes++;
          } catch {
            failures++;
          }
        }
        if (pid !== undefined) {
          const stats = await processStats(pid);
          const labels = Object.keys(extra).length > 0 ? { labels: extra } : {};
          if (stats)
            batch.push(
              { ...base, metric: 'process_cpu_seconds', value: stats.cpuSeconds, ...labels },
              { ...base, metric: 'process_rss_bytes', value: stats.rssBytes, ...labels },
            );
        }
      }),
    );
    if (batch.length > 0) await options.samples.append(batch).catch(() => failures++);
  };
  while (!signal.aborted) {
    await once();
    try {
      await options.clock.sleep(options.intervalMs ?? 1_000, signal);
    } catch {
      break;
    }
  }
  await once();
  return { scrapes, failures };
}

/**
 * The CPU time of each deployed arm's process at one instant, stored as a `process_cpu_seconds` sample
 * labelled with `mark`: read when the measurement window starts and once its last response is in, so a
 * trial's CPU per request covers exactly the requests it measured (scrapes on an interval miss the edges by
 * up to a second, several percent of a short window).
 */
export async function markProcessCpu(
  options: Pick<CounterScraperOptions, 'experimentId' | 'trial' | 'arms' | 'samples' | 'clock'>,
  mark: 'measure-start' | 'measure-end',
): Promise<void> {
  const batch: Sample[] = [];
  await Promise.all(
    options.arms.map(async ({ arm, pid, process }) => {
      if (pid === undefined) return;
      const stats = await processStats(pid);
      if (stats)
        batch.push({
          experimentId: options.experimentId,
          trial: options.trial,
          arm,
          metric: 'process_cpu_seconds',
          timeMs: options.clock.now(),
          value: stats.cpuSeconds,
          labels: { mark, ...processLabel(process) },
        });
    }),
  );
  if (batch.length > 0) await options.samples.append(batch);
}
