import { describe, expect, it } from 'vitest';
import { armCpusOf } from '../../examples/demo/run-demo.js';
import { demoConfigText } from '../../examples/demo/demo-project.js';
import { parseConfigText } from '../../core/index.js';

describe('the demo puts both arms on one CPU', () => {
  it('takes the last CPU the process may run on, a container’s cpuset included, and none with one CPU', () => {
    expect(armCpusOf('Name:\tnode\nCpus_allowed:\t3\nCpus_allowed_list:\t0-1\n')).toEqual({ armCpus: '1', armStartCpus: ['0', '0'] });
    expect(armCpusOf('Cpus_allowed_list:\t2-3,6\n')).toEqual({ armCpus: '6', armStartCpus: ['2', '2'] });
    expect(armCpusOf('Cpus_allowed_list:\t4\n')).toEqual({});
    expect(armCpusOf('')).toEqual({});
  });

  it('writes the same CPU for both slots, where they start and that they start early, and the config accepts it', () => {
    const options = {
      backends: { store: 'local', queue: 'inline' } as const,
      dir: '/tmp/demo',
      featuresReplicaUrl: 'http://127.0.0.1:1',
      shardUrls: ['http://127.0.0.1:2'],
      grpcShardUrls: ['http://127.0.0.1:3'],
      pinnedShard: 0,
      minTrials: 4,
      maxTrials: 32,
      warmup: '2s',
      measure: '3s',
      rate: 30,
      recorderRate: 0.5,
    };
    const pinned = parseConfigText(demoConfigText({ ...options, armCpus: '1' }), 'demo.yaml');
    expect(pinned.workloads[0]?.trials.slotCpus).toEqual(['1', '1']);
    expect(pinned.workloads[0]?.trials.startCpus).toBeUndefined();
    expect(pinned.workloads[0]?.trials.prestart).toBe(false);
    // Started off the arms' CPU, they start during the previous trial's warm-up.
    const started = parseConfigText(demoConfigText({ ...options, armCpus: '1', armStartCpus: ['0', '0'] }), 'demo.yaml');
    expect(started.workloads[0]?.trials.startCpus).toEqual(['0', '0']);
    expect(started.workloads[0]?.trials.prestart).toBe(true);
    expect(parseConfigText(demoConfigText(options), 'demo.yaml').workloads[0]?.trials.slotCpus).toBeUndefined();
    // Start CPUs without the arms' CPU are not written, and neither is prestart (the config would refuse it).
    const unpinned = parseConfigText(demoConfigText({ ...options, armStartCpus: ['0', '0'] }), 'demo.yaml').workloads[0]?.trials;
    expect(unpinned?.prestart).toBe(false);
    expect(unpinned?.startCpus).toBeUndefined();
  });
});
