/**
 * `npm run bench -- monitors`:
 * - reaction: a treatment with the malformed-tensor fault replayed against the
 *   example stack, an experiment-attributed detector (interval 500 ms,
 *   consecutive 2); time from the first violating check to the replay having
 *   stopped, over 20 runs (target: median <= one interval + 100 ms);
 * - scale: 200 concurrent experiments watching one source through shared
 *   pollers; scrapes per interval at the source (target: at most 1).
 */
import { createServer } from 'node:http';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { parseConfig, systemClock, type DetectorObservation } from '../core/index.js';
import { SharedSource, dependencyHealthDetector, experimentAttributedDetector, runMonitor } from '../guardrails/index.js';
import { pairedReplay } from '../replayer/index.js';
import { startService, startStack } from '../examples/stack/index.js';
import { rankingCorpus, stream } from '../test/support/corpus.js';
import { median } from './support/median.js';

const INTERVAL_MS = 500;

function detectorConfig(config: Record<string, unknown>) {
  return parseConfig({ workloads: [{ name: 'w', tier: 't', detectors: [{ name: 'd', ...config }] }] }).workloads[0]!.detectors[0]!;
}

export async function run(): Promise<void> {
  const stack = await startStack({ shards: 1, workersPerShard: 8, restartDelayMs: 50 });
  const faulty = await startService('ranking', {
    featuresUrl: stack.urls.features,
    inferenceUrl: stack.urls.gateway,
    faults: { malformedTensorModel: 'rank-video' },
  });
  const reactions: number[] = [];
  try {
    const corpus = rankingCorpus(3_000);
    for (let run = 0; run < 20; run++) {
      const experimentId = `bench-${run}`;
      const controller = new AbortController();
      const observations: DetectorObservation[] = [];
      const detector = experimentAttributedDetector(
        detectorConfig({ kind: 'experiment-attributed', source: `${stack.urls.shards[0]}/errors`, interval: `${INTERVAL_MS}ms`, consecutive: 2 }),
        {
          jobs: { control: `${experimentId}.control`, treatment: `${experimentId}.treatment` },
          sinceMs: Date.now(),
        },
      );
      const monitoring = runMonitor({ experimentId, detectors: [detector], clock: systemClock, controller, onObservation: (o) => observations.push(o) });
      await pairedReplay({
        records: stream(corpus),
        arms: { control: stack.urls.ranking, treatment: faulty.urls[0]! },
        ratePerSecond: 40,
        concurrency: 32,
        timeoutMs: 5_000,
        warmupMs: 0,
        measureMs: 30_000,
        seed: run,
        identity: {
          experimentId,
          trial: 0,
          attempt: 1,
          headerPrefix: 'x-tandem-',
          jobs: { control: `${experimentId}.control`, treatment: `${experimentId}.treatment` },
        },
        clock: systemClock,
        signal: controller.signal,
        onOutcome: () => undefined,
      });
      const stoppedMs = Date.now();
      const cancellation = await monitoring;
      const firstViolation = observations.find((o) => o.verdict === 'violation');
      if (!cancellation || !firstViolation) throw new Error(`run ${run}: the detector did not cancel the replay`);
      reactions.push(stoppedMs - firstViolation.timeMs);
    }
  } finally {
    await faulty.close();
    await stack.stop();
  }
  console.log(
    `reaction, first violating check to replay stopped (interval ${INTERVAL_MS} ms, consecutive 2): median ${median(reactions)} ms, max ${Math.max(...reactions)} ms over ${reactions.length} runs`,
  );

  let scrapes = 0;
  const source = createServer((_req, res) => {
    scrapes++;
    res.end('worker_restarts_total 0\n');
  }).listen(0, '127.0.0.1');
  await once(source, 'listening');
  const shared = new SharedSource(systemClock);
  const intervalMs = 200;
  const durationMs = 2_000;
  const config = detectorConfig({
    kind: 'dependency-health',
    source: `http://127.0.0.1:${(source.address() as AddressInfo).port}/metrics`,
    interval: `${intervalMs}ms`,
    maxDuration: `${durationMs}ms`,
    rule: { metric: 'worker_restarts_total' },
  });
  await Promise.all(
    Array.from({ length: 200 }, (_, i) =>
      runMonitor({
        experimentId: `scale-${i}`,
        detectors: [dependencyHealthDetector(config, systemClock, shared)],
        clock: systemClock,
        controller: new AbortController(),
      }),
    ),
  );
  await new Promise<void>((resolve) => source.close(() => resolve()));
  const intervals = durationMs / intervalMs + 1;
  const scrapesPerInterval = (scrapes - 1) / intervals; // minus the shared priming scrape
  console.log(`scale: 200 experiments, ${scrapes} scrapes over ${intervals} intervals (${scrapesPerInterval.toFixed(2)} per interval)`);
  const figures = {
    baseline: 'one detector interval plus 100 ms (reaction); one scrape per interval at the source (200 experiments sharing pollers)',
    reactionMedianMs: median(reactions),
    reactionMaxMs: Math.max(...reactions),
    intervalMs: INTERVAL_MS,
    reactionMedianMinusIntervalMs: median(reactions) - INTERVAL_MS,
    scaleExperiments: 200,
    scaleScrapes: scrapes,
    scaleScrapesPerInterval: Number(scrapesPerInterval.toFixed(2)),
  };
  console.log(
    JSON.stringify({
      bench: 'monitors',
      figures,
      targets: {
        reactionMedianMinusIntervalMs: { value: figures.reactionMedianMinusIntervalMs, max: 100 },
        scaleScrapesPerInterval: { value: figures.scaleScrapesPerInterval, max: 1 },
      },
    }),
  );
}
