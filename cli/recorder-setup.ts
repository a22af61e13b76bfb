/** What `tandem record` and `tandem collect` both make from the config: the store and the recorder writing into it. */
import { systemClock, UsageError } from '../core/index.js';
import { loadDescriptorSet } from '../net/index.js';
import { assertName, createStore, type Store } from '../store/index.js';
import { EXPERIMENT_HEADER, Recorder, rulesForTier, type RecorderOptions } from '../recorder/index.js';
import type { CliContext } from './cli-context.js';
import type { loadCommandConfig } from './cli-context.js';

type Config = Awaited<ReturnType<typeof loadCommandConfig>>['config'];

export function assertTier(tier: string): void {
  try {
    assertName(tier, '--tier');
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
}

/**
 * The store, opened, and a recorder for one tier with the config's redaction, limits and gRPC descriptors. The
 * descriptor set is read and checked before anything starts: a file that cannot be read is the config's error.
 */
export async function openRecorder(
  config: Config,
  ctx: CliContext,
  settings: Pick<RecorderOptions, 'tier' | 'rate' | 'stickyKey' | 'mirroredAtRate'>,
): Promise<{ store: Store; recorder: Recorder }> {
  const descriptors = config.recorder.grpc.descriptors;
  const grpcDescriptorSet = descriptors ? await loadDescriptorSet(descriptors, ctx.cwd, 'recorder.grpc.descriptors') : undefined;
  const store = createStore(config.store, { cwd: ctx.cwd, env: ctx.env });
  await store.init();
  const recorder = new Recorder({
    ...settings,
    store: store.corpus,
    clock: systemClock,
    redact: rulesForTier(config.recorder.redact, settings.tier),
    maxBodyBytes: config.recorder.maxBodyBytes,
    bufferRecords: config.recorder.bufferRecords,
    grpcWithoutResponses: config.recorder.grpc.withoutResponses,
    ...(grpcDescriptorSet ? { grpcDescriptorSet } : {}),
    // Replayed traffic is never recorded: the default header plus each workload's own identity prefix.
    skipHeaders: [...new Set([EXPERIMENT_HEADER, ...config.workloads.map((w) => `${w.replay.identityHeaderPrefix}experiment`)])],
    log: (line) => ctx.err(line),
  });
  return { store, recorder };
}

/** The line a recording command ends with: what it wrote and what it dropped, by reason. */
export function recordedSummary(recorder: Recorder, tier: string): string {
  const { written, dropped } = recorder.writer;
  const { withheld } = recorder.accounting;
  return `recorded ${written} requests of tier ${tier} (${withheld} with the body withheld: it could not be redacted); dropped ${dropped['queue-full']} (build queue full), ${dropped['buffer-full']} (buffer full), ${dropped['store-error']} (store errors), ${dropped['record-error']} (could not be recorded)`;
}
