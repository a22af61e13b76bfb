/** Reading one counter of a service, as tests, benchmarks and the demo do: the sum over its label sets (those with `labels`). */
import { parsePrometheusText } from '../../core/prometheus-text.js'; // leaf import: see faults.ts

export async function metricTotal(url: string, name: string, labels: Readonly<Record<string, string>> = {}): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text();
  return parsePrometheusText(text)
    .samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))
    .reduce((sum, s) => sum + s.value, 0);
}
