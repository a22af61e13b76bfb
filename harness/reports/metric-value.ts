/** A metric's arm value with its unit, for the report tables: 512 MiB, 12.30 ms, 0.0012 cpu s/request. */
import type { MetricVerdict } from '../verdict.js';

export function metricValue(m: Pick<MetricVerdict, 'scale' | 'unit'>, value: number): string {
  if (!Number.isFinite(value)) return 'n/a';
  if (m.unit === 'bytes' && Math.abs(value) >= 1_048_576) return `${(value / 1_048_576).toFixed(1)} MiB`;
  if (m.unit === 'bytes' && Math.abs(value) >= 1_024) return `${(value / 1_024).toFixed(1)} KiB`;
  const digits = m.scale === 'absolute' || Math.abs(value) < 0.01 ? 4 : 2;
  const unit = m.unit === '' || m.unit === 'share' ? '' : ` ${m.unit}`;
  return `${value.toFixed(digits)}${unit}`;
}
