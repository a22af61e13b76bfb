import { describe, expect, it } from 'vitest';
import { parsePrometheusText } from '../../core/index.js';

describe('Prometheus text exposition parsing', () => {
  it('reads names, labels with escapes, special values and timestamps; skips comments and blank lines', () => {
    const text = [
      '# HELP requests_total Requests.',
      '# TYPE requests_total counter',
      'requests_total{route="/rank",code="200"} 1027',
      '',
      'requests_total{route="/a \\"quoted\\" \\\\ path\\nline",code="500",} 3 1700000000000',
      'process_cpu_seconds_total 12.5',
      'temperature{} -Inf',
      'ratio NaN',
      'up +Inf',
      'x_y:z 1e-3',
    ].join('\n');
    const { samples, badLines } = parsePrometheusText(text);
    expect(badLines).toEqual([]);
    expect(samples.map((s) => s.name)).toEqual(['requests_total', 'requests_total', 'process_cpu_seconds_total', 'temperature', 'ratio', 'up', 'x_y:z']);
    expect(samples[0]).toEqual({ name: 'requests_total', labels: { route: '/rank', code: '200' }, value: 1027 });
    expect(samples[1]!.labels).toEqual({ route: '/a "quoted" \\ path\nline', code: '500' });
    expect(samples[1]!.value).toBe(3);
    expect(samples[2]!.value).toBe(12.5);
    expect(samples[3]!.value).toBe(Number.NEGATIVE_INFINITY);
    expect(samples[4]!.value).toBeNaN();
    expect(samples[5]!.value).toBe(Number.POSITIVE_INFINITY);
    expect(samples[6]!.value).toBeCloseTo(0.001, 12);
  });

  it('reports the lines it cannot read by number and never guesses a value for them', () => {
    const text = ['good 1', '{no_name="x"} 2', 'bad{label=unquoted} 3', 'unterminated{a="x} 4', 'novalue', 'word{a="b"} notanumber', 'good 2'].join('\n');
    const { samples, badLines } = parsePrometheusText(text);
    expect(samples).toEqual([
      { name: 'good', labels: {}, value: 1 },
      { name: 'good', labels: {}, value: 2 },
    ]);
    expect(badLines).toEqual([2, 3, 4, 5, 6]);
  });
});
