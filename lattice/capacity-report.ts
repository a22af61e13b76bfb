/**
 * The capacity test's HTML page (HiLO Figure 6): traffic normalized to the
 * baseline, the product load-factor and the lattice state on one time axis,
 * then quality, stability and the no-result rate; self-contained, escaped.
 */
import { escapeHtml as e, lineChart } from '../harness/index.js';

import type { CapacityBucket, CapacitySummary } from './capacity-test.js';

export function renderCapacityHtml(input: {
  title: string;
  baselineRate: number;
  bucketMs: number;
  buckets: readonly CapacityBucket[];
  summary: CapacitySummary;
  states: readonly string[];
  ok: boolean;
}): string {
  const { buckets, summary } = input;
  const seconds = (b: CapacityBucket): number => b.startMs / 1000;
  const xDomain: [number, number] = [0, buckets.length > 0 ? seconds(buckets[buckets.length - 1]!) : 1];
  const traffic = buckets.map((b) => [seconds(b), (b.sent * 1000) / input.bucketMs / input.baselineRate] as const);
  const loadFactor = buckets.filter((b) => typeof b.productLoadFactor === 'number').map((b) => [seconds(b), b.productLoadFactor as number] as const);
  const state = buckets.filter((b) => b.state !== undefined).map((b) => [seconds(b), input.states.indexOf(b.state!)] as const);
  const top = Math.max(2, ...traffic.map((p) => p[1]), ...loadFactor.map((p) => p[1]), ...state.map((p) => p[1]));
  const timeline = lineChart(
    'traffic, load-factor and state over time',
    [
      { name: 'traffic (× baseline)', color: '#1f77b4', points: traffic },
      { name: 'product load-factor', color: '#ff7f0e', points: loadFactor },
      { name: `state (0 = ${input.states[0] ?? 'L0'})`, color: '#d62728', points: state },
    ],
    'seconds',
    { xDomain, yDomain: [0, top] },
  );
  const quality = lineChart(
    'quality, stability and no-result rate over time',
    [
      { name: 'quality (NDCG vs L0)', color: '#2ca02c', points: buckets.map((b) => [seconds(b), b.quality] as const) },
      { name: 'stability', color: '#9467bd', points: buckets.map((b) => [seconds(b), b.stability] as const) },
      { name: 'no-result rate', color: '#8c564b', points: buckets.map((b) => [seconds(b), b.noResultShare] as const) },
    ],
    'seconds',
    { xDomain, yDomain: [0, 1] },
  );
  const fmt = (ms: number | undefined): string => (ms === undefined ? 'not within the test' : `${(ms / 1000).toFixed(1)} s`);
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">
<title>${e(input.title)}</title>
<style>body{font:14px/1.45 system-ui,sans-serif;margin:24px auto;max-width:900px;color:#222;padding:0 16px}.good{color:#176f2c}.bad{color:#b00020}svg{max-width:100%;height:auto}td{padding:2px 8px}</style></head><body>
<h1><span class="${input.ok ? 'good' : 'bad'}">${input.ok ? 'within target' : 'outside target'}</span> ${e(input.title)}</h1>
<table>
<tr><td>peak reached</td><td>${e(summary.peakRateReached.toFixed(0))} req/s (${e((summary.peakRateReached / input.baselineRate).toFixed(2))}× baseline)</td></tr>
<tr><td>states</td><td>up to ${e(summary.maxState ?? 'n/a')}, final ${e(summary.finalState ?? 'n/a')}</td></tr>
<tr><td>active degradation / overload</td><td>${e(summary.activeDegradationMs / 1000)} s / ${e(summary.overloadDurationMs / 1000)} s</td></tr>
<tr><td>quality</td><td>baseline ${e(summary.baselineQuality.toFixed(3))}, largest rolling loss ${e(summary.maxQualityLoss.toFixed(3))}</td></tr>
<tr><td>no-result rate</td><td>max ${e((summary.maxNoResultShare * 100).toFixed(2))}%</td></tr>
<tr><td>recovery after the overload</td><td>quality ${e(fmt(summary.qualityRecoveryMs))}, stability ${e(fmt(summary.stabilityRecoveryMs))}</td></tr>
</table>
<h2>Traffic, load-factor and state</h2>${timeline}
<h2>Quality</h2>${quality}
</body></html>
`;
}
