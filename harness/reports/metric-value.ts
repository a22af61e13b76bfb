/** A metric's arm value with its unit, for the report tables: 512 MiB, 12.30 ms, 0.0012 cpu s/request. */
import type { MetricVerdict } from '../judge/verdict.js';

export function metricValue(m: Pick<MetricVerdict, 'scale' | 'unit'>, value: number): string {
  if (!Number.isFinite(value)) return 'n/a';
  if (m.unit === 'bytes' && Math.abs(value) >= 1_048_576) return `${(value / 1_048_576).toFixed(1)} MiB`;
  if (m.unit === 'bytes' && Math.abs(value) >= 1_024) return `${(value / 1_024).toFixed(1)} KiB`;
  const unit = m.unit === '' || m.unit === 'share' ? '' : ` ${m.unit}`;
  if (m.scale === 'absolute') return `${value.toFixed(4)}${unit}`;
  // Below 1, three significant digits for every value alike: decimals chosen per value showed a control of
  // 0.0099 cpu s/request beside a treatment of 0.01 (0.0102), hiding the +2.8% the row was about.
  if (Math.abs(value) < 1 && value !== 0) return `${value.toPrecision(3)}${unit}`;
  return `${value.toFixed(2)}${unit}`;
}
