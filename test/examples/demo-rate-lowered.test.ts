import { describe, expect, it } from 'vitest';
import { demoConfigText } from '../../examples/demo/demo-project.js';
import { parseConfigText } from '../../core/index.js';

const options = {
  backends: { store: 'local', queue: 'inline' } as const,
  dir: '/tmp/demo',
  featuresReplicaUrl: 'http://127.0.0.1:1',
  shardUrls: ['http://127.0.0.1:2'],
  grpcShardUrls: ['http://127.0.0.1:3'],
  pinnedShard: 0,
  minTrials: 4,
  maxTrials: 48,
  warmup: '2s',
  measure: '3s',
  rate: 28,
  recorderRate: 0.5,
};

describe('the config the demo leaves after lowering its rate', () => {
  it('names the rate that held, and says in a comment which rate failed and what its trials achieved', () => {
    // The seventeenth host's run: asked for 100 pairs/s, the clean change's trials achieved 37.0–45.7 and it ran again at 28.
    const text = demoConfigText({ ...options, loweredFrom: { pairsPerSecond: 100, achieved: [37.04, 45.7], experimentId: 'exp-3e5e0c1d2b' } });
    expect(parseConfigText(text, 'demo.yaml').workloads[0]?.replay.rate).toBe(28);
    expect(text).toContain('# replay.rate lowered from 100: the trials of exp-3e5e0c1d2b achieved 37.0, 45.7 pairs/s');
    expect(demoConfigText(options)).not.toContain('lowered');
  });

  it('keeps an id that would end the comment line inside it: the config parses to the same workload', () => {
    const hostile = demoConfigText({ ...options, loweredFrom: { pairsPerSecond: 100, achieved: [40], experimentId: 'exp-1\n    replay: { rate: 100 }\n#' } });
    const plain = demoConfigText({ ...options, loweredFrom: { pairsPerSecond: 100, achieved: [40], experimentId: 'exp-1' } });
    expect(hostile.split('\n')).toHaveLength(plain.split('\n').length);
    expect(parseConfigText(hostile, 'demo.yaml').workloads[0]?.replay).toEqual(parseConfigText(plain, 'demo.yaml').workloads[0]?.replay);
  });
});
